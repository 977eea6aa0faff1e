package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
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
func (e *lineEdit) Update(msg tea.KeyPressMsg) bool {
	before := len(e.value)
	text := typed(msg)
	switch {
	case text != "":
		for _, r := range text {
			if r >= ' ' && r != 0x7f && (e.limit == 0 || len(e.value) < e.limit) {
				e.value = append(e.value, r)
			}
		}
	case msg.String() == "backspace":
		if len(e.value) > 0 {
			e.value = e.value[:len(e.value)-1]
		}
	case msg.String() == "ctrl+w":
		s := strings.TrimRight(string(e.value), " ")
		e.value = []rune(s[:strings.LastIndex(s, " ")+1])
	case msg.String() == "ctrl+u":
		e.value = e.value[:0]
	default:
		return false
	}
	// A letter counts as typed even where the field is full; a space only
	// when it went in.
	return len(e.value) != before || text != "" && msg.Code != tea.KeySpace
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
	if w := cells(s); w > width {
		s = "…" + ansi.TruncateLeft(s, w-width+1, "")
	}
	return fit(s, width)
}
