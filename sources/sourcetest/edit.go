package sourcetest

import (
	"slices"
	"testing"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// testComment: a comment lands in the task's own trail; an empty one and
// one on an unknown task are refused.
func testComment(t *testing.T, k *kit) {
	c := k.src
	ctx := k.ctx(t)
	task := k.create(t, sources.NewTask{Title: "commented"})
	if err := c.Comment(ctx, task.ID, sources.Note{Author: "SANDMAN", Text: "lock was inconsistent: claimed by AGENT with no expiry"}); err != nil {
		t.Fatalf("comment: %v", err)
	}
	held := k.claim(t, task.ID, "SANDMAN")
	if err := c.Comment(ctx, task.ID, sources.Note{Author: "alice", Text: "looking at it"}); err != nil {
		t.Fatalf("comment on a held task: %v", err)
	}
	got := k.get(t, task.ID)
	var notes []string
	for _, e := range got.More().History {
		if e.Action == "comment" {
			notes = append(notes, e.Actor+": "+e.Reason)
		}
	}
	if !slices.Equal(notes, []string{"SANDMAN: lock was inconsistent: claimed by AGENT with no expiry", "alice: looking at it"}) {
		t.Fatalf("comments in the history: %q", notes)
	}
	if got.Claim().Token != held.Claim().Token || got.State != model.StateClaimed {
		t.Fatalf("a comment changed the claim: %s", describe(got))
	}
	wantCode(t, "an empty comment", c.Comment(ctx, task.ID, sources.Note{Author: "alice", Text: "  "}), model.CodeMisconfigured)
	if err := c.Comment(ctx, "no-such-task", sources.Note{Author: "alice", Text: "hello"}); err == nil {
		t.Fatal("a comment on an unknown task succeeded")
	}
}

// testUpdate: fields of a free task are edited by anyone; a held task only
// by its holder, and never its state; a state moves only outside claims.
func testUpdate(t *testing.T, k *kit) {
	ed := k.src
	ctx := k.ctx(t)
	title, prio, class := "renamed", model.PriorityCritical, model.ClassExpedite
	task := k.create(t, sources.NewTask{Title: "draft", Priority: model.PriorityLow})
	got, err := ed.Update(ctx, task.ID, sources.Edit{Actor: "alice", Title: &title, Priority: &prio, Class: &class})
	if err != nil {
		t.Fatalf("update of a free task: %v", err)
	}
	if got.Title != title || got.Priority != prio || got.Class != class || got.State != model.StateQueued {
		t.Fatalf("after update: %q prio %d class %s state %s", got.Title, got.Priority, got.Class, got.State)
	}
	if fresh := k.get(t, task.ID); fresh.Title != title || fresh.Priority != prio {
		t.Fatalf("Get after update: %q prio %d", fresh.Title, fresh.Priority)
	}

	held := k.claim(t, task.ID, "SANDMAN")
	other := "stolen"
	_, err = ed.Update(ctx, task.ID, sources.Edit{Actor: "alice", Title: &other})
	wantCode(t, "update of a held task without its token", err, model.CodeConflict)
	_, err = ed.Update(ctx, task.ID, sources.Edit{Actor: "ORACLE", Token: "not-the-token", Title: &other})
	wantCode(t, "update with a wrong token", err, model.CodeLostLock)
	_, err = ed.Update(ctx, task.ID, sources.Edit{Actor: "SANDMAN", Token: held.Claim().Token, State: model.StateDone})
	wantCode(t, "a state change under a live claim", err, model.CodeMisconfigured)
	_, err = ed.Update(ctx, task.ID, sources.Edit{Actor: "SANDMAN", Token: held.Claim().Token, State: model.StateClaimed})
	wantCode(t, "update to the claimed state", err, model.CodeMisconfigured)
	k.unchanged(t, held, "a refused update")
	mine := "split in two"
	got, err = ed.Update(ctx, task.ID, sources.Edit{Actor: "SANDMAN", Token: held.Claim().Token, Title: &mine})
	if err != nil {
		t.Fatalf("update by the holder: %v", err)
	}
	if got.Title != mine || got.Claim().Token != held.Claim().Token || got.State != model.StateClaimed {
		t.Fatalf("the holder's update: %s title %q", describe(got), got.Title)
	}
	if _, err := k.src.Heartbeat(ctx, task.ID, held.Claim().Token, 0); err != nil {
		t.Fatalf("the holder's token no longer works after its update: %v", err)
	}

	free := k.create(t, sources.NewTask{Title: "parked by hand"})
	got, err = ed.Update(ctx, free.ID, sources.Edit{Actor: "alice", State: model.StateBlocked, Reason: "waiting for the vendor"})
	if err != nil {
		t.Fatalf("block a free task: %v", err)
	}
	if got.State != model.StateBlocked || got.Held() {
		t.Fatalf("after update to blocked: %s", describe(got))
	}
	if n, _ := k.src.Next(ctx, "SANDMAN"); n != nil && n.ID == free.ID {
		t.Fatal("a blocked task is still handed out by next")
	}
	// Blocked -> the queue is unblock's, a person's audited move, never
	// update's (model.CheckStatusEdit); a task parked in the Backlog is
	// released by update.
	blocked := k.get(t, free.ID)
	_, err = ed.Update(ctx, free.ID, sources.Edit{Actor: "SANDMAN", State: model.StateQueued})
	wantCode(t, "update of a blocked task back to the queue", err, model.CodeMisconfigured)
	k.unchanged(t, blocked, "a refused unblock by update")
	got, err = ed.Update(ctx, free.ID, sources.MoveEdit(model.MoveUnblock, sources.Human{Actor: "alice", Expect: blocked.Version}))
	if err != nil || got.State != model.StateQueued {
		t.Fatalf("unblock back to the queue: %v %v", got, err)
	}
	if parked, err := k.src.Create(ctx, sources.NewTask{Title: "in the backlog", Parked: true}); err == nil && parked.InBacklog() {
		if got, err := ed.Update(ctx, parked.ID, sources.Edit{Actor: "alice", State: model.StateQueued}); err != nil || got.State != model.StateQueued {
			t.Fatalf("update --status Ready of a task in the backlog: %v %v", got, err)
		}
	}
	if _, err := ed.Update(ctx, free.ID, sources.Edit{Actor: "alice"}); model.CodeOf(err) != model.CodeMisconfigured {
		t.Fatalf("an empty edit: %v, want MISCONFIGURED", err)
	}
	if _, err := ed.Update(ctx, "no-such-task", sources.Edit{Actor: "alice", Title: &title}); err == nil {
		t.Fatal("update of an unknown task succeeded")
	}

	// Done, Review, Failed and Canceled belong to their commands
	// (model.CheckStatusEdit): no update moves a task into or out of them.
	ready := k.create(t, sources.NewTask{Title: "never claimed"})
	for _, to := range []model.State{model.StateDone, model.StateReview, model.StateFailed, model.StateCanceled} {
		_, err := ed.Update(ctx, ready.ID, sources.Edit{Actor: "alice", State: to})
		wantCode(t, "update of a ready task to "+to.String(), err, model.CodeMisconfigured)
	}
	k.unchanged(t, ready, "a refused status update")
	inReview := k.create(t, sources.NewTask{Title: "in review"})
	tok := k.claim(t, inReview.ID, "SANDMAN").Claim().Token
	if _, err := k.src.Finish(ctx, inReview.ID, tok, sources.Outcome{State: model.StateReview}); err != nil {
		t.Fatal(err)
	}
	reviewed := k.get(t, inReview.ID)
	for _, to := range []model.State{model.StateDone, model.StateQueued, model.StateBlocked} {
		_, err := ed.Update(ctx, inReview.ID, sources.Edit{Actor: "alice", State: to})
		wantCode(t, "update of a task in review to "+to.String(), err, model.CodeMisconfigured)
	}
	k.unchanged(t, reviewed, "a refused update of a task in review")
}

// testSubtasks: seed 002 enforces sub-task completion at done time. A
// backend without sub-tasks must refuse a parent rather than drop it.
func testSubtasks(t *testing.T, k *kit) {
	ctx := k.ctx(t)
	parent := k.create(t, sources.NewTask{Title: "epic"})
	if !k.src.Caps().Subtasks {
		_, err := k.src.Create(ctx, sources.NewTask{Title: "child", Parent: parent.ID})
		wantCode(t, "a sub-task on a backend without sub-tasks", err, model.CodeMisconfigured)
		return
	}
	child, err := k.src.Create(ctx, sources.NewTask{Title: "child", Parent: parent.ID})
	if err != nil {
		t.Fatalf("create a sub-task: %v", err)
	}
	if child.More().Parent != parent.ID {
		t.Fatalf("sub-task's parent is %q, want %q", child.More().Parent, parent.ID)
	}
	_, err = k.src.Create(ctx, sources.NewTask{Title: "orphan", Parent: "no-such-task"})
	wantCode(t, "a sub-task of an unknown parent", err, model.CodeMisconfigured)
	if got := k.get(t, parent.ID); got.OpenSubtasks != 1 {
		t.Fatalf("parent has %d open sub-tasks, want 1", got.OpenSubtasks)
	}
	held := k.claim(t, parent.ID, "SANDMAN")
	_, err = k.src.Finish(ctx, parent.ID, held.Claim().Token, sources.Outcome{State: model.StateDone})
	wantCode(t, "complete with an open sub-task", err, model.CodeIncompleteSubtasks)
	k.unchanged(t, held, "a refused completion")
	if _, err := k.src.Finish(ctx, parent.ID, "not-the-token", sources.Outcome{State: model.StateDone}); model.CodeOf(err) != model.CodeLostLock {
		t.Fatalf("complete with a wrong token and open sub-tasks: %v, want LOST_LOCK", err)
	}
	if _, err := k.src.Heartbeat(ctx, parent.ID, held.Claim().Token, 0); err != nil {
		t.Fatalf("the parent's claim did not survive the refusal: %v", err)
	}
	c := k.claim(t, child.ID, "ORACLE")
	if _, err := k.src.Finish(ctx, child.ID, c.Claim().Token, sources.Outcome{State: model.StateDone}); err != nil {
		t.Fatalf("complete the sub-task: %v", err)
	}
	done, err := k.src.Finish(ctx, parent.ID, held.Claim().Token, sources.Outcome{State: model.StateDone})
	if err != nil || done.State != model.StateDone {
		t.Fatalf("complete once every sub-task is done: %v %v", done, err)
	}
}

// testEscalationMark: a mark lands only under the claim's token, is shown
// on the task, and ends the lease: the holder's token is no longer current
// (model.TokenCurrent), so its heartbeat gets LOST_LOCK and the mark stays.
// A source that declares no escalation refuses every mark and changes
// nothing.
func testEscalationMark(t *testing.T, k *kit) {
	mk := k.src
	ctx := k.ctx(t)
	task := k.create(t, sources.NewTask{Title: "stuck"})
	held := k.claim(t, task.ID, "SANDMAN")
	if !k.src.Caps().Escalation {
		wantCode(t, "a mark on a source without escalation", mk.MarkEscalation(ctx, task.ID, held.Claim().Token, model.LevelStale), model.CodeMisconfigured)
		k.unchanged(t, held, "a refused mark")
		return
	}
	if err := mk.MarkEscalation(ctx, task.ID, held.Claim().Token, model.LevelStale); err != nil {
		t.Fatalf("mark: %v", err)
	}
	if err := mk.MarkEscalation(ctx, task.ID, "not-the-token", model.LevelUrgent); model.CodeOf(err) != model.CodeLostLock {
		t.Fatalf("a mark under a stale token: %v, want LOST_LOCK", err)
	}
	if got := k.get(t, task.ID); got.Escalated != model.LevelStale {
		t.Fatalf("the task shows level %q after the mark, want stale", got.Escalated)
	}
	_, err := k.src.Heartbeat(ctx, task.ID, held.Claim().Token, 0)
	wantCode(t, "a marked holder's heartbeat", err, model.CodeLostLock)
	if got := k.get(t, task.ID); got.Escalated != model.LevelStale || got.Claim().Token != held.Claim().Token {
		t.Fatalf("a refused heartbeat changed the marked claim: level %q, token kept %v", got.Escalated, got.Claim().Token == held.Claim().Token)
	}
}
