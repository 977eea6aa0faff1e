package theme

import (
	"testing"

	"charm.land/lipgloss/v2"
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

func TestAutoReadsTheBackgroundFromCOLORFGBG(t *testing.T) {
	for fgbg, dark := range map[string]bool{"": true, "15;0": true, "0;15": false, "default;default;7": false, "7;8": false,
		"15;6": true, "0;231": false, "15;16": true, "15;bogus": true, "15;300": true} {
		if got := envDark(fgbg); got != dark {
			t.Errorf("COLORFGBG=%q: dark = %v, want %v", fgbg, got, dark)
		}
	}
	t.Setenv("COLORFGBG", "0;15")
	if New(Options{}).Dark {
		t.Error("auto on a light COLORFGBG must pick the light palette")
	}
	if !New(Options{}.Resolve(true)).Dark || New(Options{Mode: Dark}.Resolve(false)).Dark != true {
		t.Error("Resolve turns Auto into the reported background and keeps a chosen mode")
	}
}
