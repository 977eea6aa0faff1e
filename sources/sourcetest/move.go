package sourcetest

import (
	"testing"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// testMoves: a reviewer approves a task in Review (Done) or sends it back
// with a reason (the queue, where next and claim find it again); an agent
// unblocks a blocked task and claims it again by id. No move needs a lock,
// each is conditional on the version seen and recorded in the trail, and
// each refuses a task not in its starting state, changing nothing.
func testMoves(t *testing.T, k *kit) {
	ctx := k.ctx(t)
	task := k.create(t, sources.NewTask{Title: "reviewed"})
	held := k.claim(t, task.ID, "SANDMAN")

	move := func(m model.Move, actor, reason, expect string) (*model.Task, error) {
		return k.src.Update(ctx, task.ID, sources.MoveEdit(m, sources.Human{Actor: actor, Reason: reason, Expect: expect}))
	}
	_, err := move(model.MoveApprove, "alice", "", "")
	wantCode(t, "approve of a claimed task", err, model.CodeMisconfigured)
	k.unchanged(t, held, "an approve refused for the state")

	const summary = "split the parser; tests in parser_test.go"
	inReview, err := k.src.Finish(ctx, task.ID, held.Claim().Token, sources.Outcome{State: model.StateReview, Reason: summary})
	if err != nil {
		t.Fatalf("review: %v", err)
	}
	if inReview.State != model.StateReview || inReview.Held() || inReview.More().Reason != summary {
		t.Fatalf("after review with a summary: %s reason %q", describe(inReview), inReview.More().Reason)
	}
	inReview = k.get(t, task.ID)

	_, err = move(model.MoveRework, "alice", "  ", inReview.Version)
	wantCode(t, "rework without a reason", err, model.CodeMisconfigured)
	_, err = move(model.MoveUnblock, "alice", "", inReview.Version)
	wantCode(t, "unblock of a task in review", err, model.CodeMisconfigured)
	_, err = move(model.MoveApprove, "", "", inReview.Version)
	wantCode(t, "approve without an actor", err, model.CodeMisconfigured)
	k.unchanged(t, inReview, "a refused move")

	// The reviewer read the task; its holder's trail moved on since: the
	// move is refused with the task as it is now.
	if err := k.src.Comment(ctx, task.ID, sources.Note{Author: "SANDMAN", Text: "one more note"}); err != nil {
		t.Fatalf("comment: %v", err)
	}
	fresh := k.get(t, task.ID)
	if fresh.Version != inReview.Version {
		_, err = move(model.MoveApprove, "alice", "", inReview.Version)
		wantCode(t, "approve of a version no longer current", err, model.CodeConflict)
		if me := model.CurrentOf(err); me == nil || me.State != model.StateReview {
			t.Fatalf("the CONFLICT does not carry the task as it is now: %v", err)
		}
		k.unchanged(t, fresh, "a move on a stale version")
	}

	const why = "the parser drops comments; keep them"
	back, err := move(model.MoveRework, "alice", why, fresh.Version)
	if err != nil {
		t.Fatalf("rework: %v", err)
	}
	if back.State != model.StateQueued || back.Held() {
		t.Fatalf("after rework: %s", describe(back))
	}
	k.trailHas(t, task.ID, "alice", model.MoveRework.String(), why)
	if n, err := k.src.Next(ctx, "ORACLE"); err != nil || n == nil || n.ID != task.ID {
		t.Fatalf("next after rework: %v %v, want the reworked task", n, err)
	}
	again := k.claim(t, task.ID, "ORACLE")
	if _, err := k.src.Finish(ctx, task.ID, again.Claim().Token, sources.Outcome{State: model.StateReview, Reason: "comments kept"}); err != nil {
		t.Fatalf("second review: %v", err)
	}
	done, err := move(model.MoveApprove, "bob", "", "")
	if err != nil {
		t.Fatalf("approve: %v", err)
	}
	if done.State != model.StateDone || done.Held() {
		t.Fatalf("after approve: %s", describe(done))
	}
	k.trailHas(t, task.ID, "bob", model.MoveApprove.String(), "")
	_, err = move(model.MoveApprove, "bob", "", "")
	wantCode(t, "approve of a task already done", err, model.CodeMisconfigured)
	if _, err := k.src.Heartbeat(ctx, task.ID, again.Claim().Token, 0); model.CodeOf(err) != model.CodeLostLock {
		t.Fatalf("the reviewed claim's token after approve: %v, want LOST_LOCK", err)
	}

	stuck := k.create(t, sources.NewTask{Title: "waits for a key"})
	h := k.claim(t, stuck.ID, "SANDMAN")
	if _, err := k.src.Finish(ctx, stuck.ID, h.Claim().Token, sources.Outcome{State: model.StateBlocked, Reason: "no key", UnblockAction: "ops sends the key"}); err != nil {
		t.Fatalf("block: %v", err)
	}
	if _, err := k.src.Update(ctx, stuck.ID, sources.MoveEdit(model.MoveRework, sources.Human{Actor: "alice", Reason: "x"})); model.CodeOf(err) != model.CodeMisconfigured {
		t.Fatalf("rework of a blocked task: %v, want MISCONFIGURED", err)
	}
	free, err := k.src.Update(ctx, stuck.ID, sources.MoveEdit(model.MoveUnblock, sources.Human{Actor: "SANDMAN"}))
	if err != nil {
		t.Fatalf("unblock: %v", err)
	}
	if free.State != model.StateQueued || free.Held() {
		t.Fatalf("after unblock: %s", describe(free))
	}
	k.trailHas(t, stuck.ID, "SANDMAN", model.MoveUnblock.String(), "")
	if re := k.claim(t, stuck.ID, "SANDMAN"); re.State != model.StateClaimed || re.Claim().Token == h.Claim().Token {
		t.Fatalf("the re-claim after unblock: %s", describe(re))
	}
	if _, err := k.src.Update(ctx, stuck.ID, sources.MoveEdit(model.MoveUnblock, sources.Human{Actor: "SANDMAN"})); model.CodeOf(err) != model.CodeMisconfigured {
		t.Fatalf("unblock of a claimed task: %v, want MISCONFIGURED", err)
	}
}

// trailHas fails unless the task's trail holds actor's action, with reason
// when one is given.
func (k *kit) trailHas(t *testing.T, id, actor, action, reason string) {
	t.Helper()
	for _, e := range k.get(t, id).More().History {
		if e.Actor == actor && e.Action == action && (reason == "" || e.Reason == reason) && !e.At.IsZero() {
			return
		}
	}
	t.Fatalf("the trail of %s lacks %s by %s (reason %q): %+v", id, action, actor, reason, k.get(t, id).More().History)
}
