package sourcetest

import (
	"testing"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// testHumanRefusals holds every backend to sources.CheckHuman: the same
// code for the same refusal, and nothing changed.
func testHumanRefusals(t *testing.T, k *kit) {
	ctx := k.ctx(t)
	held := k.create(t, sources.NewTask{Title: "held by an agent"})
	k.claim(t, held.ID, "SANDMAN")
	seen := k.get(t, held.ID)
	act := func(action model.Action, id string, h sources.Human, to string) error {
		var err error
		switch action {
		case model.ActionTakeover:
			_, err = k.src.Takeover(ctx, id, h)
		case model.ActionForceRelease:
			_, err = k.src.ForceRelease(ctx, id, h)
		case model.ActionCancel:
			_, err = k.src.Cancel(ctx, id, h)
		default:
			_, err = k.src.Handoff(ctx, id, sources.Handoff{Human: h, To: to})
		}
		return err
	}
	all := []model.Action{model.ActionTakeover, model.ActionForceRelease, model.ActionCancel, model.ActionHandoff}
	for _, a := range all {
		name := string(a)
		err := act(a, held.ID, sources.Human{Actor: "", Reason: "why", Expect: seen.Version}, "ORACLE")
		wantCode(t, name+" with no actor", err, model.CodeMisconfigured)
		k.unchanged(t, seen, name+" with no actor")
		err = act(a, held.ID, sources.Human{Actor: "alice", Reason: "why"}, "ORACLE")
		wantCode(t, name+" with no version seen", err, model.CodeMisconfigured)
		k.unchanged(t, seen, name+" with no version seen")
	}
	err := act(model.ActionCancel, held.ID, sources.Human{Actor: "alice", Expect: seen.Version}, "")
	wantCode(t, "cancel without a reason", err, model.CodeMisconfigured)
	k.unchanged(t, seen, "cancel without a reason")
	err = act(model.ActionHandoff, held.ID, sources.Human{Actor: "alice", Expect: seen.Version}, " ")
	wantCode(t, "hand-off without a target", err, model.CodeMisconfigured)
	k.unchanged(t, seen, "hand-off without a target")

	free := k.create(t, sources.NewTask{Title: "in the queue, held by nobody"})
	free = k.get(t, free.ID)
	err = act(model.ActionForceRelease, free.ID, sources.Human{Actor: "alice", Reason: "why", Expect: free.Version}, "")
	wantCode(t, "force-release of a task nobody holds", err, model.CodeConflict)
	if e := model.CurrentOf(err); e == nil || e.ID != free.ID {
		t.Fatalf("the refusal must carry the task as it is now: %v", err)
	}
	k.unchanged(t, free, "force-release of a task nobody holds")

	done := k.create(t, sources.NewTask{Title: "already finished"})
	tok := k.claim(t, done.ID, "SANDMAN").Claim.Token
	if _, err := k.src.Finish(ctx, done.ID, tok, sources.Outcome{State: model.StateDone}); err != nil {
		t.Fatal(err)
	}
	done = k.get(t, done.ID)
	for _, a := range all {
		err := act(a, done.ID, sources.Human{Actor: "alice", Reason: "why", Expect: done.Version}, "ORACLE")
		wantCode(t, string(a)+" of a finished task", err, model.CodeConflict)
		k.unchanged(t, done, string(a)+" of a finished task")
	}
}
