package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/claimdeck/claimdeck/model"
)

// In a task's detail, ":sort pri desc⏎" used to reach the detail's keys:
// its r opened "Force-release TASK-4?", one y away from releasing a live
// claim. Text typed for a : line or a filter inside a dialog is dropped,
// typed a key at a time or as one burst; the y after it copies the id.
func TestTextTypedIntoADetailNeverReachesAnAction(t *testing.T) {
	for _, burst := range []bool{false, true} {
		for _, text := range []string{":sort pri desc", "/agent:alpha"} {
			r := newRig(t)
			r.selectKey(leasesView, "TASK-4")
			before := *r.get("4")
			r.press("enter")
			if burst {
				_, cmd := r.m.Update(tea.KeyPressMsg{Code: tea.KeyExtended, Text: text})
				r.run(cmd)
			} else {
				r.typeText(text)
			}
			if s := r.screen(); !strings.Contains(s, "dropping") {
				t.Fatalf("%q: the footer does not say the text is dropped:\n%s", text, s)
			}
			r.press("enter", "y")
			if n := len(r.m.dialogs); n != 1 {
				t.Fatalf("%q (burst %v): %d dialogs open, want the detail alone:\n%s", text, burst, n, r.screen())
			}
			if _, ok := r.m.dialogs[0].(*taskDialog); !ok {
				t.Fatalf("%q: the dialog open is %T, not the detail", text, r.m.dialogs[0])
			}
			after := r.get("4")
			if after.State != before.State || after.Claim().Token != before.Claim().Token {
				t.Fatalf("%q: the task changed: %v %q → %v %q", text, before.State, before.Claim().Name, after.State, after.Claim().Name)
			}
			if st := r.m.status.text; !strings.HasPrefix(st, "cop") { // copied, or why not
				t.Fatalf("%q: y in the detail did not copy the id: %q", text, st)
			}
		}
	}
}

// A confirmation closes on : (any key but y is no), and what follows the :
// is dropped: it never reaches the view under it, so it cannot open a
// second action there and confirm it.
func TestTextTypedIntoAConfirmationIsDropped(t *testing.T) {
	r := newRig(t)
	r.selectKey(leasesView, "TASK-4")
	r.press("r", "enter") // the optional reason, then the confirmation
	if !strings.Contains(r.screen(), "[y/N]") {
		t.Fatalf("no confirmation:\n%s", r.screen())
	}
	r.typeText(":sort pri desc")
	r.press("enter", "y")
	if got := r.get("4"); got.State != model.StateClaimed || got.Claim().Name != "alpha" {
		t.Fatalf("the claim changed: %v held by %q", got.State, got.Claim().Name)
	}
	if n := len(r.m.dialogs); n != 0 {
		t.Fatalf("%d dialogs open after the confirmation was refused:\n%s", n, r.screen())
	}
}

// A key a dialog does not know does nothing and says so once.
func TestAnUnknownKeyInADialogSaysSoOnce(t *testing.T) {
	r := newRig(t)
	r.selectKey(leasesView, "TASK-4")
	r.press("enter", "z")
	if s := r.screen(); !strings.Contains(s, `"z" does nothing here`) {
		t.Fatalf("an unknown key is met with silence:\n%s", s)
	}
	r.m.status.text = ""
	r.press("z")
	if s := r.screen(); strings.Contains(s, "does nothing here") {
		t.Fatalf("said twice:\n%s", s)
	}
	r.press("esc", "?", "z")
	if s := r.screen(); !strings.Contains(s, `"z" does nothing here`) {
		t.Fatalf("help does not say so for its own dialog:\n%s", s)
	}
}

// A key typed in the same burst after the one that closed a dialog is
// meant for that dialog, not for the view under it.
func TestABurstEndsWithTheDialogItClosed(t *testing.T) {
	r := newRig(t)
	r.selectKey(leasesView, "TASK-4")
	r.press("r", "enter") // the confirmation
	_, cmd := r.m.Update(tea.KeyPressMsg{Code: tea.KeyExtended, Text: "nr"})
	r.run(cmd)
	if n := len(r.m.dialogs); n != 0 {
		t.Fatalf("the r after the n opened %T", r.m.dialogs[n-1])
	}
}
