package notion

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// Seed 002 enforces sub-task completion at done time through the
// Dependencies rollup, which Notion computes and the API cannot write: the
// emulator sets it as Notion would.
func TestCompleteRefusesOpenSubtasksFromTheRollup(t *testing.T) {
	ctx := context.Background()
	e := newEmulator(t)
	src := e.open(t, e.config(e.database(t, withExtras(presetSchema(PresetNtask), PresetNtask)), PresetNtask))
	task, err := src.Create(ctx, sources.NewTask{Title: "epic"})
	if err != nil {
		t.Fatal(err)
	}
	rollup := func(n int) {
		raw, _ := json.Marshal(map[string]any{"type": "number", "number": n, "function": "count"})
		if err := e.srv.SetComputed(task.ID, "Dependencies", raw); err != nil {
			t.Fatal(err)
		}
	}
	rollup(2)
	held, err := src.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "SANDMAN"})
	if err != nil {
		t.Fatal(err)
	}
	if held.OpenSubtasks != 2 {
		t.Fatalf("open sub-tasks read from the rollup: %d, want 2", held.OpenSubtasks)
	}
	_, err = src.Finish(ctx, task.ID, held.Claim().Token, sources.Outcome{State: model.StateDone})
	if model.CodeOf(err) != model.CodeIncompleteSubtasks {
		t.Fatalf("complete with open sub-tasks: %v, want INCOMPLETE_SUBTASKS", err)
	}
	if now, _ := src.Get(ctx, task.ID); now.State != model.StateClaimed || now.Claim().Token != held.Claim().Token {
		t.Fatalf("the refused completion changed the task: %s %q", now.State, now.Claim().Token)
	}
	rollup(0) // the sub-tasks got done
	done, err := src.Finish(ctx, task.ID, held.Claim().Token, sources.Outcome{State: model.StateDone})
	if err != nil || done.State != model.StateDone {
		t.Fatalf("complete once the rollup says none are open: %v %v", done, err)
	}
}

// Past 25 relations the page object's rollup is inaccurate; the page
// property endpoint has the exact count, and completion goes by it.
func TestCompleteCountsSubtasksExactlyPast25Relations(t *testing.T) {
	ctx := context.Background()
	e := newEmulator(t)
	src := e.open(t, e.config(e.database(t, withExtras(presetSchema(PresetNtask), PresetNtask)), PresetNtask))
	task, err := src.Create(ctx, sources.NewTask{Title: "epic"})
	if err != nil {
		t.Fatal(err)
	}
	exact, _ := json.Marshal(map[string]any{"type": "number", "number": 3, "function": "count"})
	shown, _ := json.Marshal(map[string]any{"type": "number", "number": 0, "function": "count"})
	if err := e.srv.SetComputed(task.ID, "Dependencies", exact); err != nil {
		t.Fatal(err)
	}
	if err := e.srv.SetComputedPageView(task.ID, "Dependencies", shown); err != nil {
		t.Fatal(err)
	}
	held, err := src.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "SANDMAN"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = src.Finish(ctx, task.ID, held.Claim().Token, sources.Outcome{State: model.StateDone})
	if model.CodeOf(err) != model.CodeIncompleteSubtasks || !strings.Contains(err.Error(), "3 sub-task") {
		t.Fatalf("complete with 3 open sub-tasks the page object hides: %v, want INCOMPLETE_SUBTASKS", err)
	}
}
