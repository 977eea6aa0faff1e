package rootcmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/sqlstore"
)

// backend is one kind of source the contract runs against.
type backend struct {
	name string
	// yaml returns the `sources:` entry of a fresh, empty queue.
	yaml func(t *testing.T) string
}

var pgTables atomic.Int64

// contractBackends are every backend the ntask contract must hold on.
// PostgreSQL skips outside CI when no server is configured, and fails in CI.
var contractBackends = []backend{
	{"sqlite", func(*testing.T) string { return sqliteSource }},
	{"lockdir", func(*testing.T) string { return "  - name: local\n    kind: lockdir\n    path: DIR/.locks\n" }},
	{"notion", func(t *testing.T) string { yaml, _ := notionSource(t); return yaml }},
	{"postgres", func(t *testing.T) string {
		dsn := os.Getenv("CLAIMDECK_TEST_PG_DSN")
		if dsn == "" {
			if os.Getenv("CI") == "true" {
				t.Fatal("CI=true but CLAIMDECK_TEST_PG_DSN is not set: .ci/run must start PostgreSQL")
			}
			t.Skip("PostgreSQL contract skipped: set CLAIMDECK_TEST_PG_DSN (bash .ci/run starts a throwaway cluster and sets it)")
		}
		table := fmt.Sprintf("contract_%d_%d", os.Getpid(), pgTables.Add(1))
		st, err := sqlstore.Open(context.Background(), sqlstore.Config{Name: "local", Driver: "postgres", DSN: dsn, Table: table, Create: true})
		if err != nil {
			t.Fatal(err)
		}
		st.Close()
		return fmt.Sprintf("  - name: local\n    kind: postgres\n    dsn_env: CLAIMDECK_TEST_PG_DSN\n    table: %s\n", table)
	}},
}

// TestContract runs every agent and operator command against every backend
// and checks the JSON shape and exit status of the ntask contract,
// including its error paths.
func TestContract(t *testing.T) {
	for _, b := range contractBackends {
		t.Run(b.name, func(t *testing.T) {
			c := newCLI(t, b.yaml(t))
			c.kind = b.name
			contract(t, c)
		})
	}
}

func contract(t *testing.T, c *cli) {
	if r := c.run(0, "next", "--agent-name", "SANDMAN"); r.Task != nil {
		t.Fatalf("next on an empty queue = %+v, want task null", r.Task)
	}
	created := c.run(0, "create", "--title", "Design VPC module", "--priority", "high", "--class", "EXPEDITE")
	id := created.Task.PageID
	if id == "" || created.Task.State != "queued" || created.Task.Class != "EXPEDITE" || created.Task.Priority != 3 {
		t.Fatalf("create: %+v", created.Task)
	}
	low := c.run(0, "create", "--title", "Write docs", "--priority", "low").Task.PageID
	if l := c.run(0, "list"); len(l.Tasks) != 2 || l.Tasks[0].PageID != id || l.Tasks[1].PageID != low {
		t.Fatalf("list is not in pull order: %+v", l.Tasks)
	}
	if l := c.run(0, "list", "--status", "claimed"); len(l.Tasks) != 0 {
		t.Fatalf("list --status claimed on a fresh queue: %+v", l.Tasks)
	}
	if next := c.run(0, "next", "--agent-name", "SANDMAN"); next.Task == nil || next.Task.PageID != id {
		t.Fatalf("next = %+v, want %s", next.Task, id)
	}

	claim := c.run(0, "claim", "--task", id, "--agent-name", "SANDMAN", "--run-id", "run-1")
	tok := claim.Task.LockToken
	if claim.Task.ClaimedBy != "AGENT" || claim.Task.Agent != "SANDMAN" || claim.Task.AgentRun != "run-1" || tok == "" || claim.Task.LockExpires == "" {
		t.Fatalf("claim: %+v", claim.Task)
	}
	if r := c.run(2, "claim", "--page-id", id, "--agent-name", "ORACLE"); r.Error.Code != "CONFLICT" || r.Error.Message == "" {
		t.Fatalf("claim of a held task: %+v", r.Error)
	}
	if r := c.run(0, "next", "--agent-name", "ORACLE"); r.Task == nil || r.Task.PageID != low {
		t.Fatalf("next while the first is held = %+v, want %s", r.Task, low)
	}
	if hb := c.run(0, "heartbeat", "--task", id, "--lock-token", tok); hb.Task.LockToken != tok {
		t.Fatalf("heartbeat: %+v", hb.Task)
	}
	c.run(0, "comment", "--task", id, "--agent-name", "SANDMAN", "picked up; plan in the PR")
	if r := c.run(2, "update", "--task", id, "--title", "not mine"); r.Error.Code != "CONFLICT" {
		t.Fatalf("update of a held task without its token: %+v", r.Error)
	}
	upd := c.run(0, "update", "--task", id, "--lock-token", tok, "--title", "Design VPC module (v2)")
	if upd.Task.Title != "Design VPC module (v2)" || upd.Task.LockToken != tok {
		t.Fatalf("update by the holder: %+v", upd.Task)
	}
	blocked := c.run(0, "block", "--task", id, "--lock-token", tok, "--reason", "needs credentials",
		"--unblock-action", "ask ops", "--next-check-at", "2030-01-01T09:00:00Z")
	if blocked.Task.State != "blocked" || blocked.Task.Reason != "needs credentials" || blocked.Task.LockToken != "" || blocked.Task.ClaimedBy != "" {
		t.Fatalf("block: %+v", blocked.Task)
	}
	if r := c.run(4, "heartbeat", "--task", id, "--lock-token", tok); r.Error.Code != "LOST_LOCK" {
		t.Fatalf("heartbeat after block: %+v", r.Error)
	}
	if back := c.run(0, "update", "--task", id, "--status", "READY"); back.Task.State != "queued" {
		t.Fatalf("update --status READY: %+v", back.Task)
	}

	again := c.run(0, "claim", "--task", id, "--agent-name", "SANDMAN", "--run-id", "run-2").Task.LockToken
	released := c.run(0, "release", "--force", "--yes", "--task", id, "--reason", "agent wedged")
	if released.Task.State != "queued" || released.Task.LockToken != "" {
		t.Fatalf("after release --force: %+v", released.Task)
	}
	for _, cmd := range []string{"heartbeat", "complete", "review", "fail"} {
		if r := c.run(4, cmd, "--task", id, "--lock-token", again); r.Error.Code != "LOST_LOCK" {
			t.Fatalf("%s after force-release: %+v", cmd, r.Error)
		}
	}
	if r := c.run(4, "cancel", "--task", id, "--lock-token", again, "--reason", "x"); r.Error.Code != "LOST_LOCK" {
		t.Fatalf("cancel by a zombie: %+v", r.Error)
	}

	mine := c.run(0, "claim", "--agent-name", "ORACLE") // no --task: the next eligible one
	if mine.Task == nil || mine.Task.PageID != id {
		t.Fatalf("claim without --task = %+v", mine.Task)
	}
	c.run(2, "takeover", "--yes", "--task", id, "--expect-token", again) // a stale expectation
	taken := c.run(0, "takeover", "--yes", "--task", id, "--expect-token", mine.Task.LockToken)
	if taken.Task.ClaimedBy != "HUMAN" || taken.Task.Agent != "HUMAN:alice" {
		t.Fatalf("takeover: %+v", taken.Task)
	}
	if r := c.run(0, "next", "--agent-name", "ORACLE"); r.Task == nil || r.Task.PageID != low {
		t.Fatalf("a human-held task must never be pulled; next = %+v", r.Task)
	}
	handed := c.run(0, "handoff", "--yes", "--task", id, "--to", "CASSIAN", "--reason", "has context", "--priority", "urgent")
	if handed.Task.ReservedFor != "CASSIAN" || handed.Task.State != "queued" {
		t.Fatalf("handoff: %+v", handed.Task)
	}
	if r := c.run(2, "claim", "--task", id, "--agent-name", "ORACLE"); r.Error.Code != "CONFLICT" {
		t.Fatalf("claim of a task reserved for another agent: %+v", r.Error)
	}
	cas := c.run(0, "claim", "--task", id, "--agent-name", "CASSIAN").Task.LockToken
	if r := c.run(0, "review", "--task", id, "--lock-token", cas, "--artifacts", "pr/7"); r.Task.State != "review" || r.Task.Artifacts != "pr/7" {
		t.Fatalf("review: %+v", r.Task)
	}
	c.run(0, "cancel", "--force", "--yes", "--task", id, "--reason", "superseded")
	got := c.run(0, "get", "--task", id)
	if got.Task.State != "canceled" || got.Task.Reason != "superseded" {
		t.Fatalf("after cancel --force: %+v", got.Task)
	}

	tl := c.run(0, "claim", "--task", low, "--agent-name", "ORACLE").Task.LockToken
	if r := c.run(0, "complete", "--task", low, "--lock-token", tl, "--artifacts", "docs/README.md"); r.Task.State != "done" || r.Task.LockToken != "" {
		t.Fatalf("complete: %+v", r.Task)
	}
	if r := c.run(0, "next", "--agent-name", "ORACLE"); r.Task != nil {
		t.Fatalf("next with every task finished = %+v, want null", r.Task)
	}
	subtasks(t, c)
	if r := c.run(0, "doctor"); !r.OK {
		t.Fatalf("doctor on a working %s source: %+v", c.conf, r)
	}
	if r := c.run(0, "version"); !r.OK {
		t.Fatal("version")
	}
	if r := c.run(3, "--read-only", "claim", "--task", low, "--agent-name", "x"); !strings.Contains(r.Error.Message, "read-only") {
		t.Fatalf("a claim in read-only mode: %+v", r.Error)
	}
	if r := c.run(3, "get", "--task", "no-such-task"); r.Error.Code != "MISCONFIGURED" || !strings.Contains(r.Error.Message, "no such task") {
		t.Fatalf("get of an unknown task: %+v", r.Error)
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

func TestDoctorReportsEachFailure(t *testing.T) {
	t.Setenv("CLAIMDECK_TEST_EMPTY", "")
	c := newCLI(t, sqliteSource+
		"  - name: gov\n    kind: postgres\n    dsn: postgres://agent:hunter2@127.0.0.1:1/q?connect_timeout=1\n"+
		"  - name: nodsn\n    kind: postgres\n    dsn_env: CLAIMDECK_TEST_EMPTY\n"+
		"  - name: notadir\n    kind: lockdir\n    path: DIR/config.yaml\n")
	var out strings.Builder
	code := run(context.Background(), []string{"--config", c.conf, "doctor"}, strings.NewReader(""), &out, &out)
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
	if _, err := os.Stat(filepath.Join(c.dir, "queue.db")); err != nil {
		t.Fatalf("the sqlite source was not even opened: %v", err)
	}
}

// subtasks: complete with an open sub-task is INCOMPLETE_SUBTASKS (exit 3)
// where the backend has sub-tasks, and --parent is refused where it has not.
func subtasks(t *testing.T, c *cli) {
	epic := c.run(0, "create", "--title", "epic").Task.PageID
	if c.kind == "lockdir" || c.kind == "notion" {
		if r := c.run(3, "create", "--title", "child", "--parent", epic); r.Error.Code != "MISCONFIGURED" {
			t.Fatalf("--parent on a lock directory: %+v", r.Error)
		}
		return
	}
	child := c.run(0, "create", "--title", "child", "--parent", epic).Task
	if child.Parent != epic {
		t.Fatalf("sub-task: %+v", child)
	}
	tok := c.run(0, "claim", "--task", epic, "--agent-name", "SANDMAN").Task.LockToken
	r := c.run(3, "complete", "--task", epic, "--lock-token", tok)
	if r.Error.Code != "INCOMPLETE_SUBTASKS" {
		t.Fatalf("complete with an open sub-task: %+v", r.Error)
	}
	if g := c.run(0, "get", "--task", epic); g.Task.OpenSubs != 1 || g.Task.LockToken != model.ShownToken(tok) {
		t.Fatalf("after the refused completion: %+v", g.Task)
	}
	listed := func(state string) {
		t.Helper()
		subs := c.run(0, "get", "--task", epic).Task.Subtasks
		if len(subs) != 1 || subs[0].PageID != child.PageID || subs[0].Title != "child" || subs[0].State != state {
			t.Fatalf("get lists the sub-tasks %+v, want child %s", subs, state)
		}
	}
	listed("queued")
	ct := c.run(0, "claim", "--task", child.PageID, "--agent-name", "ORACLE").Task.LockToken
	c.run(0, "complete", "--task", child.PageID, "--lock-token", ct)
	listed("done")
	c.run(0, "complete", "--task", epic, "--lock-token", tok)
}
