package notion

import (
	"context"
	"encoding/json"
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
	_, err = src.Finish(ctx, task.ID, held.Claim.Token, sources.Outcome{State: model.StateDone})
	if model.CodeOf(err) != model.CodeIncompleteSubtasks {
		t.Fatalf("complete with open sub-tasks: %v, want INCOMPLETE_SUBTASKS", err)
	}
	if now, _ := src.Get(ctx, task.ID); now.State != model.StateClaimed || now.Claim.Token != held.Claim.Token {
		t.Fatalf("the refused completion changed the task: %s %q", now.State, now.Claim.Token)
	}
	rollup(0) // the sub-tasks got done
	done, err := src.Finish(ctx, task.ID, held.Claim.Token, sources.Outcome{State: model.StateDone})
	if err != nil || done.State != model.StateDone {
		t.Fatalf("complete once the rollup says none are open: %v %v", done, err)
	}
}
