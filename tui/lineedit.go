package tui

import (
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// lineEdit is a one-line text field that types at its end: enough for a
// filter and a reason, without the clipboard dependency of bubbles'
// textinput.
type lineEdit struct {
	value []rune
	limit int
}

func (e *lineEdit) Value() string { return string(e.value) }

func (e *lineEdit) SetValue(s string) { e.value = []rune(s) }

// Update edits on a key and reports whether the text changed.
func (e *lineEdit) Update(msg tea.KeyMsg) bool {
	before := len(e.value)
	switch msg.Type {
	case tea.KeyRunes, tea.KeySpace:
		for _, r := range msg.Runes {
			if r >= ' ' && r != 0x7f && (e.limit == 0 || len(e.value) < e.limit) {
				e.value = append(e.value, r)
			}
		}
	case tea.KeyBackspace:
		if len(e.value) > 0 {
			e.value = e.value[:len(e.value)-1]
		}
	case tea.KeyCtrlW:
		s := strings.TrimRight(string(e.value), " ")
		e.value = []rune(s[:strings.LastIndex(s, " ")+1])
	case tea.KeyCtrlU:
		e.value = e.value[:0]
	default:
		return false
	}
	return len(e.value) != before || msg.Type == tea.KeyRunes
}

// View draws the field in width cells, keeping its end (where the typing
// happens) in sight.
func (e *lineEdit) View(width int, focused bool, placeholder string) string {
	s := string(e.value)
	if focused {
		s += "▏"
	}
	if len(e.value) == 0 && placeholder != "" {
		return fit(s+placeholder, width)
	}
	if w := ansi.StringWidth(s); w > width {
		s = "…" + ansi.TruncateLeft(s, w-width+1, "")
	}
	return fit(s, width)
}
