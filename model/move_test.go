package model

import (
	"strings"
	"testing"
)

// The moves as ntask 0.4 has them at 75590fd: approve and rework start in
// Review (Approve.swift, Rework.swift), unblock in Blocked (Unblock.swift);
// only rework needs a reason; a task elsewhere is refused, MISCONFIGURED.
func TestCheckMove(t *testing.T) {
	cases := []struct {
		move   Move
		state  State
		reason string
		want   Code
		to     State
	}{
		{MoveApprove, StateReview, "", "", StateDone},
		{MoveApprove, StateQueued, "", CodeMisconfigured, StateDone},
		{MoveApprove, StateDone, "", CodeMisconfigured, StateDone},
		{MoveRework, StateReview, "keep comments", "", StateQueued},
		{MoveRework, StateReview, " \t", CodeMisconfigured, StateQueued},
		{MoveRework, StateBlocked, "x", CodeMisconfigured, StateQueued},
		{MoveUnblock, StateBlocked, "", "", StateQueued},
		{MoveUnblock, StateClaimed, "", CodeMisconfigured, StateQueued},
		{MoveUnblock, StateReview, "", CodeMisconfigured, StateQueued},
		{MoveNone, StateReview, "", CodeMisconfigured, StateUnknown},
	}
	for _, c := range cases {
		task := &Task{ID: "t1", State: c.state}
		err := CheckMove(task, c.move, c.reason)
		if CodeOf(err) != c.want {
			t.Errorf("%s from %s (reason %q): %v, want %q", c.move, c.state, c.reason, err, c.want)
		}
		if c.move.To() != c.to {
			t.Errorf("%s goes to %s, want %s", c.move, c.move.To(), c.to)
		}
	}
	for _, m := range []Move{MoveApprove, MoveRework, MoveUnblock} {
		if got, err := ParseMove(" " + m.String() + " "); err != nil || got != m {
			t.Errorf("ParseMove(%q) = %v, %v", m, got, err)
		}
	}
	if _, err := ParseMove(""); err == nil {
		t.Error("ParseMove of an empty name succeeded")
	}
}

// Blocked -> the queue is unblock's move, audited and offered to people
// only; update may release a task parked in the Backlog, nothing else
// that is blocked.
func TestUpdateDoesNotUnblock(t *testing.T) {
	blocked := (&Task{ID: "T-1", State: StateBlocked, RawStatus: "blocked"}).WithMore(More{Reason: "waiting for the vendor"})
	if err := CheckStatusEdit(blocked, StateQueued); CodeOf(err) != CodeMisconfigured || !strings.Contains(err.Error(), "unblock") {
		t.Fatalf("update of a blocked task to the queue: %v, want MISCONFIGURED naming unblock", err)
	}
	waiting := (&Task{ID: "T-3", State: StateBlocked, RawStatus: "blocked"}).WithMore(More{Unblock: &Unblock{Action: "a key from ops"}})
	if err := CheckStatusEdit(waiting, StateQueued); CodeOf(err) != CodeMisconfigured {
		t.Fatalf("update of a task waiting on an unblock action: %v, want MISCONFIGURED", err)
	}
	// Parked untriaged: the Backlog, or Blocked with nothing recorded
	// where a database has no Backlog option.
	for _, parked := range []*Task{{ID: "T-2", State: StateBlocked, RawStatus: "Backlog"}, {ID: "T-4", State: StateBlocked, RawStatus: "Blocked"}} {
		if err := CheckStatusEdit(parked, StateQueued); err != nil {
			t.Fatalf("update --status Ready of an untriaged task (%s): %v", parked.RawStatus, err)
		}
	}
}
