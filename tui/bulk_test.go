package tui

import (
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// TestBulkReleaseOfMarkedStaleClaims: * marks every stale claim the
// filter shows, r previews them (count, sources), asks one optional reason
// (a force-release needs none, model.Action.Needs) and y/N,
// and applies them one by one; TASK-5, taken over by carol after the
// preview, is refused and named in the summary, which stays in Activity.
func TestBulkReleaseOfMarkedStaleClaims(t *testing.T) {
	r := newRig(t)
	r.size(120, 40)
	r.press("3", "*")
	if len(r.m.board.marks) != 3 || !strings.Contains(r.screen(), "✓ ") {
		t.Fatalf("* marked %d, want the 3 stale claims shown:\n%s", len(r.m.board.marks), r.screen())
	}
	r.press("r")
	screen := r.screen()
	for _, want := range []string{"Force-release 3 marked tasks?", "prod 2 · staging 1", "▏optional"} {
		if !strings.Contains(screen, want) {
			t.Fatalf("the dialog lacks %q:\n%s", want, screen)
		}
	}
	r.typeText("node lost")
	r.press("enter")
	for _, want := range []string{"apply to, each only if still as seen (3)", "prod/TASK-5  Compact the event log", "[y/N]"} {
		if !strings.Contains(r.screen(), want) {
			t.Fatalf("the preview lacks %q:\n%s", want, r.screen())
		}
	}
	seen, err := r.prod.Get(t.Context(), "5")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.prod.Takeover(t.Context(), "5", sources.Human{Actor: "carol", Expect: seen.Version}); err != nil {
		t.Fatal(err)
	}
	r.press("y")
	screen = r.screen()
	if !strings.Contains(screen, "force-release of 3: 2 applied, 1 refused, 0 failed (TASK-5)") || !strings.Contains(screen, "changed since you looked") {
		t.Fatalf("the summary does not name the changed task:\n%s", screen)
	}
	for _, c := range []struct {
		src  interface{ Name() string }
		id   string
		held bool
	}{{r.prod, "7", false}, {r.staging, "s2", false}, {r.prod, "5", true}} {
		mem := r.prod
		if c.src == r.staging {
			mem = r.staging
		}
		now, err := mem.Get(t.Context(), c.id)
		if err != nil {
			t.Fatal(err)
		}
		if now.Held() != c.held {
			t.Errorf("%s/%s held=%v after the bulk release, want %v", c.src.Name(), c.id, now.Held(), c.held)
		}
	}
	r.press("esc", "5")
	if acts := r.m.pane().acts; len(acts) == 0 || !strings.Contains(acts[0].What, "force-release of 3: 2 applied, 1 refused, 0 failed (TASK-5)") {
		t.Fatalf("the summary is not kept in Activity: %+v", acts)
	}
	if len(r.m.board.marks) != 0 {
		t.Fatalf("marks outlived the action: %d", len(r.m.board.marks))
	}
}

// TestMarksToggleAndEscClearsThem: space marks and moves on, space again
// unmarks, esc clears every mark before it clears the filter.
func TestMarksToggleAndEscClearsThem(t *testing.T) {
	r := newRig(t)
	r.press("/")
	r.typeText("task")
	r.press("enter", "space", "space")
	if len(r.m.board.marks) != 2 {
		t.Fatalf("two spaces marked %d", len(r.m.board.marks))
	}
	r.press("up", "space")
	if len(r.m.board.marks) != 1 {
		t.Fatalf("space on a marked task left %d marks, want 1", len(r.m.board.marks))
	}
	r.press("esc")
	if len(r.m.board.marks) != 0 || r.m.input.filter.Value() != "task" {
		t.Fatalf("esc: %d marks, filter %q; want the marks cleared and the filter kept", len(r.m.board.marks), r.m.input.filter.Value())
	}
	r.press("esc")
	if r.m.input.filter.Value() != "" {
		t.Fatal("a second esc must clear the filter")
	}
}

// TestBulkOnReadOnlyIsRefusedInThePreview: the archive's task is refused
// at the desk's layer, and with nothing to apply nothing is asked.
func TestBulkOnReadOnlyIsRefusedInThePreview(t *testing.T) {
	r := newRig(t)
	r.size(120, 40)
	r.selectKey(queueView, "A-1")
	r.press("space", "x")
	r.typeText("dup")
	r.press("enter")
	if !strings.Contains(r.screen(), `"archive" is read-only`) {
		t.Fatalf("the preview does not refuse the read-only task:\n%s", r.screen())
	}
	if !strings.Contains(r.screen(), "nothing to apply") {
		t.Fatalf("a preview with nothing to apply went on:\n%s", r.screen())
	}
}

// TestCtrlSpaceMarksARange: ctrl-space marks from the last mark to the
// cursor, downwards and then back up, and says so when there is no mark
// to start from.
func TestCtrlSpaceMarksARange(t *testing.T) {
	r := newRig(t)
	r.press("7", "ctrl+space")
	if len(r.m.board.marks) != 0 || !strings.Contains(r.screen(), "no mark to range from here") {
		t.Fatalf("ctrl-space without a mark: %d marks\n%s", len(r.m.board.marks), r.screen())
	}
	r.press("down", "space", "down", "down", "ctrl+space")
	shown := r.m.pane().shown
	want := func(rows ...int) {
		t.Helper()
		if len(r.m.board.marks) != len(rows) {
			t.Fatalf("%d marked, want rows %v", len(r.m.board.marks), rows)
		}
		for _, i := range rows {
			if _, ok := r.m.board.marks[shown[i].t.Ref()]; !ok {
				t.Fatalf("row %d is not marked; want rows %v", i, rows)
			}
		}
	}
	want(1, 2, 3, 4)
	r.press("home", "ctrl+space")
	want(0, 1, 2, 3, 4)
}

// Space marks the task under the cursor and moves to the next row; the
// bulk dialog lists every marked task by id and title before the reason,
// the preview lists those it would apply to, and the summary those it
// applied: a wrong mark is seen before y.
func TestBulkDialogsNameTheMarkedTasks(t *testing.T) {
	r := newRig(t)
	r.size(120, 40)
	r.selectKey(queueView, "TASK-1")
	r.press("space")
	second := r.m.selected()
	r.press("space")
	if !strings.Contains(r.screen(), "marked "+second.DisplayKey()+" · 2 marked · cursor on the next row") {
		t.Fatalf("the note does not say what space did:\n%s", r.screen())
	}
	marked := r.m.board.marked()
	if len(marked) != 2 {
		t.Fatalf("%d marked, want 2", len(marked))
	}
	want := func(stage string) {
		t.Helper()
		s := r.screen()
		for _, mt := range marked {
			if !strings.Contains(s, mt.Source+"/"+mt.DisplayKey()+"  "+mt.Title) {
				t.Fatalf("%s does not name %s (%s):\n%s", stage, mt.DisplayKey(), mt.Title, s)
			}
		}
	}
	r.press("x")
	want("the reason's dialog")
	r.typeText("duplicate")
	r.press("enter")
	want("the preview")
	r.press("y")
	want("the summary")
	if !strings.Contains(r.screen(), "applied (2)") {
		t.Fatalf("the summary does not list what it applied:\n%s", r.screen())
	}
}

// A preview longer than the screen scrolls: the arrows show the tasks
// below, and no other key than y applies it.
func TestABulkPreviewScrolls(t *testing.T) {
	r := newRig(t)
	r.size(80, 24)
	r.press("7", "*", "x")
	r.typeText("sweep")
	r.press("enter")
	s := r.screen()
	if !strings.Contains(s, "more · ↑/↓ pgup/pgdown scroll") {
		t.Fatalf("a long preview does not say it scrolls:\n%s", s)
	}
	p := r.m.dialogs[0].(*bulkDialog).preview
	last := append(p.Apply, p.Refused...)[len(p.Apply)+len(p.Refused)-1]
	key := last.Source + "/" + cmpKey(last)
	if strings.Contains(s, key) {
		t.Fatalf("the last task %s is on the first page; the test needs a longer list", key)
	}
	r.press("end")
	if !strings.Contains(r.screen(), key) {
		t.Fatalf("scrolling to the end does not show %s:\n%s", key, r.screen())
	}
	if len(r.m.dialogs) != 1 || r.m.work.bulk != nil {
		t.Fatal("scrolling closed or applied the preview")
	}
}

// TestAReasonIsAskedExactlyWhenTheActionNeedsOne: for every action the
// dashboard offers, one task's form and the bulk dialog refuse to go on
// without a reason exactly when model.Action.Needs says one is required.
func TestAReasonIsAskedExactlyWhenTheActionNeedsOne(t *testing.T) {
	r := newRig(t)
	task := r.get("2")
	for _, ta := range taskActions {
		need := ta.action.Needs()
		f := newReasonForm(sources.Request{Action: ta.action, Seen: task})
		f.fields = append(f.fields, formField{name: "to", edit: &lineEdit{limit: 100}})
		f.fields[1].edit.SetValue("bravo")
		f.submit()
		if asked := f.problem == "a reason is required"; asked != need.Reason {
			t.Errorf("%s: one task's form without a reason says %q; Needs().Reason is %v", ta.action, f.problem, need.Reason)
		}
		b := &bulkDialog{req: sources.Request{Action: ta.action}, tasks: []*model.Task{task}, reason: &lineEdit{limit: 500}, agents: []string{"bravo"}}
		b.judge(r.m.env())
		if asked := b.problem == "a reason is required"; asked != need.Reason {
			t.Errorf("%s: the bulk dialog without a reason says %q; Needs().Reason is %v", ta.action, b.problem, need.Reason)
		}
	}
}
