package sources_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/sourcetest/memsource"
)

// noTrail is a source whose trail cannot be read across tasks.
type noTrail struct{ sources.Source }

// OverrideOf counts a person's override and any refused desk action, never
// a holder's own steps or a comment.
func TestOverrideOfCountsOverridesNotAHoldersOwnSteps(t *testing.T) {
	for _, c := range []struct {
		e    model.Event
		want bool
	}{
		{model.Event{Action: "takeover"}, true},
		{model.Event{Action: "force-release", Result: model.ResultApplied}, true},
		{model.Event{Action: "cancel", Detail: "was claimed by SANDMAN"}, true},
		{model.Event{Action: "cancel", Detail: "run r1"}, false}, // the holder's own
		{model.Event{Action: "handoff", Detail: "to w2 (by the holder)"}, false},
		{model.Event{Action: "approve"}, true},
		{model.Event{Action: "complete", Result: "MISCONFIGURED"}, true}, // a refused desk action
		{model.Event{Action: "complete"}, false},
		{model.Event{Action: "claim"}, false},
		{model.Event{Action: "comment", Result: "CONFLICT"}, false},
	} {
		if _, got := sources.OverrideOf(c.e); got != c.want {
			t.Errorf("OverrideOf(%+v) = %v, want %v", c.e, got, c.want)
		}
	}
}

// The feed reads only what is new, counts each override once, leaves
// out its baseline, and names a source it cannot read instead of
// counting it as zero.
func TestOverrideFeedCountsEachOverrideOnceFromItsBaseline(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	mem := memsource.NewMemory("mem")
	mem.Now = func() time.Time { return now }
	before := mem.Put(&model.Task{ID: "a", State: model.StateQueued})
	record := func(id, action string, at time.Time) {
		t.Helper()
		if err := mem.Record(ctx, id, model.Event{At: at, Actor: "alice", Door: model.DoorCLI, Action: action, Result: "CONFLICT"}); err != nil {
			t.Fatal(err)
		}
	}
	record(before.ID, "takeover", now.Add(-time.Minute)) // before the start, within the overlap
	f := &sources.OverrideFeed{Sources: []sources.Source{mem, noTrail{memsource.NewMemory("relayed")}}, Start: now, Baseline: true}
	recs, unread := f.Read(ctx)
	if len(recs) != 0 {
		t.Fatalf("the baseline was counted: %+v", recs)
	}
	if !strings.HasPrefix(unread["relayed"], "not available") || unread["mem"] != "" {
		t.Fatalf("unread = %v: want the source without a trail reader named, and only it", unread)
	}
	record(before.ID, "takeover", now.Add(-30*time.Second)) // a backend's clock behind ours, rounding
	record(before.ID, "release", now.Add(time.Second))
	for range 2 { // read twice: nothing counted twice
		recs, _ = f.Read(ctx)
	}
	if len(recs) != 2 || recs[0].Action != model.ActionTakeover || recs[1].Action != model.ActionRelease || recs[0].Result != "CONFLICT" || recs[0].Source != "mem" {
		t.Fatalf("recs = %+v: want the takeover and the release after the baseline, once each", recs)
	}
}
