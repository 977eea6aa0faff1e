package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

func TestContract(t *testing.T) {
	for _, b := range cmdtest.ContractBackends {
		t.Run(b.Name, func(t *testing.T) {
			c := cmdtest.NewCLI(t, b.Yaml(t))
			c.Kind = b.Name
			contract(t, c)
		})
	}
}

func contract(t *testing.T, c *cmdtest.CLI) {
	if r := c.Run(0, "next", "--agent-name", "SANDMAN"); r.Task != nil {
		t.Fatalf("next on an empty queue = %+v, want task null", r.Task)
	}
	created := c.Run(0, "create", "--title", "Design VPC module", "--priority", "high", "--class", "EXPEDITE")
	id := created.Task.PageID
	if id == "" || created.Task.State != "queued" || created.Task.Class != "EXPEDITE" || created.Task.Priority != 3 {
		t.Fatalf("create: %+v", created.Task)
	}
	low := c.Run(0, "create", "--title", "Write docs", "--priority", "low").Task.PageID
	if l := c.Run(0, "list"); len(l.Tasks) != 2 || l.Tasks[0].PageID != id || l.Tasks[1].PageID != low {
		t.Fatalf("list is not in pull order: %+v", l.Tasks)
	}
	if l := c.Run(0, "list", "--status", "claimed"); len(l.Tasks) != 0 {
		t.Fatalf("list --status claimed on a fresh queue: %+v", l.Tasks)
	}
	if next := c.Run(0, "next", "--agent-name", "SANDMAN"); next.Task == nil || next.Task.PageID != id {
		t.Fatalf("next = %+v, want %s", next.Task, id)
	}

	claim := c.Run(0, "claim", "--task", id, "--agent-name", "SANDMAN", "--run-id", "run-1")
	tok := claim.Task.LockToken
	if claim.Task.ClaimedBy != "AGENT" || claim.Task.Agent != "SANDMAN" || claim.Task.AgentRun != "run-1" || tok == "" || claim.Task.LockExpires == "" {
		t.Fatalf("claim: %+v", claim.Task)
	}
	if r := c.Run(2, "claim", "--page-id", id, "--agent-name", "ORACLE"); r.Error.Code != "CONFLICT" || r.Error.Message == "" {
		t.Fatalf("claim of a held task: %+v", r.Error)
	}
	if r := c.Run(0, "next", "--agent-name", "ORACLE"); r.Task == nil || r.Task.PageID != low {
		t.Fatalf("next while the first is held = %+v, want %s", r.Task, low)
	}
	if hb := c.Run(0, "heartbeat", "--task", id, "--lock-token", tok); hb.Task.LockToken != tok {
		t.Fatalf("heartbeat: %+v", hb.Task)
	}
	c.Run(0, "comment", "--task", id, "--agent-name", "SANDMAN", "picked up; plan in the PR")
	if r := c.Run(2, "update", "--task", id, "--title", "not mine"); r.Error.Code != "CONFLICT" {
		t.Fatalf("update of a held task without its token: %+v", r.Error)
	}
	upd := c.Run(0, "update", "--task", id, "--lock-token", tok, "--title", "Design VPC module (v2)")
	if upd.Task.Title != "Design VPC module (v2)" || upd.Task.LockToken != tok {
		t.Fatalf("update by the holder: %+v", upd.Task)
	}
	blocked := c.Run(0, "block", "--task", id, "--lock-token", tok, "--reason", "needs credentials",
		"--unblock-action", "ask ops", "--next-check-at", "2030-01-01T09:00:00Z")
	if blocked.Task.State != "blocked" || blocked.Task.Reason != "needs credentials" || blocked.Task.LockToken != "" || blocked.Task.ClaimedBy != "" {
		t.Fatalf("block: %+v", blocked.Task)
	}
	if r := c.Run(4, "heartbeat", "--task", id, "--lock-token", tok); r.Error.Code != "LOST_LOCK" {
		t.Fatalf("heartbeat after block: %+v", r.Error)
	}
	// Blocked → Ready is unblock, a person's audited action, never update.
	if r := c.Run(3, "update", "--task", id, "--status", "READY"); r.Error.Code != "MISCONFIGURED" || !strings.Contains(r.Error.Message, "unblock") {
		t.Fatalf("update --status READY of a blocked task: %+v", r.Error)
	}
	if back := c.Run(0, "unblock", "--task", id, "--yes"); back.Task.State != "queued" {
		t.Fatalf("unblock: %+v", back.Task)
	}

	again := c.Run(0, "claim", "--task", id, "--agent-name", "SANDMAN", "--run-id", "run-2").Task.LockToken
	released := c.Run(0, "release", "--force", "--yes", "--task", id, "--reason", "agent wedged")
	if released.Task.State != "queued" || released.Task.LockToken != "" {
		t.Fatalf("after release --force: %+v", released.Task)
	}
	for _, cmd := range []string{"heartbeat", "complete", "review", "fail"} {
		if r := c.Run(4, cmd, "--task", id, "--lock-token", again); r.Error.Code != "LOST_LOCK" {
			t.Fatalf("%s after force-release: %+v", cmd, r.Error)
		}
	}
	if r := c.Run(4, "cancel", "--task", id, "--lock-token", again, "--reason", "x"); r.Error.Code != "LOST_LOCK" {
		t.Fatalf("cancel by a zombie: %+v", r.Error)
	}

	mine := c.Run(0, "claim", "--agent-name", "ORACLE") // no --task: the next eligible one
	if mine.Task == nil || mine.Task.PageID != id {
		t.Fatalf("claim without --task = %+v", mine.Task)
	}
	c.Run(2, "takeover", "--yes", "--task", id, "--expect-token", again) // a stale expectation
	taken := c.Run(0, "takeover", "--yes", "--task", id, "--expect-token", mine.Task.LockToken)
	if taken.Task.ClaimedBy != "HUMAN" || taken.Task.Agent != "HUMAN:alice" {
		t.Fatalf("takeover: %+v", taken.Task)
	}
	if r := c.Run(0, "next", "--agent-name", "ORACLE"); r.Task == nil || r.Task.PageID != low {
		t.Fatalf("a human-held task must never be pulled; next = %+v", r.Task)
	}
	handed := c.Run(0, "handoff", "--yes", "--task", id, "--to", "CASSIAN", "--reason", "has context", "--priority", "urgent")
	if handed.Task.ReservedFor != "CASSIAN" || handed.Task.State != "queued" {
		t.Fatalf("handoff: %+v", handed.Task)
	}
	if r := c.Run(2, "claim", "--task", id, "--agent-name", "ORACLE"); r.Error.Code != "CONFLICT" {
		t.Fatalf("claim of a task reserved for another agent: %+v", r.Error)
	}
	cas := c.Run(0, "claim", "--task", id, "--agent-name", "CASSIAN").Task.LockToken
	if r := c.Run(0, "review", "--task", id, "--lock-token", cas, "--artifacts", "pr/7"); r.Task.State != "review" || r.Task.Artifacts != "pr/7" {
		t.Fatalf("review: %+v", r.Task)
	}
	c.Run(0, "cancel", "--force", "--yes", "--task", id, "--reason", "superseded")
	got := c.Run(0, "get", "--task", id)
	if got.Task.State != "canceled" || got.Task.Reason != "superseded" {
		t.Fatalf("after cancel --force: %+v", got.Task)
	}

	tl := c.Run(0, "claim", "--task", low, "--agent-name", "ORACLE").Task.LockToken
	if r := c.Run(0, "complete", "--task", low, "--lock-token", tl, "--artifacts", "docs/README.md"); r.Task.State != "done" || r.Task.LockToken != "" {
		t.Fatalf("complete: %+v", r.Task)
	}
	if r := c.Run(0, "next", "--agent-name", "ORACLE"); r.Task != nil {
		t.Fatalf("next with every task finished = %+v, want null", r.Task)
	}
	subtasks(t, c)
	if r := c.Run(0, "doctor"); !r.OK {
		t.Fatalf("doctor on a working %s source: %+v", c.Conf, r)
	}
	if r := c.Run(0, "version"); !r.OK {
		t.Fatal("version")
	}
	if r := c.Run(3, "--read-only", "claim", "--task", low, "--agent-name", "x"); !strings.Contains(r.Error.Message, "read-only") {
		t.Fatalf("a claim in read-only mode: %+v", r.Error)
	}
	if r := c.Run(3, "get", "--task", "no-such-task"); r.Error.Code != "MISCONFIGURED" || !strings.Contains(r.Error.Message, "no such task") {
		t.Fatalf("get of an unknown task: %+v", r.Error)
	}

	recs, err := sources.ReadJournal(filepath.Join(c.Dir, "audit.jsonl"))
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
	if strings.Join(applied, ",") != "unblock,force-release,takeover,handoff,cancel" {
		t.Fatalf("applied actions in the audit log: %v", applied)
	}
}

func TestDoctorReportsEachFailure(t *testing.T) {
	t.Setenv("CLAIMDECK_TEST_EMPTY", "")
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource+
		"  - name: gov\n    kind: postgres\n    dsn: postgres://agent:hunter2@127.0.0.1:1/q?connect_timeout=1\n"+
		"  - name: nodsn\n    kind: postgres\n    dsn_env: CLAIMDECK_TEST_EMPTY\n"+
		"  - name: notadir\n    kind: lockdir\n    path: DIR/config.yaml\n")
	var out strings.Builder
	code := cmdtest.Program(context.Background(), []string{"--config", c.Conf, "doctor"}, strings.NewReader(""), &out, &out)
	if code != 3 {
		t.Fatalf("doctor with failing sources exits %d, want 3:\n%s", code, out.String())
	}
	report := out.String()
	for _, want := range []string{
		`"name":"local","kind":"sqlite","ok":true`,
		`"name":"gov","kind":"postgres","ok":false`,
		`{"check":"credentials","ok":false,"detail":"$CLAIMDECK_TEST_EMPTY is empty or unset"}`,
		`"name":"notadir","kind":"lockdir","ok":false`,
	} {
		if !strings.Contains(report, want) {
			t.Errorf("doctor report lacks %s:\n%s", want, report)
		}
	}
	if strings.Contains(report, "hunter2") {
		t.Fatalf("doctor printed a password:\n%s", report)
	}
	if _, err := os.Stat(filepath.Join(c.Dir, "queue.db")); err != nil {
		t.Fatalf("the sqlite source was not even opened: %v", err)
	}
}

// subtasks: complete with an open sub-task is INCOMPLETE_SUBTASKS (exit 3)
// where the backend has sub-tasks, and --parent is refused where it has not.
func subtasks(t *testing.T, c *cmdtest.CLI) {
	epic := c.Run(0, "create", "--title", "epic").Task.PageID
	if c.Kind == "lockdir" || c.Kind == "notion" {
		if r := c.Run(3, "create", "--title", "child", "--parent", epic); r.Error.Code != "MISCONFIGURED" {
			t.Fatalf("--parent on a lock directory: %+v", r.Error)
		}
		return
	}
	child := c.Run(0, "create", "--title", "child", "--parent", epic).Task
	if child.Parent != epic {
		t.Fatalf("sub-task: %+v", child)
	}
	tok := c.Run(0, "claim", "--task", epic, "--agent-name", "SANDMAN").Task.LockToken
	r := c.Run(3, "complete", "--task", epic, "--lock-token", tok)
	if r.Error.Code != "INCOMPLETE_SUBTASKS" {
		t.Fatalf("complete with an open sub-task: %+v", r.Error)
	}
	if g := c.Run(0, "get", "--task", epic); g.Task.OpenSubs != 1 || g.Task.LockToken != model.ShownToken(tok) {
		t.Fatalf("after the refused completion: %+v", g.Task)
	}
	listed := func(state string) {
		t.Helper()
		subs := c.Run(0, "get", "--task", epic).Task.Subtasks
		if len(subs) != 1 || subs[0].PageID != child.PageID || subs[0].Title != "child" || subs[0].State != state {
			t.Fatalf("get lists the sub-tasks %+v, want child %s", subs, state)
		}
	}
	listed("queued")
	ct := c.Run(0, "claim", "--task", child.PageID, "--agent-name", "ORACLE").Task.LockToken
	c.Run(0, "complete", "--task", child.PageID, "--lock-token", ct)
	listed("done")
	c.Run(0, "complete", "--task", epic, "--lock-token", tok)
}
