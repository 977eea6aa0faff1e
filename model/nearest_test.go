package model

import "testing"

func TestNearest(t *testing.T) {
	cands := []string{"history_window", "sources", "source", "mesh"}
	for _, c := range []struct {
		word   string
		within int
		want   string
	}{
		{"sourse", 3, "source"}, // one substitution; "sources" is two away
		{"history_windw", 3, "history_window"},
		{"mash", 2, "mesh"},
		{"mash", 1, ""}, // one edit is not closer than one
		{"zzzzzz", 3, ""},
		{"sources", 3, "sources"},
	} {
		if got := Nearest(c.word, cands, c.within); got != c.want {
			t.Errorf("Nearest(%q, within %d) = %q, want %q", c.word, c.within, got, c.want)
		}
	}
	if got := Nearest("ab", []string{"ac", "ad"}, 3); got != "ac" {
		t.Errorf("of equally close candidates the first must win, got %q", got)
	}
}
