package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

type result struct {
	OK    bool      `json:"ok"`
	Task  *taskJSON `json:"task"`
	Tasks []taskJSON
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
}

func newCLI(t *testing.T, sourcesYAML string) *cli {
	dir := t.TempDir()
	conf := filepath.Join(dir, "config.yaml")
	body := "actor: alice\naudit_log: " + filepath.Join(dir, "audit.jsonl") + "\nsources:\n" + sourcesYAML
	if err := os.WriteFile(conf, []byte(strings.ReplaceAll(body, "DIR", dir)), 0o600); err != nil {
		t.Fatal(err)
	}
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

func TestAgentAndOperatorContract(t *testing.T) {
	c := newCLI(t, sqliteSource)
	created := c.run(0, "create", "--title", "Design VPC module", "--priority", "high", "--class", "EXPEDITE")
	id := created.Task.PageID
	if created.Task.Status != "pending" || created.Task.Class != "EXPEDITE" || created.Task.Priority != model.PriorityHigh {
		t.Fatalf("created: %+v", created.Task)
	}
	if next := c.run(0, "next", "--agent-name", "SANDMAN"); next.Task == nil || next.Task.PageID != id {
		t.Fatalf("next = %+v", next.Task)
	}
	claim := c.run(0, "claim", "--task", id, "--agent-name", "SANDMAN", "--run-id", "run-1")
	tok := claim.Task.LockToken
	if claim.Task.ClaimedBy != "AGENT" || claim.Task.Agent != "SANDMAN" || claim.Task.AgentRun != "run-1" || tok == "" || claim.Task.LockExpires == "" {
		t.Fatalf("claim: %+v", claim.Task)
	}
	if r := c.run(2, "claim", "--page-id", id, "--agent-name", "ORACLE"); r.Error.Code != "CONFLICT" {
		t.Fatalf("claim of a held task: %+v", r.Error)
	}
	if r := c.run(0, "next", "--agent-name", "ORACLE"); r.Task != nil {
		t.Fatalf("next with nothing eligible must print task null, got %+v", r.Task)
	}
	c.run(0, "heartbeat", "--task", id, "--lock-token", tok)

	released := c.run(0, "release", "--force", "--yes", "--task", id, "--reason", "agent wedged")
	if released.Task.Status != "pending" || released.Task.LockToken != "" {
		t.Fatalf("after release --force: %+v", released.Task)
	}
	if r := c.run(4, "heartbeat", "--task", id, "--lock-token", tok); r.Error.Code != "LOST_LOCK" {
		t.Fatalf("heartbeat after force-release: %+v", r.Error)
	}
	if r := c.run(4, "complete", "--task", id, "--lock-token", tok); r.Error.Code != "LOST_LOCK" {
		t.Fatalf("complete after force-release: %+v", r.Error)
	}

	mine := c.run(0, "claim", "--agent-name", "ORACLE") // no --task: the next eligible one
	if mine.Task == nil || mine.Task.PageID != id {
		t.Fatalf("claim without --task = %+v", mine.Task)
	}
	c.run(2, "takeover", "--yes", "--task", id, "--expect-token", tok) // stale expectation
	taken := c.run(0, "takeover", "--yes", "--task", id, "--expect-token", mine.Task.LockToken)
	if taken.Task.ClaimedBy != "HUMAN" || taken.Task.Agent != "HUMAN:alice" {
		t.Fatalf("takeover: %+v", taken.Task)
	}
	handed := c.run(0, "handoff", "--yes", "--task", id, "--to", "CASSIAN", "--reason", "has context", "--priority", "urgent")
	if handed.Task.ReservedFor != "CASSIAN" {
		t.Fatalf("handoff: %+v", handed.Task)
	}
	c.run(0, "cancel", "--force", "--yes", "--task", id, "--reason", "superseded")
	if got := c.run(0, "get", "--task", id); got.Task.State != "canceled" || got.Task.Reason != "superseded" {
		t.Fatalf("after cancel --force: %+v", got.Task)
	}

	recs, err := sources.ReadJournal(filepath.Join(c.dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var applied []string
	for _, r := range recs {
		if r.Actor != "alice" {
			t.Fatalf("audit record without the configured actor: %+v", r)
		}
		if r.Result == "applied" {
			applied = append(applied, string(r.Action))
		}
	}
	if strings.Join(applied, ",") != "force-release,takeover,handoff,cancel" {
		t.Fatalf("applied actions in the audit log: %v", applied)
	}
}

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
	if got := c.run(0, "get", "--task", id); got.Task.LockToken != tok || got.Task.State != "claimed" {
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
