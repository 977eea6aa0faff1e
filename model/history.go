package model

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The actions Timeline adds from a task's own fields; backends name the
// same steps in their trails.
const (
	EventClaim     = "claim"
	EventTakeover  = "takeover"
	EventHeartbeat = "heartbeat"
	// EventComment is a note a caller wrote (Source.Comment): shown,
	// never read as a step.
	EventComment = "comment"
)

// TrimTrail drops n entries from a trail kept within a size: the oldest
// comments first, then the oldest of the rest, so that a flood of
// comments never pushes claimdeck's own entries (the claim, the review,
// a person's override) out. comment says which entries are comments.
func TrimTrail[E any](evs []E, n int, comment func(E) bool) []E {
	out := make([]E, 0, len(evs))
	for _, e := range evs {
		if n > 0 && comment(e) {
			n--
			continue
		}
		out = append(out, e)
	}
	if n > 0 {
		out = out[min(n, len(out)):]
	}
	return out
}

// finishAction is the event word each parked or final state is reached by.
var finishAction = map[State]string{
	StateBlocked: "block", StateReview: "review", StateDone: "complete",
	StateFailed: "fail", StateCanceled: "cancel",
}

// FinishStep is the trail's action for a holder parking or ending its claim
// in state s, so that every backend's trail names the step as Timeline does.
func FinishStep(s State) string { return finishAction[s] }

// reachedBy is the other step a state is reached by: a reviewer's approve
// ends in Done, recorded as the approve it is.
var reachedBy = map[State]string{StateDone: string(ActionApprove)}

// sameStep says which backend words name one step: seed 001 writes
// "claimed", the SQL and lock-file trails "claim".
var sameStep = map[string]string{
	"claimed": EventClaim, "blocked": "block", "completed": "complete", "done": "complete",
	"failed": "fail", "canceled": "cancel", "cancelled": "cancel", "heartbeats": EventHeartbeat,
}

func step(action string) string {
	a := strings.ToLower(strings.TrimSpace(action))
	if s, ok := sameStep[a]; ok {
		return s
	}
	return a
}

// dupWindow is how far apart two copies of one event may be stamped: a
// Notion comment's time is its own, rounded to the minute.
const dupWindow = time.Minute

// Timeline is a task's history, newest last, the same for every backend:
// the events its trail kept, plus what the task's own fields still say
// where no event says it (the current claim, its last heartbeat, how it
// was parked or finished). Runs of heartbeats by one holder read as one
// line, and an event kept twice (a Notion comment beside the hand-off
// history) is shown once.
func Timeline(t *Task) []Event {
	evs := slices.Clone(t.More().History)
	has := func(action string, at time.Time) bool {
		return slices.ContainsFunc(evs, func(e Event) bool {
			return e.Applied() && step(e.Action) == action && (at.IsZero() || near(e.At, at))
		})
	}
	if c := t.Claim(); c.Held() && !c.ClaimedAt.IsZero() {
		action := EventClaim
		if c.Holder == HolderHuman {
			action = EventTakeover
		}
		if !has(action, c.ClaimedAt.Time()) {
			evs = append(evs, Event{At: c.ClaimedAt.Time(), Actor: c.Name, Action: action, Detail: claimDetail(c)})
		}
		if c.HeartbeatAt.Time().After(c.ClaimedAt.Time()) && !has(EventHeartbeat, c.HeartbeatAt.Time()) {
			evs = append(evs, Event{At: c.HeartbeatAt.Time(), Actor: c.Name, Action: EventHeartbeat, Detail: "last sign of life"})
		}
	}
	if action, ok := finishAction[t.State]; ok && !t.EditedAt.IsZero() && !has(action, time.Time{}) &&
		(reachedBy[t.State] == "" || !has(reachedBy[t.State], time.Time{})) {
		evs = append(evs, Event{At: t.EditedAt.Time(), Action: action, Reason: t.More().Reason, Detail: parkDetail(t)})
	}
	return summarise(MergeHistory(evs))
}

// MergeHistory joins a task's trails (a Notion page's hand-off history and
// its comments) into one, oldest first, keeping an event both hold once.
func MergeHistory(trails ...[]Event) []Event {
	var evs []Event
	for _, tr := range trails {
		evs = append(evs, tr...)
	}
	slices.SortStableFunc(evs, func(a, b Event) int { return a.At.Compare(b.At) })
	return dedupe(evs)
}

func near(a, b time.Time) bool {
	d := a.Sub(b)
	return d > -dupWindow && d < dupWindow
}

func claimDetail(c Claim) string {
	var parts []string
	if c.RunID != "" {
		parts = append(parts, "run "+c.RunID)
	}
	if c.Node != "" {
		parts = append(parts, "on node "+c.Node)
	}
	return strings.Join(parts, " ")
}

func parkDetail(t *Task) string {
	var parts []string
	if a := t.UnblockAction(); a != "" {
		parts = append(parts, "unblock: "+a)
	}
	if at := t.NextCheckAt(); !at.IsZero() {
		parts = append(parts, "next check "+at.UTC().Format(time.RFC3339))
	}
	if t.More().Artifacts != "" {
		parts = append(parts, "artifacts: "+t.More().Artifacts)
	}
	return strings.Join(parts, "; ")
}

// copyOf says whether two stamps may be one event's: the same instant, or
// one of them rounded to the minute (a Notion comment's) and the other
// within dupWindow of it. Two stamps that both carry their own seconds are
// two events, such as one agent's two rescues of a task ten seconds apart.
func copyOf(a, b time.Time) bool {
	rounded := func(t time.Time) bool { return t.Equal(t.Truncate(time.Minute)) }
	return a.Equal(b) || (rounded(a) || rounded(b)) && near(a, b)
}

// dedupe drops an event that repeats an earlier one (same step, actor and
// reason, stamped as copyOf allows), keeping the one with more detail. A
// refused attempt is kept every time: a trail writes it once (no hand-off
// history copies it), and two in one minute are two attempts, which the
// cap on refusals (sources.RecentRefusals) counts.
func dedupe(evs []Event) []Event {
	out := evs[:0]
	for _, e := range evs {
		if !e.Applied() {
			out = append(out, e)
			continue
		}
		i := slices.IndexFunc(out, func(o Event) bool {
			return step(o.Action) == step(e.Action) && o.Actor == e.Actor && o.Reason == e.Reason && o.Result == e.Result && copyOf(o.At, e.At)
		})
		if i < 0 {
			out = append(out, e)
		} else if len(e.Detail) > len(out[i].Detail) {
			out[i].Detail = e.Detail
		}
	}
	return out
}

// summarise folds each run of heartbeats by one holder into its last, with
// how many there were since when.
func summarise(evs []Event) []Event {
	out := evs[:0]
	for i := 0; i < len(evs); {
		j := i + 1
		if step(evs[i].Action) == EventHeartbeat && evs[i].Applied() {
			for j < len(evs) && step(evs[j].Action) == EventHeartbeat && evs[j].Applied() && evs[j].Actor == evs[i].Actor {
				j++
			}
		}
		e := evs[j-1]
		if n := j - i; n > 1 {
			e.Detail = fmt.Sprintf("%d heartbeats since %s", n, evs[i].At.UTC().Format(time.RFC3339))
		}
		out = append(out, e)
		i = j
	}
	return out
}
