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
