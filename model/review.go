package model

import (
	"slices"
	"strings"
)

// The reviewer's actions and a person's finishes of their own claim.
const (
	ActionApprove  Action = "approve"  // Review -> Done (MoveApprove)
	ActionRework   Action = "rework"   // Review -> the queue, with a reason (MoveRework)
	ActionComplete Action = "complete" // a person's own claim -> Done
	ActionReview   Action = "review"   // a person's own claim -> Review
	ActionBlock    Action = "block"    // a person's own claim -> Blocked, with a reason
	ActionRelease  Action = "release"  // a person's own claim -> back to the queue
	ActionUnblock  Action = "unblock"  // Blocked -> the queue (MoveUnblock)
)

// Move is the lock-free move an action applies; MoveNone for the others.
func (a Action) Move() Move {
	switch a {
	case ActionApprove:
		return MoveApprove
	case ActionRework:
		return MoveRework
	case ActionUnblock:
		return MoveUnblock
	}
	return MoveNone
}

// Own reports whether the action finishes the acting person's own claim.
func (a Action) Own() bool {
	switch a {
	case ActionComplete, ActionReview, ActionBlock, ActionRelease:
		return true
	}
	return false
}

// Outcome is the state a person's own finish leaves the task in.
func (a Action) Outcome() State {
	switch a {
	case ActionComplete:
		return StateDone
	case ActionReview:
		return StateReview
	case ActionBlock:
		return StateBlocked
	case ActionRelease:
		return StateQueued
	}
	return StateUnknown
}

// OwnAction is the person's own action that leaves a claim in state s
// (Outcome read backwards), or "" for none.
func OwnAction(s State) Action {
	for _, a := range []Action{ActionComplete, ActionReview, ActionBlock, ActionRelease} {
		if a.Outcome() == s {
			return a
		}
	}
	return ""
}

// Person is the person holding c as HUMAN:<actor>, or "" when no person
// holds it.
func (c Claim) Person() string {
	if c.Holder != HolderHuman {
		return ""
	}
	return strings.TrimPrefix(c.Name, HumanPrefix)
}

// OwnClaim reports whether actor holds t as a person (HUMAN:<actor>).
func OwnClaim(t *Task, actor string) bool {
	return t.State == StateClaimed && t.claimRef().Holder == HolderHuman && actor != "" && t.claimRef().Name == HumanPrefix+actor
}

// CheckOwn is the one rule for a person's own finish: it is asked by a
// person at the dashboard or the command line (MISCONFIGURED otherwise: an
// agent finishes a claim with its lock token), and the task must be
// claimed by that person; otherwise CONFLICT, carrying the task, and
// nothing is done. A person finishes only what they hold: someone else's
// claim is taken over or force-released first.
func CheckOwn(t *Task, by Actor, a Action) error {
	if !by.Person() {
		return Errorf(CodeMisconfigured, string(a), t.ID, "a person's own claim is finished without a lock token only by that person, at the dashboard or the claimdeck command line (this request came through %s): give the lock token: nothing was done", by.Door)
	}
	actor := by.Name
	if OwnClaim(t, actor) {
		return nil
	}
	holder := "nobody holds it"
	if t.Held() {
		holder = "it is held by " + t.claimRef().Name
	}
	e := Errorf(CodeConflict, string(a), t.ID, "only a claim you hold as %s%s can be finished this way (the task is %s; %s): nothing was done", HumanPrefix, actor, t.State, holder)
	e.Current = t
	return e
}

// Submitter is who sent a task to review: the fact the backend stored
// with the move (More.ReviewBy) while the task is in Review, else as its
// timeline says — the last review step's writer; when that writer gave no
// name (WriterName's fallback), the holder of the claim it finished, said
// so. "" when neither says.
func Submitter(t *Task) string {
	if by := strings.TrimSpace(t.More().ReviewBy); by != "" && t.State == StateReview {
		return by
	}
	tl := Timeline(t)
	i := lastReview(tl)
	if i < 0 {
		return ""
	}
	unnamed := WriterName("", "")
	if a := strings.TrimSpace(tl[i].Actor); a != "" && a != unnamed {
		return a
	}
	for j := i - 1; j >= 0; j-- {
		if s := step(tl[j].Action); (s == EventClaim || s == EventTakeover) && tl[j].Actor != "" {
			return tl[j].Actor + " (held the claim; the review gave no name)"
		}
	}
	return unnamed
}

// lastReview is the index of the last step into Review in evs, or -1.
func lastReview(evs []Event) int {
	for i := len(evs) - 1; i >= 0; i-- {
		if step(evs[i].Action) == FinishStep(StateReview) && evs[i].Applied() {
			return i
		}
	}
	return -1
}

// callers are the callers a trail name stands for: "SANDMAN (run r-1) via
// oncall@mcp-http" is SANDMAN and the client oncall@mcp-http; HUMAN:alice
// is alice; "SANDMAN (holder; the caller gave no name)" is SANDMAN. As
// they read on screen (Skeleton), for comparing.
func callers(name string) []string {
	var out []string
	agent, via, _ := strings.Cut(name, " via ")
	agent, _, _ = strings.Cut(agent, " (")
	if agent = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(agent), HumanPrefix)); agent != "" {
		out = append(out, Skeleton(agent))
	}
	if via = strings.TrimSpace(via); via != "" {
		out = append(out, Skeleton(via))
	}
	return out
}

// CheckSelfApproval is the one rule on who approves, read from the fact
// the backend stored when the task went to Review (More.ReviewBy), never
// from a note: not the caller that sent it there (by its agent name or the
// remote client it came through, as names read on screen), and not at all
// when the backend does not say who sent it — unless the configuration
// allows self-approval. MISCONFIGURED, saying why, the task carried.
func CheckSelfApproval(t *Task, approver string, allowed bool) error {
	if allowed {
		return nil
	}
	refuse := func(format string, args ...any) error {
		e := Errorf(CodeMisconfigured, string(ActionApprove), t.ID, format+": nothing was done", args...)
		e.Current = t
		return e
	}
	by := strings.TrimSpace(t.More().ReviewBy)
	if by == "" {
		return refuse("who sent this task to review is not recorded (it went to review outside claimdeck, or before claimdeck recorded it), so an approval cannot be told from a self-approval: send it to review again through claimdeck (rework, claim, review), or set review: {self_approve: true} in the configuration")
	}
	for _, a := range callers(approver) {
		if slices.Contains(callers(by), a) {
			return refuse("%s sent this task to review and cannot approve it too: another reviewer approves (or set review: {self_approve: true} in the configuration)", by)
		}
	}
	return nil
}
