package tui

import (
	"strings"
	"testing"
)

func TestFuzzyMatchesASubsequencePrefixesFirst(t *testing.T) {
	cases := []struct {
		query, word string
		ok          bool
	}{
		{"rls", "release", true}, {"srt", "sort", true}, {"lea", "leases", true},
		{"tros", "sort", false}, {"x", "release", false}, {"", "help", true},
	}
	for _, c := range cases {
		if _, ok := fuzzy(c.query, c.word); ok != c.ok {
			t.Errorf("fuzzy(%q, %q) matched %v, want %v", c.query, c.word, ok, c.ok)
		}
	}
	prefix, _ := fuzzy("ta", "takeover")
	inside, _ := fuzzy("ta", "stale")
	spread, _ := fuzzy("sd", "sxxxd")
	tight, _ := fuzzy("sd", "sxd")
	if prefix >= inside || tight >= spread {
		t.Errorf("scores: prefix %d, inside %d; tight %d, spread %d", prefix, inside, tight, spread)
	}
}

// TestPaletteRunsCommands: ctrl-p narrows the commands as one types; enter
// runs one without an argument, and leaves one with an argument on the :
// line to finish; esc closes it with nothing done.
func TestPaletteRunsCommands(t *testing.T) {
	r := newRig(t)
	r.press("ctrl+p")
	r.typeText("lses")
	if !strings.Contains(r.screen(), "› leases") {
		t.Fatalf("lses does not choose leases:\n%s", r.screen())
	}
	r.press("enter")
	if r.m.board.active != leasesView || r.m.input.commanding || len(r.m.dialogs) != 0 {
		t.Fatalf("enter on leases: view %d, commanding %v, %d dialogs", r.m.board.active, r.m.input.commanding, len(r.m.dialogs))
	}
	r.press("1", "ctrl+p")
	r.typeText("srt")
	r.press("enter")
	if got := r.m.input.cmdline.Value(); got != "sort " || !r.m.input.commanding || len(r.m.dialogs) != 0 {
		t.Fatalf("enter on sort left the line %q (commanding %v)", got, r.m.input.commanding)
	}
	r.typeText("pri desc")
	r.press("enter")
	if !strings.Contains(r.screen(), "sort: pri descending") {
		t.Fatalf(":sort from the palette:\n%s", r.screen())
	}
	r.press("ctrl+p")
	r.typeText("zzz")
	if !strings.Contains(r.screen(), "no command matches zzz") {
		t.Fatalf("no match:\n%s", r.screen())
	}
	r.press("esc")
	if r.m.input.commanding || len(r.m.dialogs) != 0 || r.m.input.cmdline.Value() != "" {
		t.Fatal("esc left the palette open")
	}
}
