package lincheck

import (
	"testing"
	"time"
)

// Join keeps each task as the last queue shows it, with every trail entry
// of every queue once, in time order: the target's copy of the origin's
// trail (the same instants, read back in another location) adds nothing.
func TestJoin(t *testing.T) {
	at := time.Date(2026, 12, 6, 7, 0, 0, 0, time.UTC)
	there := at.In(time.FixedZone("elsewhere", 3600))
	origin := []Seen{
		{Task: "a", State: "claimed", Token: "t1", Trail: []Event{{At: at, Actor: "A1", Action: "claim"}, {At: at.Add(time.Second), Actor: "A2", Action: "claim"}}},
		{Task: "b", State: "queued"},
	}
	target := []Seen{
		{Task: "a", State: "done", Trail: []Event{{At: there, Actor: "A1", Action: "claim"}, {At: at.Add(2 * time.Second), Actor: "A1", Action: "complete"}}},
	}
	got := Join(origin, target)
	if len(got) != 2 || got[0].Task != "a" || got[0].State != "done" || got[1].Task != "b" {
		t.Fatalf("joined: %+v", got)
	}
	want := []string{"A1 claim", "A2 claim", "A1 complete"}
	if len(got[0].Trail) != len(want) {
		t.Fatalf("trail of a: %+v, want %v", got[0].Trail, want)
	}
	for i, e := range got[0].Trail {
		if e.Actor+" "+e.Action != want[i] {
			t.Fatalf("trail of a: %+v, want %v", got[0].Trail, want)
		}
	}
	op := JoinedRead(9, at, at.Add(time.Millisecond), origin, target)
	if err := op.check(); err != nil || op.Kind != Read || len(op.Seen) != 2 {
		t.Fatalf("joined read: %+v %v", op, err)
	}
}
