package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

func TestAnIDOneSourceHoldsNeedsNoSource(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource+"  - name: locks\n    kind: lockdir\n    path: DIR/locks\n")
	mine := c.Run(0, "--source", "local", "create", "--title", "only in the queue").Task.PageID
	theirs := c.Run(0, "--source", "locks", "create", "--title", "only in the lock directory").Task.PageID

	for id, src := range map[string]string{mine: "local", theirs: "locks"} {
		if got := c.Run(0, "get", "--task", id).Task; got.Source != src || got.PageID != id {
			t.Errorf("get %s without --source: %+v, want it from %s", id, got, src)
		}
		var out, errOut bytes.Buffer
		code := cmdtest.Program(context.Background(), []string{"--config", c.Conf, "history", "--task", id}, strings.NewReader(""), &out, &errOut)
		var h struct {
			Source string `json:"source"`
		}
		if err := json.Unmarshal(out.Bytes(), &h); code != 0 || err != nil || h.Source != src {
			t.Errorf("history %s without --source: exit %d, %s%s, want it from %s", id, code, out.String(), errOut.String(), src)
		}
	}
	listed := map[string]string{}
	for _, task := range c.Run(0, "list").Tasks {
		listed[task.PageID] = task.Source
	}
	if listed[mine] != "local" || listed[theirs] != "locks" {
		t.Errorf("list without --source: %v, want both sources' tasks", listed)
	}

	cliCopy(c, 0, "--from", "local", "--to", "locks")
	for _, cmd := range []string{"get", "history"} {
		r := c.Run(3, cmd, "--task", mine)
		if r.Error.Code != "MISCONFIGURED" || !strings.Contains(r.Error.Message, "local and locks") || !strings.Contains(r.Error.Message, "--source") {
			t.Errorf("%s of an id two sources hold: %+v", cmd, r.Error)
		}
	}
	if r := c.Run(3, "get", "--task", "no-such-task"); !strings.Contains(r.Error.Message, "local, locks") {
		t.Errorf("get of an id nobody holds: %+v", r.Error)
	}
}
