package tui

import (
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/hub"
)

// A task put back once its agent's lease ended (ntask reap, the sweep's
// rescue) reads as reaped, naming the holder it was reaped from; a live
// claim released by a person does not.
func TestActivityNamesAReap(t *testing.T) {
	now := time.Now()
	claimed := (&model.Task{Source: "s", ID: "1", State: model.StateClaimed}).WithClaim(model.Claim{Holder: model.HolderAgent, Name: "SANDMAN", Token: "t", Expires: model.StampOf(now.Add(-time.Hour))})
	queued := &model.Task{Source: "s", ID: "1", State: model.StateQueued}
	if got := transitionActivity(hub.Transition{At: now, Before: claimed, After: queued}).What; got != "reaped: claimed → queued (was SANDMAN)" {
		t.Fatalf("a reap reads %q", got)
	}
	live := *claimed
	live.EditClaim().Expires = model.StampOf(now.Add(time.Hour))
	if got := transitionActivity(hub.Transition{At: now, Before: &live, After: queued}).What; got != "claimed → queued (was SANDMAN)" {
		t.Fatalf("a release of a live claim reads %q", got)
	}
}
