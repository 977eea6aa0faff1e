package tui

import (
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/claimdeck/claimdeck/model"
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
	r.press("3")
	stale := rowKeys(r.m.pane().shown)
	r.press("1") // the Stale view drawn once already: the scope must reach it too
	queue := rowKeys(r.m.pane().shown)
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
	// Every row is back, as before the scope: scoping filtered copies of
	// the views' rows, never the rows themselves.
	if got := rowKeys(r.m.pane().shown); !slices.Equal(got, stale) {
		t.Fatalf("after :source all, Stale shows %v, want %v", got, stale)
	}
	r.press("1")
	if got := rowKeys(r.m.pane().shown); !slices.Equal(got, queue) {
		t.Fatalf("after :source all, the Queue shows %v, want %v", got, queue)
	}
}

// TestEveryTaskActionIsACommandWord: each action the dashboard offers on a
// task is a : word and a palette entry, named and helped as the doors'
// table (model.ActionRows) names it; completion and the hint know it.
func TestEveryTaskActionIsACommandWord(t *testing.T) {
	entries := paletteEntries()
	for _, ta := range taskActions {
		row := ta.action.Row()
		if a, ok := commandAction(row.Word); !ok || a != ta.action {
			t.Errorf("%s: :%s starts %q (%v)", ta.action, row.Word, a, ok)
		}
		if !slices.ContainsFunc(entries, func(e paletteEntry) bool { return e.word == row.Word && e.does == row.Help }) {
			t.Errorf("%s: the palette has no entry %q with the table's help", ta.action, row.Word)
		}
		if !slices.Contains(commands(), row.Word) || !slices.Contains(strings.Split(commandHint(), " · "), strings.TrimSpace(row.Word+" "+actionWord(ta.action).args)) {
			t.Errorf("%s: completion or the hint lacks :%s", ta.action, row.Word)
		}
	}
}

// TestActionWordsOpenTheirAction: :approve and :rework on a task in
// Review open that action's dialog, :give-back on someone else's claim
// is refused before any dialog, :handoff AGENT keeps its agent, and a
// slip is answered with the nearest action word.
func TestActionWordsOpenTheirAction(t *testing.T) {
	r := newRig(t)
	top := func() model.Action {
		if len(r.m.dialogs) == 0 {
			return ""
		}
		switch d := r.m.dialogs[len(r.m.dialogs)-1].(type) {
		case *confirmDialog:
			return d.req.Action
		case *formDialog:
			return d.req.Action
		}
		return "?"
	}
	run := func(line string) {
		r.press(":")
		r.typeText(line)
		r.press("enter")
	}
	r.selectKey(allView, "TASK-11") // in Review
	for _, word := range []string{"approve", "rework"} {
		run(word)
		if want, _ := model.ActionByWord(word); top() != want {
			t.Fatalf(":%s opened %q:\n%s", word, top(), r.screen())
		}
		r.press("esc")
	}
	r.selectKey(allView, "TASK-6") // carol's claim, alice at the dashboard
	run("give-back")
	if len(r.m.dialogs) != 0 {
		t.Fatalf(":give-back of carol's claim opened a dialog:\n%s", r.screen())
	}
	r.selectKey(allView, "TASK-2")
	run("handoff bravo")
	d, ok := r.m.dialogs[len(r.m.dialogs)-1].(*formDialog)
	if !ok || d.req.Action != model.ActionHandoff || d.value("to") != "bravo" {
		t.Fatalf(":handoff bravo opened %T:\n%s", r.m.dialogs, r.screen())
	}
	r.press("esc")
	run("aprove")
	if !strings.Contains(r.screen(), "did you mean :approve?") {
		t.Fatalf(":aprove:\n%s", r.screen())
	}
}

// Where every command does not fit, the : line's placeholder says how to
// find them instead of a list cut after the views' names.
func TestTheCommandHintFitsOrSaysWhereTheCommandsAre(t *testing.T) {
	keys := DefaultKeyMap()
	if got := commandHintIn(1000, keys.Palette); got != commandHint() {
		t.Fatalf("with room the hint is every command, got %q", got)
	}
	got := commandHintIn(45, keys.Palette)
	if ansi.StringWidth(got) > 45 || !strings.Contains(got, "ctrl+p") {
		t.Fatalf("at 45 columns the hint is %q: it should fit and name ctrl+p", got)
	}
}
