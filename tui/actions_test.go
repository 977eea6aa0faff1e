package tui

// The actions a human takes on a row: confirmation, claim, release,
// cancel, hand-off, a task that changed meanwhile, read-only.

import (
	"context"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

func TestConfirmationDefaultsToNo(t *testing.T) {
	for _, answer := range []string{"enter", "n", "esc", "space", "q"} {
		t.Run(answer, func(t *testing.T) {
			r := newRig(t)
			r.selectKey(leasesView, "TASK-4")
			before := r.get("4")
			r.press("r", "enter") // no reason: it is optional
			screen := r.screen()
			for _, want := range []string{"Force-release TASK-4 on prod?", "AGENT alpha · run r-17 · node n1", "[y/N]"} {
				if !strings.Contains(screen, want) {
					t.Fatalf("the confirmation lacks %q:\n%s", want, screen)
				}
			}
			r.press(answer)
			if len(r.m.dialogs) != 0 || r.get("4").Version != before.Version {
				t.Fatalf("answering %q changed the task or left the dialog open", answer)
			}
			if !strings.Contains(r.screen(), "nothing done") {
				t.Fatalf("the screen does not say nothing was done:\n%s", r.screen())
			}
		})
	}
}

func TestClaimAsHumanUpdatesTheRowAtOnceAndIsReconciledByThePoll(t *testing.T) {
	r := newRig(t)
	r.selectKey(leasesView, "TASK-4")
	r.press("c", "enter", "y") // no reason: it is optional
	if got := r.get("4"); got.Claim().Holder != model.HolderHuman || got.Claim().Name != "HUMAN:alice" {
		t.Fatalf("backend holder %s %s, want HUMAN:alice", got.Claim().Holder, got.Claim().Name)
	}
	// No poll yet: the row shows the result the action returned.
	if row := rowOf(t, r, "TASK-4"); !strings.Contains(row, "HUMAN:alice") {
		t.Fatalf("row before the poll: %q", row)
	}
	if !strings.Contains(r.screen(), "takeover TASK-4 applied") {
		t.Fatalf("no word of the result:\n%s", r.screen())
	}
	r.poll()
	if len(r.m.board.results) != 0 {
		t.Fatal("the poll that shows the result must retire the optimistic row")
	}
	r.press("5")
	if !strings.Contains(r.screen(), "alice takeover") {
		t.Fatalf("the action is not in Activity:\n%s", r.screen())
	}
}

// rowOf is the screen line of a task in the current view.
func rowOf(t *testing.T, r *rig, key string) string {
	t.Helper()
	for _, l := range strings.Split(r.screen(), "\n") {
		if strings.Contains(l, " "+key+" ") {
			return l
		}
	}
	t.Fatalf("%s is not on screen:\n%s", key, r.screen())
	return ""
}

func TestForceReleasePutsTheTaskBackInTheQueue(t *testing.T) {
	r := newRig(t)
	r.selectKey(staleView, "TASK-5")
	r.press("r", "enter", "y")
	if got := r.get("5"); got.State != model.StateQueued || got.Held() {
		t.Fatalf("after force-release: %s held by %q", got.State, got.Claim().Name)
	}
	r.press("1")
	rowOf(t, r, "TASK-5")
}

func TestCancelNeedsAReason(t *testing.T) {
	r := newRig(t)
	r.selectKey(queueView, "TASK-2")
	r.press("x", "enter")
	if !strings.Contains(r.screen(), "a reason is required") {
		t.Fatalf("an empty reason was accepted:\n%s", r.screen())
	}
	r.typeText("duplicate of TASK-1")
	r.press("enter")
	if !strings.Contains(r.screen(), "duplicate of TASK-1") || !strings.Contains(r.screen(), "[y/N]") {
		t.Fatalf("the confirmation does not repeat the reason:\n%s", r.screen())
	}
	r.press("y")
	if got := r.get("2"); got.State != model.StateCanceled || got.More().Reason != "duplicate of TASK-1" {
		t.Fatalf("after cancel: %s %q", got.State, got.More().Reason)
	}
}

func TestHandOffPicksAgentReasonAndPriority(t *testing.T) {
	r := newRig(t)
	r.selectKey(staleView, "TASK-5")
	r.press("h")
	if !strings.Contains(r.screen(), "to       ANY") {
		t.Fatalf("the hand-off does not start at ANY:\n%s", r.screen())
	}
	r.press("right") // ANY → alpha, the first known agent
	r.press("tab")
	r.typeText("bravo is stuck")
	r.press("tab", "right", "right") // medium → high → critical
	r.press("enter")
	if !strings.Contains(r.screen(), "alpha, priority critical") {
		t.Fatalf("the confirmation lacks target and priority:\n%s", r.screen())
	}
	r.press("y")
	got := r.get("5")
	if res := got.Reserved(); res == nil || res.For != "alpha" || res.Priority != "critical" || res.Reason != "bravo is stuck" || got.Held() {
		t.Fatalf("after hand-off: reservation %+v, holder %q", res, got.Claim().Name)
	}
}

func TestActionOnATaskThatChangedIsRefusedAndSaysWhatChanged(t *testing.T) {
	r := newRig(t)
	r.selectKey(leasesView, "TASK-4")
	// Between the last poll and the keypress, bob takes the task over.
	seen := r.get("4")
	if _, err := r.prod.Takeover(context.Background(), "4", sources.Human{Actor: "bob", Expect: seen.Version}); err != nil {
		t.Fatal(err)
	}
	r.press("r", "enter", "y")
	if got := r.get("4"); got.Claim().Name != "HUMAN:bob" || got.State != model.StateClaimed {
		t.Fatalf("the refused release changed the task: %s %s", got.State, got.Claim().Name)
	}
	screen := r.screen()
	for _, want := range []string{"refused", "CONFLICT", "holder AGENT alpha → HUMAN HUMAN:bob", "nothing was done"} {
		if !strings.Contains(strings.Join(strings.Fields(screen), " "), want) {
			t.Fatalf("the screen does not say %q:\n%s", want, screen)
		}
	}
	if _, busy := r.m.work.pending["prod/4"]; busy {
		t.Fatal("the refused action is still marked pending")
	}
}

func TestReadOnlyHidesAndRefusesActions(t *testing.T) {
	t.Run("everywhere", func(t *testing.T) {
		r := newRig(t, withReadOnly)
		r.selectKey(leasesView, "TASK-4")
		for _, k := range []string{"c", "r", "x", "h"} {
			r.press(k)
			if len(r.m.dialogs) != 0 {
				t.Fatalf("%q opened a dialog in read-only mode", k)
			}
		}
		r.press("?")
		if s := r.screen(); strings.Contains(s, "release") || !strings.Contains(s, "read-only") {
			t.Fatalf("help offers actions in read-only mode:\n%s", s)
		}
	})
	t.Run("per source, and the desk refuses even if asked", func(t *testing.T) {
		r := newRig(t)
		r.selectKey(queueView, "A-1")
		r.press("c")
		if len(r.m.dialogs) != 0 || strings.Contains(r.screen(), "c claim") {
			t.Fatalf("a read-only source's task offers claim:\n%s", r.screen())
		}
		r.run(r.m.send(sources.Request{Action: model.ActionTakeover, Seen: r.m.selected()}))
		if !strings.Contains(r.screen(), `source "archive" is read-only`) {
			t.Fatalf("the desk did not refuse:\n%s", r.screen())
		}
		r.press("esc")
		r.selectKey(queueView, "TASK-1")
		if !strings.Contains(r.screen(), "c claim") {
			t.Fatal("a writable source's task must offer claim again")
		}
	})
}
