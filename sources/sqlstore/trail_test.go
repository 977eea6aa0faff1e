package sqlstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

func TestAgentStepsTrailSQLite(t *testing.T) {
	testAgentStepsTrail(t, openSQLite(t, Config{Create: true}))
}

func TestAgentStepsTrailPostgres(t *testing.T) {
	testAgentStepsTrail(t, openPG(t, Config{Create: true}))
}

// An agent's claim and block are one trail row each, its heartbeats none,
// and a finish refused for a stale token or open sub-tasks leaves no row.
func testAgentStepsTrail(t *testing.T, s *Store) {
	defer s.Close()
	ctx := context.Background()
	task, err := s.Create(ctx, sources.NewTask{Title: "Rotate keys"})
	if err != nil {
		t.Fatal(err)
	}
	held, err := s.ClaimNext(ctx, sources.ClaimRequest{Agent: "SANDMAN"})
	if err != nil || held == nil || held.ID != task.ID {
		t.Fatalf("claim-next: %v %v", held, err)
	}
	if _, err := s.Create(ctx, sources.NewTask{Title: "Open sub-task", Parent: task.ID}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := s.Heartbeat(ctx, task.ID, held.Claim().Token, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Finish(ctx, task.ID, "not-the-token", sources.Outcome{State: model.StateBlocked, Reason: "stale"}); model.CodeOf(err) != model.CodeLostLock {
		t.Fatalf("finish with a stale token: %v", err)
	}
	if _, err := s.Finish(ctx, task.ID, held.Claim().Token, sources.Outcome{State: model.StateDone}); model.CodeOf(err) != model.CodeIncompleteSubtasks {
		t.Fatalf("complete with an open sub-task: %v", err)
	}
	if _, err := s.Finish(ctx, task.ID, held.Claim().Token, sources.Outcome{State: model.StateBlocked, Reason: "needs credentials"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, e := range got.More().History {
		steps = append(steps, e.Action+" by "+e.Actor+" ("+e.Reason+")")
	}
	want := "claim by SANDMAN () | block by SANDMAN (needs credentials)"
	if strings.Join(steps, " | ") != want {
		t.Fatalf("trail:\n got %s\nwant %s", strings.Join(steps, " | "), want)
	}
}

// An agent that rescues its own dead claim again a moment later made two
// claims: the history `get` shows (model.Timeline) keeps both, since the
// fault suite's checker places claims whose answers were lost by it.
func TestOneAgentsRescuesTrailSQLite(t *testing.T) {
	s := openSQLite(t, Config{Create: true, Grace: time.Millisecond})
	defer s.Close()
	ctx := context.Background()
	task, err := s.Create(ctx, sources.NewTask{Title: "Rotate keys"})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		held, err := s.ClaimNext(ctx, sources.ClaimRequest{Agent: "agent-02", Lease: time.Millisecond})
		if err != nil || held == nil || held.ID != task.ID {
			t.Fatalf("claim-next: %v %v", held, err)
		}
		// past the lease and the grace, on the database's clock too
		time.Sleep(20 * time.Millisecond)
	}
	got, err := s.Get(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, e := range model.Timeline(got) {
		if e.Action == model.EventClaim || e.Action == model.ActionRescue {
			steps = append(steps, e.Action+" by "+e.Actor)
		}
	}
	want := "claim by agent-02 | rescue by agent-02 | rescue by agent-02"
	if strings.Join(steps, " | ") != want {
		t.Fatalf("the history shows\n %s\nwant\n %s", strings.Join(steps, " | "), want)
	}
}

func TestAuditIsAppendOnlySQLite(t *testing.T) {
	testAuditIsAppendOnly(t, openSQLite(t, Config{Create: true}))
}

func TestAuditIsAppendOnlyPostgres(t *testing.T) {
	testAuditIsAppendOnly(t, openPG(t, Config{Create: true}))
}

// The audit table is claimdeck's record: the database refuses to change
// or delete a row of it, whoever asks; on PostgreSQL each row names the
// role that wrote it, set by the server whatever the client sends.
func testAuditIsAppendOnly(t *testing.T, s *Store) {
	defer s.Close()
	ctx := context.Background()
	task, err := s.Create(ctx, sources.NewTask{Title: "audited"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "SANDMAN"}); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		"UPDATE claimdeck_audit SET actor = 'HUMAN:alice' WHERE task_id = $1",
		"DELETE FROM claimdeck_audit WHERE task_id = $1",
	} {
		if _, err := s.db.exec(ctx, stmt, task.ID); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Fatalf("%s: %v, want refused as append-only", stmt, err)
		}
	}
	got, err := s.Get(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.More().History) != 1 || got.More().History[0].Actor != "SANDMAN" {
		t.Fatalf("the trail changed: %+v", got.More().History)
	}
	if s.d.name != postgres.name {
		return
	}
	if _, err := s.db.exec(ctx, "INSERT INTO claimdeck_audit (tbl, task_id, at, actor, action, db_role) VALUES ($1, $2, now(), 'x', 'forged', 'someone_else')", s.tag, task.ID); err != nil {
		t.Fatal(err)
	}
	var roles []string
	rows, err := s.db.query(ctx, "SELECT db_role FROM claimdeck_audit WHERE tbl = $1 AND task_id = $2 ORDER BY id", s.tag, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var me string
	if err := s.db.queryRow(ctx, "SELECT session_user").Scan(&me); err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var r *string
		if err := rows.Scan(&r); err != nil {
			t.Fatal(err)
		}
		roles = append(roles, deref(r))
	}
	if len(roles) != 2 || roles[0] != me || roles[1] != me {
		t.Fatalf("db_role = %q, want the server's session_user %q on every row", roles, me)
	}
}
