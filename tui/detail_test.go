package tui

import (
	"strings"
	"testing"
	"time"

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
		cur.EditMore().History = append(cur.More().History, model.Event{At: t0.Add(-time.Minute), Actor: "carol", Action: "comment", Reason: "is this stuck?"})
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
		r.press("enter", "c", "enter", "y")
		if got := r.get("4"); got.Claim().Name != "HUMAN:alice" {
			t.Fatalf("c in the detail did not claim: holder %q", got.Claim().Name)
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
