package model

import (
	"testing"
	"time"
)

// TestReapedIsNotAnAlarm: a task put back once its lease ended reads as
// reaped, and stands in no alarm.
func TestReapedIsNotAnAlarm(t *testing.T) {
	now := time.Now()
	before := (&Task{ID: "1", State: StateClaimed}).WithClaim(Claim{Holder: HolderAgent, Name: "SANDMAN", Token: "t", Expires: StampOf(now.Add(-time.Hour))})
	after := &Task{ID: "1", State: StateQueued}
	if !Reaped(before, after, now) {
		t.Fatal("an expired claim put back is a reap")
	}
	if c := Classify(after, now, DefaultPolicy(), nil); c.Stale() {
		t.Fatalf("a reaped task stands as %+v", c)
	}
	live := *before
	live.EditClaim().Expires = StampOf(now.Add(time.Hour))
	if Reaped(&live, after, now) {
		t.Fatal("a live claim released is a force-release, not a reap")
	}
	noExpiry := *before
	noExpiry.EditClaim().Expires = StampOf(time.Time{})
	if Reaped(&noExpiry, after, now) || Rescuable(&noExpiry, now, 0) {
		t.Fatal("a token without an expiry is never reaped")
	}
}
