package tui

import (
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/claimdeck/claimdeck/model"
)

func TestTheDetailIsAWorkingPlace(t *testing.T) {
	t.Run("it refreshes with every poll", func(t *testing.T) {
		r := newRig(t)
		r.selectKey(leasesView, "TASK-4")
		r.press("enter")
		if _, err := r.prod.Heartbeat(t.Context(), "4", "tok-r-17", 40*time.Minute); err != nil {
			t.Fatal(err)
		}
		r.poll()
		if s := r.screen(); !strings.Contains(s, "expires     2026-11-21 03:40:00 (in 40m)") {
			t.Fatalf("the open detail did not follow the heartbeat:\n%s", s)
		}
	})
	t.Run("it shows the whole trail its source keeps", func(t *testing.T) {
		r := newRig(t)
		cur := *r.get("4")
		cur.History = append(cur.History, model.Event{At: t0.Add(-time.Minute), Actor: "carol", Action: "comment", Reason: "is this stuck?"})
		r.prod.Put(&cur) // in the source, not yet in a poll
		r.selectKey(leasesView, "TASK-4")
		r.press("enter", "end")
		if s := r.screen(); !strings.Contains(s, "comment        carol: is this stuck?") {
			t.Fatalf("the detail lacks the trail read from the source:\n%s", s)
		}
	})
	t.Run("it wraps the whole title", func(t *testing.T) {
		r := newRig(t)
		r.selectKey(parkedView, "TASK-10")
		r.press("enter")
		s := r.screen()
		for _, part := range []string{"Upgrade the payments SDK to v5 across every", "checkout service"} {
			if !strings.Contains(s, part) {
				t.Fatalf("the title is cut (%q missing):\n%s", part, s)
			}
		}
	})
	t.Run("c claims from it", func(t *testing.T) {
		r := newRig(t)
		r.selectKey(leasesView, "TASK-4")
		r.press("enter", "c", "y")
		if got := r.get("4"); got.Claim.Name != "HUMAN:alice" {
			t.Fatalf("c in the detail did not claim: holder %q", got.Claim.Name)
		}
		if _, ok := r.m.dialogs[len(r.m.dialogs)-1].(*taskDialog); !ok {
			t.Fatal("after the action the detail must still be open")
		}
	})
	t.Run("h hands off from it", func(t *testing.T) {
		r := newRig(t)
		r.selectKey(leasesView, "TASK-4")
		r.press("enter", "h")
		if _, ok := r.m.dialogs[len(r.m.dialogs)-1].(*formDialog); !ok {
			t.Fatalf("h in the detail did not open the hand-off form:\n%s", r.screen())
		}
	})
	t.Run("it opens from an Activity line", func(t *testing.T) {
		r := newRig(t)
		r.press("5", "G", "enter") // the oldest line: carol's takeover of task 6
		if _, ok := r.m.dialogs[0].(*taskDialog); !ok || !strings.Contains(r.screen(), "TASK-6 · prod") {
			t.Fatalf("enter on an Activity line did not open its task:\n%s", r.screen())
		}
	})
	t.Run("it opens from a node's claimed tasks", func(t *testing.T) {
		r := newRig(t)
		r.press("4", "enter") // n3, DOWN, first
		r.press("enter")
		if s := r.screen(); !strings.Contains(s, "TASK-7 · prod") {
			t.Fatalf("enter on a node's task did not open it:\n%s", s)
		}
	})
	t.Run("y copies the id, only when pressed", func(t *testing.T) {
		var copied []string
		r := newRig(t, func(o *Options) { o.Copy = func(s string) { copied = append(copied, s) } })
		r.selectKey(leasesView, "TASK-4")
		r.press("enter")
		if len(copied) != 0 {
			t.Fatal("copied without being asked")
		}
		r.press("y")
		if len(copied) != 1 || copied[0] != "4" {
			t.Fatalf("y copied %q, want the id 4", copied)
		}
	})
}

func TestActionKeysInReadOnlySayReadOnly(t *testing.T) {
	r := newRig(t, withReadOnly)
	r.selectKey(leasesView, "TASK-4")
	for _, k := range []string{"c", "r", "x", "h"} {
		r.press(k)
		if len(r.m.dialogs) != 0 || !strings.Contains(r.screen(), "read-only") {
			t.Fatalf("%s in read-only mode:\n%s", k, r.screen())
		}
		r.press("esc")
	}
	r.press("enter", "c")
	if len(r.m.dialogs) != 1 || !strings.Contains(r.screen(), "read-only") {
		t.Fatalf("c in the detail in read-only mode:\n%s", r.screen())
	}
}

func TestHandOffTakesATypedNameAndWarnsOfADownNode(t *testing.T) {
	r := newRig(t)
	r.selectKey(queueView, "TASK-1") // high priority
	r.press("h")
	if s := r.screen(); !strings.Contains(s, "‹ high ›") {
		t.Fatalf("the priority does not start at the task's own:\n%s", s)
	}
	r.typeText("delta") // runs on n3, which is DOWN
	if s := r.screen(); !strings.Contains(s, "delta runs on node n3, which is DOWN") {
		t.Fatalf("no warning for a target on a DOWN node:\n%s", s)
	}
	r.press("ctrl+w")
	r.typeText("zulu-9") // nobody has seen it: typed, not picked
	if s := r.screen(); strings.Contains(s, "DOWN: it may") {
		t.Fatalf("a warning for an agent on no known node:\n%s", s)
	}
	r.press("enter", "y")
	if got := r.get("1"); got.Reservation.For != "zulu-9" || got.Reservation.Priority != "urgent" {
		t.Fatalf("after hand-off: %+v, want zulu-9 at urgent (high in the tasks' words)", got.Reservation)
	}
}

func TestReleaseAsksForAnOptionalReason(t *testing.T) {
	r := newRig(t)
	r.selectKey(leasesView, "TASK-4")
	r.press("r")
	r.typeText("agent wedged")
	r.press("enter")
	if s := r.screen(); !strings.Contains(s, "agent wedged") || !strings.Contains(s, "[y/N]") {
		t.Fatalf("the confirmation lacks the reason:\n%s", s)
	}
	r.press("y", "5")
	if s := r.screen(); !strings.Contains(s, "agent wedged") {
		t.Fatalf("the reason is not in Activity:\n%s", s)
	}
}

func TestStatusMessagesExpire(t *testing.T) {
	r := newRig(t)
	r.selectKey(leasesView, "TASK-4")
	r.press("r", "esc") // "nothing done"
	if !strings.Contains(r.screen(), "nothing done") {
		t.Fatal("no note")
	}
	r.now = r.now.Add(4 * time.Second)
	r.m.Update(tickMsg{})
	if !strings.Contains(r.screen(), "nothing done") {
		t.Fatal("the note went before anyone could read it")
	}
	r.now = r.now.Add(2 * time.Second)
	r.m.Update(tickMsg{})
	if strings.Contains(r.screen(), "nothing done") {
		t.Fatal("the note outstays its time")
	}
	r.m.fail("handoff TASK-4 refused: CONFLICT")
	r.now = r.now.Add(10 * time.Second)
	r.m.Update(tickMsg{})
	if !strings.Contains(r.screen(), "refused: CONFLICT") {
		t.Fatal("a refusal must stay longer than a note")
	}
	r.now = r.now.Add(25 * time.Second)
	r.m.Update(tickMsg{})
	if strings.Contains(r.screen(), "refused: CONFLICT") {
		t.Fatal("the refusal never goes")
	}
}

func TestADemoRunningFasterCountsInItsOwnTime(t *testing.T) {
	r := newRig(t, func(o *Options) { o.Speed = 60 })
	r.prod.Put(&model.Task{ID: "d1", Key: "D-1", Title: "fast", State: model.StateClaimed, RawStatus: "claimed", CreatedAt: t0.Add(-30 * time.Second),
		Claim: model.Claim{Holder: model.HolderAgent, Name: "alpha", Token: "t", ClaimedAt: t0.Add(-5 * time.Second), HeartbeatAt: t0.Add(-5 * time.Second), Expires: t0.Add(15 * time.Second)}})
	r.poll()
	r.size(120, 40)
	r.press("2")
	if row := rowOf(t, r, "D-1"); !strings.Contains(row, "5m") || !strings.Contains(row, "15:00") {
		t.Fatalf("15 s at 60× must read as 15:00 left, claimed 5m ago: %q", row)
	}
}

func TestASourceThatStopsAnsweringIsSaidToLag(t *testing.T) {
	r := newRig(t)
	r.size(120, 40)
	s := r.m.snap
	s.Sources = slices.Clone(s.Sources)
	for i := range s.Sources {
		s.Sources[i].Health.Every = 2 * time.Second
	}
	r.m.applySnapshot(s)
	if top := strings.Split(r.screen(), "\n")[0]; strings.Contains(top, "LAGGING") {
		t.Fatalf("a source polled 3 s ago lags: %q", top)
	}
	r.now = r.now.Add(10 * time.Second) // 13 s without an answer, polled every 2 s
	r.m.Update(tickMsg{})
	screen := r.screen()
	if top := strings.Split(screen, "\n")[0]; !strings.Contains(top, "PROD LAGGING") {
		t.Fatalf("the top bar does not say prod lags: %q", top)
	}
	if !strings.Contains(screen, "prod lagging · updated 13s ago") {
		t.Fatalf("the status bar does not say prod lags:\n%s", screen)
	}
	r.m.Update(tea.BlurMsg{})
	if strings.Contains(r.screen(), "LAGGING") {
		t.Fatal("paused, nobody polls: nothing lags")
	}
}
