package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"
)

// An operator command from cron has /dev/null for stdin: a character
// device, but no terminal. It is told to pass --yes, and nothing is done.
func TestOverrideFromCronWithDevNullIsToldToPassYes(t *testing.T) {
	c := newCLI(t, sqliteSource)
	id := c.run(0, "create", "--title", "nightly rebuild").Task.PageID
	c.run(0, "claim", "--task", id, "--agent-name", "worker-7")
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"--config", c.conf, "takeover", "--task", id}, devnull, &out, &errOut)
	var r result
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if code != 3 || r.Error.Code != "MISCONFIGURED" || !bytes.Contains([]byte(r.Error.Message), []byte("pass --yes")) {
		t.Fatalf("takeover with stdin /dev/null exited %d: %s", code, out.String())
	}
	if got := c.run(0, "get", "--task", id); got.Task.Agent != "worker-7" {
		t.Fatalf("the refused takeover changed the task: %+v", got.Task)
	}
}

// -o table is honoured or refused, never ignored: the commands that answer
// in JSON only refuse it before anything runs.
func TestTableOutputIsRefusedWhereTheAnswerIsJSONOnly(t *testing.T) {
	c := newCLI(t, sqliteSource)
	id := c.run(0, "create", "--title", "left alone").Task.PageID
	for _, args := range [][]string{
		{"migrate"}, {"config", "show"}, {"config", "path"}, {"version"}, {"sweep", "--dry-run"},
		{"release", "--force", "--filter", "left", "--reason", "r", "--dry-run"},
		{"cancel", "--force", "--filter", "left", "--reason", "r", "--yes"},
	} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), append([]string{"--config", c.conf, "-o", "table"}, args...), bytes.NewReader(nil), &out, &errOut)
		if code != 3 || !bytes.Contains(errOut.Bytes(), []byte("drop -o table")) || out.Len() != 0 {
			t.Errorf("claimdeck -o table %v exited %d: stdout %q stderr %q", args, code, out.String(), errOut.String())
		}
	}
	if got := c.run(0, "get", "--task", id); got.Task.Status != "READY" {
		t.Fatalf("a refused command changed the task: %+v", got.Task)
	}
}
