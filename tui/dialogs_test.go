package tui

import (
	"strings"
	"testing"
	"time"
)

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
	if got := r.get("1"); got.ReservedFor() != "zulu-9" || got.Reserved().Priority != "urgent" {
		t.Fatalf("after hand-off: %+v, want zulu-9 at urgent (high in the tasks' words)", got.Reserved())
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
	r.m.status.fail("handoff TASK-4 refused: CONFLICT")
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
