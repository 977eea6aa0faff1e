package theme

import (
	"testing"

	"github.com/charmbracelet/lipgloss"
)

func TestNoColorKeepsTheSelectionVisible(t *testing.T) {
	s := New(Options{Mode: Dark, NoColor: true})
	if !s.Selected.GetReverse() || !s.Selected.GetBold() {
		t.Fatal("without colour the selected row must be reverse and bold")
	}
	if _, ok := s.Source("production").GetForeground().(lipgloss.NoColor); !ok {
		t.Fatal("NO_COLOR must drop source colours too")
	}
}

func TestConfiguredSourceColourWinsAndOthersAreStable(t *testing.T) {
	s := New(Options{Mode: Dark, SourceColors: map[string]string{"production": "red"}})
	if got := s.Source("production").GetForeground(); got != lipgloss.Color("203") {
		t.Fatalf("production label colour = %v, want the dark red 203", got)
	}
	if s.Source("staging").GetForeground() != s.Source("staging").GetForeground() {
		t.Fatal("a source's colour must not change between calls")
	}
	if l := New(Options{Mode: Light, SourceColors: map[string]string{"production": "red"}}); l.Source("production").GetForeground() != lipgloss.Color("160") {
		t.Fatal("light terminals get the light red")
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"": Auto, "auto": Auto, "Light": Light, "dark": Dark} {
		if got, ok := ParseMode(in); !ok || got != want {
			t.Errorf("ParseMode(%q) = %v, %v", in, got, ok)
		}
	}
	if _, ok := ParseMode("solarized"); ok {
		t.Error("an unknown theme must be refused")
	}
}
