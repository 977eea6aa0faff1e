package rootcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/model"
)

type result struct {
	OK    bool              `json:"ok"`
	Task  *cmdutil.TaskJSON `json:"task"`
	Tasks []cmdutil.TaskJSON
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// cli runs claimdeck in-process against one configuration file.
type cli struct {
	t    *testing.T
	conf string
	dir  string
	kind string // the backend, where a test depends on it
}

func newCLI(t *testing.T, sourcesYAML string) *cli {
	dir := t.TempDir()
	// What claimdeck keeps between runs (the sweep record, the node health
	// record) stays in the test's directory, never the user's.
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	conf := filepath.Join(dir, "config.yaml")
	body := "actor: alice\naudit_log: " + filepath.Join(dir, "audit.jsonl") + "\nsources:\n" + sourcesYAML
	if err := os.WriteFile(conf, []byte(strings.ReplaceAll(body, "DIR", dir)), 0o600); err != nil {
		t.Fatal(err)
	}
	// Make the sources' files as a team would once, with --create.
	run(context.Background(), []string{"--config", conf, "--create", "doctor"}, strings.NewReader(""), io.Discard, io.Discard)
	return &cli{t: t, conf: conf, dir: dir}
}

func (c *cli) run(wantExit int, args ...string) result {
	c.t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), append([]string{"--config", c.conf}, args...), strings.NewReader(""), &out, &errOut)
	var r result
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		c.t.Fatalf("claimdeck %v: stdout is not one JSON document: %v\n%s\nstderr: %s", args, err, out.String(), errOut.String())
	}
	if code != wantExit {
		c.t.Fatalf("claimdeck %v exited %d, want %d: %s", args, code, wantExit, out.String())
	}
	if r.OK != (wantExit == 0) {
		c.t.Fatalf("claimdeck %v: ok=%v with exit %d", args, r.OK, code)
	}
	return r
}

const sqliteSource = "  - name: local\n    kind: sqlite\n    path: DIR/queue.db\n"

func TestBadInputExitsMisconfigured(t *testing.T) {
	c := newCLI(t, sqliteSource)
	id := c.run(0, "create", "--title", "x").Task.PageID
	tok := c.run(0, "claim", "--task", id, "--agent-name", "a").Task.LockToken
	cases := []struct {
		args []string
		want string // a word the message must contain
	}{
		{[]string{"claim", "--task", id, "--agnet-name", "a"}, "agnet-name"},
		{[]string{"heartbeat", "--task", id}, "--lock-token"},
		{[]string{"heartbeat", "--task", id, "--lock-token", "not-a-uuid"}, "--lock-token"},
		{[]string{"block", "--task", id, "--lock-token", tok, "--reason", "r", "--next-check-at", "tomorrow"}, "--next-check-at"},
		{[]string{"--source", "nope", "list"}, "--source"},
		{[]string{"create", "--title", "t", "--priority", "asap"}, "--priority"},
		{[]string{"list", "--status", "wip"}, "--status"},
		{[]string{"release", "--task", id, "--yes"}, "--force"},
		{[]string{"--output", "yaml", "list"}, "--output"},
		{[]string{"frobnicate"}, "frobnicate"},
	}
	for _, tc := range cases {
		r := c.run(3, tc.args...)
		if r.Error.Code != "MISCONFIGURED" || !strings.Contains(r.Error.Message, tc.want) {
			t.Errorf("claimdeck %v: %+v, want MISCONFIGURED naming %s", tc.args, r.Error, tc.want)
		}
	}
	if got := c.run(0, "get", "--task", id); got.Task.LockToken != model.ShownToken(tok) || got.Task.State != "claimed" {
		t.Fatalf("bad input changed the task: %+v", got.Task)
	}
	var out bytes.Buffer
	if code := run(context.Background(), []string{"--config", filepath.Join(c.dir, "missing.yaml"), "list"}, nil, &out, &out); code != 3 {
		t.Fatalf("a missing config file exits %d, want 3: %s", code, out.String())
	}
	if !c.run(0, "--read-only", "list").OK {
		t.Fatal("read-only list")
	}
	if r := c.run(3, "--read-only", "takeover", "--yes", "--task", id); !strings.Contains(r.Error.Message, "read-only") {
		t.Fatalf("takeover in read-only mode: %+v", r.Error)
	}
}

func TestUnreachableBackendIsAPIError(t *testing.T) {
	c := newCLI(t, "  - name: gov\n    kind: postgres\n    dsn: postgres://agent:hunter2@127.0.0.1:1/q?connect_timeout=1\n")
	r := c.run(5, "list")
	if r.Error.Code != "API_ERROR" || strings.Contains(r.Error.Message, "hunter2") {
		t.Fatalf("unreachable PostgreSQL: %+v", r.Error)
	}
	var out bytes.Buffer
	run(context.Background(), []string{"--config", c.conf, "config", "show"}, nil, &out, &out)
	if strings.Contains(out.String(), "hunter2") || !strings.Contains(out.String(), "[redacted]") {
		t.Fatalf("config show leaks or does not redact the DSN password: %s", out.String())
	}
}

func TestLockdirSource(t *testing.T) {
	c := newCLI(t, "  - name: locks\n    kind: lockdir\n    path: DIR/.locks\n")
	id := c.run(0, "create", "--title", "design-vpc-module").Task.PageID
	claim := c.run(0, "claim", "--task", id, "--agent-name", "terraform-engineer")
	if claim.Task.LockToken == "" {
		t.Fatalf("claim: %+v", claim.Task)
	}
	if _, err := os.Stat(filepath.Join(c.dir, ".locks", id+".lock")); err != nil {
		t.Fatalf("seed 004's lock file is not there: %v", err)
	}
	c.run(2, "claim", "--task", id, "--agent-name", "other")
	c.run(0, "complete", "--task", id, "--lock-token", claim.Task.LockToken)
	if _, err := os.Stat(filepath.Join(c.dir, ".locks", id+".done")); err != nil {
		t.Fatalf("no .done file after complete: %v", err)
	}
}
