package tui

import (
	"slices"
	"strings"
	"testing"
)

// TestCommandLineNavigates: :leases shows the Leases view, tab completes a
// view's name, and an unknown word is answered with the nearest command.
func TestCommandLineNavigates(t *testing.T) {
	r := newRig(t)
	r.press(":")
	r.typeText("leases")
	r.press("enter")
	if r.m.board.active != leasesView {
		t.Fatalf(":leases shows view %d", r.m.board.active)
	}
	r.press(":")
	r.typeText("stal")
	r.press("tab")
	if got := r.m.input.cmdline.Value(); got != "stale " {
		t.Fatalf("tab completed stal to %q, want the one command it starts", got)
	}
	r.press("enter")
	if r.m.board.active != staleView {
		t.Fatalf(":stale shows view %d", r.m.board.active)
	}
	r.press(":")
	r.typeText("qeue")
	r.press("enter")
	if !strings.Contains(r.screen(), "unknown command :qeue — did you mean :queue?") || r.m.board.active != staleView {
		t.Fatalf("an unknown word:\n%s", r.screen())
	}
}

// TestCommandLineHistory: up brings back the last line run, down leaves
// the history for an empty line.
func TestCommandLineHistory(t *testing.T) {
	r := newRig(t)
	for _, line := range []string{"nodes", "filter tls"} {
		r.press(":")
		r.typeText(line)
		r.press("enter")
	}
	r.press(":", "up")
	if got := r.m.input.cmdline.Value(); got != "filter tls" {
		t.Fatalf("up: %q", got)
	}
	r.press("up")
	if got := r.m.input.cmdline.Value(); got != "nodes" {
		t.Fatalf("up twice: %q", got)
	}
	r.press("down", "down")
	if got := r.m.input.cmdline.Value(); got != "" {
		t.Fatalf("down past the newest: %q", got)
	}
	r.press("esc")
	if r.m.input.commanding || r.m.input.filter.Value() != "tls" {
		t.Fatalf("esc left the line open (%v) or :filter did not set the filter (%q)", r.m.input.commanding, r.m.input.filter.Value())
	}
}

// TestSourceScopesEveryView: :source staging shows staging's tasks alone in
// every view, and says so in the header; :source all widens again; a
// misspelt source is refused with the nearest name.
func TestSourceScopesEveryView(t *testing.T) {
	r := newRig(t)
	r.press("3", "1") // the Stale view drawn once already: the scope must reach it too
	r.press(":")
	r.typeText("source st")
	r.press("tab")
	if got := r.m.input.cmdline.Value(); got != "source staging " {
		t.Fatalf("tab completed the source to %q", got)
	}
	r.press("enter")
	if got := rowKeys(r.m.pane().shown); !slices.Equal(got, []string{"S-1", "S-2"}) || !strings.Contains(r.screen(), "source staging ·") {
		t.Fatalf(":source staging shows %v:\n%s", got, r.screen())
	}
	r.press("3")
	if got := rowKeys(r.m.pane().shown); !slices.Equal(got, []string{"S-2"}) {
		t.Fatalf("the Stale view under :source staging shows %v", got)
	}
	r.press(":")
	r.typeText("source prd")
	r.press("enter")
	if !strings.Contains(r.screen(), "no such source — did you mean prod?") || r.m.board.scope != "staging" {
		t.Fatalf("a misspelt source:\n%s", r.screen())
	}
	r.press(":")
	r.typeText("source all")
	r.press("enter")
	if len(r.m.pane().shown) != len(r.m.pane().members) || strings.Contains(r.screen(), "source staging ·") {
		t.Fatalf(":source all still scopes: %v", rowKeys(r.m.pane().shown))
	}
}
