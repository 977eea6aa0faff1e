package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/model"
)

func TestBadInputExitsMisconfigured(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	id := c.Run(0, "create", "--title", "x").Task.PageID
	tok := c.Run(0, "claim", "--task", id, "--agent-name", "a").Task.LockToken
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
		r := c.Run(3, tc.args...)
		if r.Error.Code != "MISCONFIGURED" || !strings.Contains(r.Error.Message, tc.want) {
			t.Errorf("claimdeck %v: %+v, want MISCONFIGURED naming %s", tc.args, r.Error, tc.want)
		}
	}
	if got := c.Run(0, "get", "--task", id); got.Task.LockToken != model.ShownToken(tok) || got.Task.State != "claimed" {
		t.Fatalf("bad input changed the task: %+v", got.Task)
	}
	var out bytes.Buffer
	if code := cmdtest.Program(context.Background(), []string{"--config", filepath.Join(c.Dir, "missing.yaml"), "list"}, nil, &out, &out); code != 3 {
		t.Fatalf("a missing config file exits %d, want 3: %s", code, out.String())
	}
	if !c.Run(0, "--read-only", "list").OK {
		t.Fatal("read-only list")
	}
	if r := c.Run(3, "--read-only", "takeover", "--yes", "--task", id); !strings.Contains(r.Error.Message, "read-only") {
		t.Fatalf("takeover in read-only mode: %+v", r.Error)
	}
}

func TestUnreachableBackendIsAPIError(t *testing.T) {
	c := cmdtest.NewCLI(t, "  - name: gov\n    kind: postgres\n    dsn: postgres://agent:hunter2@127.0.0.1:1/q?connect_timeout=1\n")
	r := c.Run(5, "list")
	if r.Error.Code != "API_ERROR" || strings.Contains(r.Error.Message, "hunter2") {
		t.Fatalf("unreachable PostgreSQL: %+v", r.Error)
	}
	var out bytes.Buffer
	cmdtest.Program(context.Background(), []string{"--config", c.Conf, "config", "show"}, nil, &out, &out)
	if strings.Contains(out.String(), "hunter2") || !strings.Contains(out.String(), "[redacted]") {
		t.Fatalf("config show leaks or does not redact the DSN password: %s", out.String())
	}
}

func TestLockdirSource(t *testing.T) {
	c := cmdtest.NewCLI(t, "  - name: locks\n    kind: lockdir\n    path: DIR/.locks\n")
	id := c.Run(0, "create", "--title", "design-vpc-module").Task.PageID
	claim := c.Run(0, "claim", "--task", id, "--agent-name", "terraform-engineer")
	if claim.Task.LockToken == "" {
		t.Fatalf("claim: %+v", claim.Task)
	}
	if _, err := os.Stat(filepath.Join(c.Dir, ".locks", id+".lock")); err != nil {
		t.Fatalf("seed 004's lock file is not there: %v", err)
	}
	c.Run(2, "claim", "--task", id, "--agent-name", "other")
	c.Run(0, "complete", "--task", id, "--lock-token", claim.Task.LockToken)
	if _, err := os.Stat(filepath.Join(c.Dir, ".locks", id+".done")); err != nil {
		t.Fatalf("no .done file after complete: %v", err)
	}
}
