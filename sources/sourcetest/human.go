package sourcetest

import (
	"strings"
	"testing"
	"time"

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
	tok := k.claim(t, done.ID, "SANDMAN").Claim().Token
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

// humanActs runs one override as a person who saw seen.
func (k *kit) humanAct(t *testing.T, action model.Action, seen *model.Task, actor string) (*model.Task, error) {
	ctx := k.ctx(t)
	h := sources.Human{Actor: actor, Reason: "looping without progress", Expect: seen.Version, Seen: seen}
	switch action {
	case model.ActionTakeover:
		return k.src.Takeover(ctx, seen.ID, h)
	case model.ActionForceRelease:
		return k.src.ForceRelease(ctx, seen.ID, h)
	case model.ActionCancel:
		return k.src.Cancel(ctx, seen.ID, h)
	default:
		return k.src.Handoff(ctx, seen.ID, sources.Handoff{Human: h, To: "ORACLE"})
	}
}

// testOverrideAfterHeartbeat: an override acts only on the lease a person
// saw, its expiry included. A heartbeat since — the holder renewing the
// lease — refuses it with CONFLICT "renewed since you looked", as a new
// claim, a finish or a release does, and changes nothing.
func testOverrideAfterHeartbeat(t *testing.T, k *kit) {
	ctx := k.ctx(t)
	all := []model.Action{model.ActionTakeover, model.ActionForceRelease, model.ActionCancel, model.ActionHandoff}
	for _, a := range all {
		task := k.create(t, sources.NewTask{Title: "an agent looping on heartbeats: " + string(a)})
		agent := k.claim(t, task.ID, "SANDMAN")
		seen := k.get(t, task.ID)
		k.advance(t, task.ID, time.Second) // so that the renewed lease ends later than the one seen
		if _, err := k.src.Heartbeat(ctx, task.ID, agent.Claim().Token, 30*time.Minute); err != nil {
			t.Fatal(err)
		}
		renewed := k.get(t, task.ID)
		_, err := k.humanAct(t, a, seen, "alice")
		wantCode(t, string(a)+" confirmed after the holder renewed its lease", err, model.CodeConflict)
		if e := model.CurrentOf(err); e == nil || !strings.Contains(err.Error(), "renewed since you looked") && !strings.Contains(err.Error(), "lease") {
			t.Fatalf("%s after a renewal: %v, want CONFLICT saying the lease was renewed since the person looked", a, err)
		}
		k.unchanged(t, renewed, string(a)+" after a renewal")
		// Acting on the renewed lease as now shown is applied.
		got, err := k.humanAct(t, a, renewed, "alice")
		if err != nil {
			t.Fatalf("%s on the lease as now shown: %v", a, err)
		}
		want := map[model.Action]func(*model.Task) bool{
			model.ActionTakeover: func(x *model.Task) bool {
				return x.Claim().Holder == model.HolderHuman && strings.Contains(x.Claim().Name, "alice")
			},
			model.ActionForceRelease: func(x *model.Task) bool { return x.State == model.StateQueued && !x.Held() },
			model.ActionCancel:       func(x *model.Task) bool { return x.State == model.StateCanceled },
			model.ActionHandoff:      func(x *model.Task) bool { return x.ReservedFor() == "ORACLE" },
		}[a]
		if now := k.get(t, task.ID); !want(now) {
			t.Fatalf("%s returned %s but left %s", a, describe(got), describe(now))
		}
	}

	changes := []struct {
		name   string
		change func(t *testing.T, seen *model.Task, token string)
		named  string
	}{
		{"a new claim", func(t *testing.T, seen *model.Task, _ string) {
			k.advance(t, seen.ID, 20*time.Minute+model.DefaultPolicy().Grace)
			k.claim(t, seen.ID, "ORACLE")
		}, "ORACLE"},
		{"a finish", func(t *testing.T, seen *model.Task, token string) {
			if _, err := k.src.Finish(ctx, seen.ID, token, sources.Outcome{State: model.StateDone}); err != nil {
				t.Fatal(err)
			}
		}, "done"},
		{"a release", func(t *testing.T, seen *model.Task, _ string) {
			if _, err := k.humanAct(t, model.ActionForceRelease, seen, "bob"); err != nil {
				t.Fatal(err)
			}
		}, "queued"},
	}
	for _, c := range changes {
		for _, a := range all {
			task := k.create(t, sources.NewTask{Title: "changed under the dialog: " + c.name + ", " + string(a)})
			agent := k.claim(t, task.ID, "SANDMAN")
			seen := k.get(t, task.ID)
			c.change(t, seen, agent.Claim().Token)
			now := k.get(t, task.ID)
			_, err := k.humanAct(t, a, seen, "alice")
			wantCode(t, string(a)+" after "+c.name, err, model.CodeConflict)
			if !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(c.named)) {
				t.Fatalf("%s after %s: the CONFLICT must say what changed (%s): %v", a, c.name, c.named, err)
			}
			if e := model.CurrentOf(err); e == nil || e.ID != task.ID {
				t.Fatalf("%s after %s: the refusal must carry the task as it is now: %v", a, c.name, err)
			}
			k.unchanged(t, now, string(a)+" after "+c.name)
		}
	}
}
