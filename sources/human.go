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
//   - CONFLICT, carrying the task as it is now: the task changed since it
//     was seen, was read from bad data, has already ended, or (force-release)
//     sits in the queue with nobody holding it, so there is nothing to release.
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
	case action == model.ActionCancel && strings.TrimSpace(h.Reason) == "":
		return model.Errorf(model.CodeMisconfigured, op, t.ID, "a reason is required")
	case t.Version != h.Expect:
		return conflict("the task changed since it was read (version %s, now %s)", h.Expect, t.Version)
	case t.Problem != "":
		return conflict("the task was read from bad data (%s); repair it by hand", t.Problem)
	case t.State.Final():
		return conflict("the task is already %s", t.State)
	case action == model.ActionForceRelease && t.State == model.StateQueued && !t.Claim.Held():
		return conflict("the task is in the queue and nobody holds it: there is nothing to release")
	}
	return nil
}

// CheckTarget is the check of a hand-off's target, before anything is read.
func CheckTarget(id, to string) error {
	if strings.TrimSpace(to) == "" {
		return model.Errorf(model.CodeMisconfigured, string(model.ActionHandoff), id, "a target agent (or ANY) is required")
	}
	return nil
}
