package model

import (
	"fmt"
	"strings"
)

// Move is a lock-free lifecycle transition: a step nobody holds a claim
// for, taken by a reviewer or an agent on a task parked in Review or
// Blocked (ntask 0.4's approve, rework and unblock).
type Move uint8

// The moves. Each starts from one state and ends in one.
const (
	MoveNone    Move = iota
	MoveApprove      // Review -> Done (Approve.swift)
	MoveRework       // Review -> Queued, a reason required (Rework.swift, ntask 0.4.1)
	MoveUnblock      // Blocked -> Queued: the agent claims it again by id
)

var moveNames = [...]string{"", "approve", "rework", "unblock"}

func (m Move) String() string {
	if int(m) >= len(moveNames) {
		return "move?"
	}
	return moveNames[m]
}

// ParseMove reads a move name as String prints it.
func ParseMove(name string) (Move, error) {
	if i := namedIndex(moveNames[:], name); i > 0 {
		return Move(i), nil
	}
	return MoveNone, fmt.Errorf("unknown move %q (want approve, rework or unblock)", name)
}

// From is the state a task must be in for the move.
func (m Move) From() State {
	switch m {
	case MoveApprove, MoveRework:
		return StateReview
	case MoveUnblock:
		return StateBlocked
	}
	return StateUnknown
}

// To is the state the move leaves the task in. Unblock goes to the queue,
// not to ntask's "In Progress with no lock": claimdeck keeps no In Progress
// task without a holder, whose lease and sweep would watch nothing.
func (m Move) To() State {
	switch m {
	case MoveApprove:
		return StateDone
	case MoveRework, MoveUnblock:
		return StateQueued
	}
	return StateUnknown
}

// CheckMove is the one rule for a move on t as read in the same write:
// MISCONFIGURED for an unknown move, a missing reason, or a task not in
// the move's starting state (as the binary answers, Approve.swift: "Task
// must be in Review status to approve"), the task carried along.
func CheckMove(t *Task, m Move, reason string) error {
	op := m.String()
	if m.From() == StateUnknown {
		return Errorf(CodeMisconfigured, "move", t.ID, "unknown move %d", m)
	}
	if Action(op).Needs().Reason && strings.TrimSpace(reason) == "" {
		return Errorf(CodeMisconfigured, op, t.ID, "a reason is required")
	}
	if t.State != m.From() {
		e := Errorf(CodeMisconfigured, op, t.ID, "the task must be %s to %s (it is %s): nothing was done", m.From(), op, t.State)
		e.Current = t
		return e
	}
	return nil
}

// CheckReview is ntask 0.4's rule before a holder sends a task to Review
// (Review.swift: "Cannot review: n/total sub-tasks still open"):
// INCOMPLETE_SUBTASKS while any sub-task is open, the task carried along.
func CheckReview(t *Task) error {
	if t.OpenSubtasks <= 0 {
		return nil
	}
	e := Errorf(CodeIncompleteSubtasks, "review", t.ID, "cannot review: %d sub-task(s) still open", t.OpenSubtasks)
	e.Current = t
	return e
}

// statusOwners are the commands that own a move into each state no plain
// edit may set: only they run the checks that state stands for (a lease
// ended by its holder, a review approved, sub-tasks closed, a reason).
var statusOwners = map[State]string{
	StateDone:     "complete (the holder, with its lock token) or approve (a task in Review)",
	StateReview:   "review (the holder, with its lock token)",
	StateFailed:   "fail (the holder, with its lock token)",
	StateCanceled: "cancel (with a reason)",
	StateClaimed:  "claim",
}

// CheckStatusEdit is the one rule for a status a plain edit (update)
// sets: into or out of Done, Review, Failed and Canceled only through the
// command that owns the move — complete, review, approve, rework, fail,
// cancel — on every door; an edit may move a task between the queue and
// Blocked. MISCONFIGURED naming the command, the task carried along.
func CheckStatusEdit(t *Task, to State) error {
	if to == StateUnknown || to == t.State {
		return nil
	}
	refuse := func(format string, args ...any) error {
		e := Errorf(CodeMisconfigured, "update", t.ID, format+": nothing was done", args...)
		e.Current = t
		return e
	}
	if cmd, ok := statusOwners[to]; ok {
		return refuse("update edits fields; status %s is set by %s", to, cmd)
	}
	switch t.State {
	case StateReview:
		return refuse("the task is in review: approve or rework moves it, not update")
	case StateBlocked:
		if to == StateQueued && !t.Untriaged() {
			return refuse("the task is blocked (%s): unblock moves it back to the queue (a person's action, audited), not update", orBlank(t.More().Reason, "waiting on "+t.UnblockAction()))
		}
	case StateDone, StateFailed, StateCanceled:
		return refuse("the task is %s, which is final: no update reopens it (create a new task)", t.State)
	}
	return nil
}

func orBlank(s, alt string) string {
	if s != "" {
		return s
	}
	return alt
}
