package sources

import (
	"strings"

	"github.com/claimdeck/claimdeck/model"
)

// CheckHuman is the one check before every human action — takeover,
// force-release, cancel, and a hand-off by a person — that every backend
// applies to the task as it reads it in the same write, so that each
// refusal has one code everywhere and changes nothing:
//
//   - MISCONFIGURED: texts that are not text (Human.Check); no actor; no
//     version seen; a cancel without a reason.
//   - CONFLICT, carrying the task as it is now: the claim changed since it
//     was seen (ClaimChanges), was read from bad data, has already ended, or
//     (force-release) sits in the queue with nobody holding it, so there is
//     nothing to release.
func CheckHuman(action model.Action, t *model.Task, h Human) error {
	op := string(action)
	conflict := func(format string, args ...any) error {
		e := model.Errorf(model.CodeConflict, op, t.ID, format+": nothing was done", args...)
		e.Current = t
		return e
	}
	if err := h.Check(op, t.ID); err != nil {
		return err
	}
	switch {
	case strings.TrimSpace(h.Actor) == "":
		return model.Errorf(model.CodeMisconfigured, op, t.ID, "no actor: a human action names who acts")
	case h.Expect == "":
		return model.Errorf(model.CodeMisconfigured, op, t.ID, "no version seen: a human action is applied only to the version the human saw")
	case action.Needs().Reason && strings.TrimSpace(h.Reason) == "":
		return model.Errorf(model.CodeMisconfigured, op, t.ID, "a reason is required")
	case t.Version != h.Expect && h.Seen == nil:
		return conflict("the task changed since it was read (version %s, now %s)", h.Expect, t.Version)
	case t.Version != h.Expect && h.Seen.Version != h.Expect:
		return model.Errorf(model.CodeMisconfigured, op, t.ID, "the task seen (version %s) is not the version expected (%s)", h.Seen.Version, h.Expect)
	case t.Version != h.Expect && len(ClaimChanges(h.Seen, t)) > 0:
		return conflict("the task changed since you looked: %s", strings.Join(model.Changes(h.Seen, t), "; "))
	case t.More().Problem != "":
		return conflict("the task was read from bad data (%s); repair it by hand", t.More().Problem)
	case t.State.Final():
		return conflict("the task is already %s", t.State)
	case action == model.ActionForceRelease && t.State == model.StateQueued && !t.Held():
		return conflict("the task is in the queue and nobody holds it: there is nothing to release")
	}
	return nil
}

// ClaimChanges lists what a person's override was decided on and is no
// longer so: the status, the holder, the lock token, the lease's expiry
// and the reservation. A heartbeat since — the holder renewing the lease
// the person saw ending — is named here and refuses ("renewed since you
// looked"), as a new claim, a finish or a release does: an override acts
// only on the lease as shown. Other edits (title, priority) do not change
// the decision.
func ClaimChanges(seen, now *model.Task) []string {
	var out []string
	if !seen.Claim().Expires.Time().Equal(now.Claim().Expires.Time()) {
		out = append(out, "lease")
	}
	if seen.State != now.State {
		out = append(out, "status")
	}
	if seen.Claim().Holder != now.Claim().Holder || seen.Claim().Name != now.Claim().Name {
		out = append(out, "holder")
	}
	if seen.Claim().Token != now.Claim().Token {
		out = append(out, "lock token")
	}
	if !sameReservation(seen.Reserved(), now.Reserved()) {
		out = append(out, "reservation")
	}
	return out
}

func sameReservation(a, b *model.Reservation) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.For == b.For && a.Until.Equal(b.Until) && a.By == b.By
}

// FromWhom is what every backend's trail records of an override besides
// who acted: the task as the override found it, naming whom it was taken,
// released, canceled or handed off from ("was claimed by SANDMAN"). It is
// read from the task under the override's own write, so a claim that left
// no trail (a seed 003 row claimed before migrate) is named too.
// HumanDetail is the trail's detail for a person's action on cur: whom
// it was taken from, and the SSH key the person was known by, if any.
func HumanDetail(h Human, cur *model.Task) string {
	d := FromWhom(cur)
	if h.Key != "" {
		d += "; key " + h.Key
	}
	return d
}

func FromWhom(cur *model.Task) string {
	d := humanDetailPrefix + cur.State.String()
	if cur.Held() && cur.Claim().Name != "" {
		d += " by " + cur.Claim().Name
	}
	return d
}

// CheckTarget is the check of a hand-off's target, before anything is
// read: what model.Action.Needs asks, held again by every backend.
func CheckTarget(id, to string) error {
	if model.ActionHandoff.Needs().Target && strings.TrimSpace(to) == "" {
		return model.Errorf(model.CodeMisconfigured, string(model.ActionHandoff), id, "a target agent (or ANY) is required")
	}
	return nil
}
