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

// A task claimed by another agent once its holder's lease ended reads as
// a rescue, naming whom it was rescued from; a claim taken over from a
// live lease does not.
func TestActivityNamesARescue(t *testing.T) {
	now := time.Now()
	dead := (&model.Task{Source: "s", ID: "1", State: model.StateClaimed}).WithClaim(model.Claim{Holder: model.HolderAgent, Name: "A4", Token: "t4", Expires: model.StampOf(now.Add(-time.Minute))})
	rescued := (&model.Task{Source: "s", ID: "1", State: model.StateClaimed}).WithClaim(model.Claim{Holder: model.HolderAgent, Name: "A5", Token: "t5", Expires: model.StampOf(now.Add(20 * time.Minute))})
	if got := transitionActivity(hub.Transition{At: now, Before: dead, After: rescued}).What; got != "rescued from A4: lease ended, now A5" {
		t.Fatalf("a rescue reads %q", got)
	}
	live := *dead
	live.EditClaim().Expires = model.StampOf(now.Add(time.Hour))
	if got := transitionActivity(hub.Transition{At: now, Before: &live, After: rescued}).What; got != "changed by AGENT A5" {
		t.Fatalf("a claim changing hands under a live lease reads %q", got)
	}
	renewed := *dead
	renewed.EditClaim().Expires = model.StampOf(now.Add(time.Hour))
	if got := transitionActivity(hub.Transition{At: now, Before: dead, After: &renewed}).What; got != "changed by AGENT A4" {
		t.Fatalf("the same claim renewed reads %q", got)
	}
}
