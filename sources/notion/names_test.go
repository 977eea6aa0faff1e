package notion

import (
	"context"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// On today's skill layout a claim names its holder in Agent Run: an older
// claimdeck let an agent claim as HUMAN:alice, writing "HUMAN:alice · run"
// with a 20 minute Lock Expires. That is the agent's claim, read with its
// lease; a person's takeover (no run, a lease a century long) stays the
// person's. A claim as HUMAN:… is refused today.
func TestTodaysAgentNamedHumanIsReadAsTheAgentItIs(t *testing.T) {
	emu, db, cfg := skillDB(t)
	src := emu.open(t, cfg)
	ctx := context.Background()
	start := time.Now().Add(-time.Hour).UTC()
	old := skillPage(t, emu, db, title("old binary's claim"), status("In Progress"),
		`"Agent Run":{"rich_text":[{"text":{"content":"HUMAN:alice · run-7"}}]}`,
		`"Lock Token":{"rich_text":[{"text":{"content":"5b0f4c8e-1111-4a2b-9c3d-222233334444"}}]}`,
		`"Started At":{"date":{"start":"`+start.Format(time.RFC3339)+`"}}`,
		`"Lock Expires":{"date":{"start":"`+start.Add(20*time.Minute).Format(time.RFC3339)+`"}}`)
	got, err := src.Get(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	if got.Claim().Holder != model.HolderAgent || got.Claim().Name != "HUMAN:alice" || got.Claim().Expires.IsZero() {
		t.Fatalf("the old binary's agent claim reads %+v: want the agent's, with its lease", got.Claim())
	}
	if !model.Rescuable(got, time.Now(), time.Minute) {
		t.Fatalf("its dead lease must be rescuable: %+v", got.Claim())
	}

	mine := skillPage(t, emu, db, title("taken over"), status("Ready"))
	seen, err := src.Get(ctx, mine)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := src.Takeover(ctx, mine, sources.Human{Actor: "alice", Expect: seen.Version, Seen: seen}); err != nil || got.Claim().Holder != model.HolderHuman {
		t.Fatalf("a person's takeover: %+v, %v", got, err)
	}
	if got, _ := src.Get(ctx, mine); got.Claim().Holder != model.HolderHuman || !got.Claim().Expires.IsZero() {
		t.Fatalf("the takeover reads back as %+v", got.Claim())
	}

	free := skillPage(t, emu, db, title("free"), status("Ready"))
	_, err = src.Claim(ctx, free, sources.ClaimRequest{Agent: "HUMAN:alice", RunID: "r"})
	if model.CodeOf(err) != model.CodeMisconfigured {
		t.Fatalf("claim as HUMAN:alice: %v, want MISCONFIGURED", err)
	}
	if got, _ := src.Get(ctx, free); got.State != model.StateQueued || got.Held() {
		t.Fatalf("the refused claim changed the task: %+v", got)
	}
}
