package tui

import (
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/model"
)

func TestTheQueueMarksATaskWaitingOnOpenSubtasksAndItsDetailListsThem(t *testing.T) {
	r := newRig(t)
	r.size(120, 40)
	r.prod.Put(&model.Task{ID: "40", Key: "EPIC-1", Title: "Ship billing", State: model.StateQueued, CreatedAt: model.StampOf(t0), EditedAt: model.StampOf(t0)})
	r.prod.Put((&model.Task{ID: "41", Key: "SUB-1", Title: "Write the invoices", State: model.StateQueued, CreatedAt: model.StampOf(t0), EditedAt: model.StampOf(t0)}).WithMore(model.More{Parent: "40"}))
	r.prod.Put((&model.Task{ID: "42", Key: "SUB-2", Title: "Design the schema", State: model.StateDone, CreatedAt: model.StampOf(t0), EditedAt: model.StampOf(t0)}).WithMore(model.More{Parent: "40"}))
	// Same id, another source: not EPIC-1's.
	r.staging.Put((&model.Task{ID: "43", Key: "STG-9", Title: "Unrelated", State: model.StateQueued, CreatedAt: model.StampOf(t0), EditedAt: model.StampOf(t0)}).WithMore(model.More{Parent: "40"}))
	r.poll()

	r.press("/")
	r.typeText("epic-1")
	r.press("enter")
	screen := r.screen()
	if !strings.Contains(screen, "[1 open] Ship billing") {
		t.Fatalf("the queue does not mark EPIC-1 as waiting on one open sub-task:\n%s", screen)
	}
	r.press("enter")
	detail := r.screen()
	for _, want := range []string{"sub-tasks (2, 1 open)", "SUB-1      queued    Write the invoices", "SUB-2      done      Design the schema"} {
		if !strings.Contains(detail, want) {
			t.Errorf("EPIC-1's detail lacks %q:\n%s", want, detail)
		}
	}
	if strings.Contains(detail, "STG-9") {
		t.Errorf("a staging task with the same parent id is listed:\n%s", detail)
	}
	r.press("esc", "esc")
	r.press("/")
	r.typeText("sub-1")
	r.press("enter", "enter")
	if s := r.screen(); !strings.Contains(s, "parent      40 (EPIC-1  queued  Ship billing)") {
		t.Errorf("SUB-1's detail does not name its parent:\n%s", s)
	}
}
