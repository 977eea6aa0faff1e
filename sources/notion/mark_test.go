package notion

import (
	"context"
	"testing"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// Seed 001's ladder on its own database: stale makes a claim available for
// takeover at once, urgent raises the priority, escalated is kept.
func TestMeshHandoffEscalationLadder(t *testing.T) {
	ctx := context.Background()
	e := newEmulator(t)
	src := e.open(t, e.config(e.database(t, withExtras(presetSchema(PresetMeshHandoff), PresetMeshHandoff)), PresetMeshHandoff))
	task, err := src.Create(ctx, sources.NewTask{Title: "research", Priority: model.PriorityMedium})
	if err != nil {
		t.Fatal(err)
	}
	held, err := src.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "ORACLE_LOCAL"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "SANDMAN"}); model.CodeOf(err) != model.CodeConflict {
		t.Fatalf("a live claim must not be taken over: %v", err)
	}
	// The marks are written a grace before the takeover below: a mark ends
	// the lease at its edit time, and a dead claim is taken over a grace
	// after its lease ended (model.Claimable).
	e.advance(-2 * model.DefaultPolicy().Grace)
	if err := src.MarkEscalation(ctx, task.ID, held.Claim().Token, model.LevelUrgent); err != nil {
		t.Fatal(err)
	}
	got, _ := src.Get(ctx, task.ID)
	if got.Escalated != model.LevelUrgent || got.Priority != model.PriorityHigh {
		t.Fatalf("after the urgent mark: level %s priority %d, want urgent and %d (seed 001's urgent)", got.Escalated, got.Priority, model.PriorityHigh)
	}
	if err := src.MarkEscalation(ctx, task.ID, held.Claim().Token, model.LevelEscalated); err != nil {
		t.Fatal(err)
	}
	if got, _ := src.Get(ctx, task.ID); got.Escalated != model.LevelEscalated {
		t.Fatalf("after the escalated mark: %s", got.Escalated)
	}
	taken, err := src.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "SANDMAN"})
	if err != nil {
		t.Fatalf("seed 001: any node can claim a stale task; got %v", err)
	}
	if taken.Escalated != model.LevelNone || taken.Claim().Name != "SANDMAN" {
		t.Fatalf("the takeover kept the old mark: %s held by %s", taken.Escalated, taken.Claim().Name)
	}
	if _, err := src.Heartbeat(ctx, task.ID, held.Claim().Token, 0); model.CodeOf(err) != model.CodeLostLock {
		t.Fatalf("the stale holder's heartbeat after the takeover: %v, want LOST_LOCK", err)
	}
}
