package tui

import (
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// cells measures as x/ansi does: its shortcut for printable ASCII changes
// no width.
func TestCellsMeasuresAsXAnsi(t *testing.T) {
	for _, s := range []string{"", "TASK-40", "Write incident runbook #3 ~!", "café", "e\u0301", "日本語", "\x1b[1mbold\x1b[m", "tab\there", "✓ demo"} {
		if got, want := cells(s), ansi.StringWidth(s); got != want {
			t.Errorf("cells(%q) = %d, x/ansi says %d", s, got, want)
		}
	}
}

func FuzzCellsMeasuresAsXAnsi(f *testing.F) {
	f.Add("TASK-1 Rotate TLS")
	f.Add("日本\x1b[31m語")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := cells(s), ansi.StringWidth(s); got != want {
			t.Errorf("cells(%q) = %d, x/ansi says %d", s, got, want)
		}
	})
}
