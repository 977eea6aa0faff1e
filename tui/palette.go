package tui

import (
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// paletteEntry is one command the palette offers.
type paletteEntry struct{ word, args, does string }

// paletteEntries are every command of the : line, views first.
func paletteEntries() []paletteEntry {
	var out []paletteEntry
	for _, v := range views {
		out = append(out, paletteEntry{word: v.name, does: "show " + v.title})
	}
	for _, c := range commandWords {
		out = append(out, paletteEntry{word: c.word, args: c.args, does: c.does})
	}
	return out
}

// fuzzy scores word against query typed as a subsequence: ok is false
// when some letter of query is missing; a lower score is a better match
// (a prefix first, then letters closer together and earlier).
func fuzzy(query, word string) (score int, ok bool) {
	if strings.HasPrefix(word, query) {
		return 0, true
	}
	first, at := -1, 0
	for _, r := range query {
		i := strings.IndexRune(word[at:], r)
		if i < 0 {
			return 0, false
		}
		if first < 0 {
			first = at + i
		}
		at += i + 1
	}
	return 1 + (at-first)*16 + first, true
}

// paletteDialog is the : line as a fuzzy palette over the commands
// (ctrl-p): the line filters the list, up/down choose, enter runs the
// chosen one or, when it takes an argument, leaves it on the : line.
type paletteDialog struct {
	all   []paletteEntry
	shown []paletteEntry
	at    int
	query lineEdit
}

func newPalette() *paletteDialog {
	d := &paletteDialog{all: paletteEntries()}
	d.match("")
	return d
}

func (d *paletteDialog) hint(k KeyMap) string {
	return hintOf([]key.Binding{k.Up, k.Down, k.Submit}, "type to narrow", "tab to the : line", "esc close")
}

func (d *paletteDialog) typing() bool { return true }

// match lists the entries query matches, best first.
func (d *paletteDialog) match(query string) {
	type scored struct {
		e     paletteEntry
		score int
	}
	var hits []scored
	for _, e := range d.all {
		if s, ok := fuzzy(strings.ToLower(query), e.word); ok {
			hits = append(hits, scored{e, s})
		}
	}
	slices.SortStableFunc(hits, func(a, b scored) int { return a.score - b.score })
	d.shown = d.shown[:0]
	for _, h := range hits {
		d.shown = append(d.shown, h.e)
	}
	d.at = 0
}

func (d *paletteDialog) update(e *dialogEnv, msg tea.KeyPressMsg) action {
	switch msg.String() {
	case "esc":
		return action{close: true, leaveCommand: true}
	case "up":
		d.at = max(d.at-1, 0)
	case "down":
		d.at = max(min(d.at+1, len(d.shown)-1), 0)
	case "enter", "tab":
		if len(d.shown) == 0 {
			return action{}
		}
		e := d.shown[d.at]
		if e.args != "" || msg.String() == "tab" {
			return action{close: true, cmdline: e.word + " "} // the : line stays open for the argument
		}
		return action{close: true, command: e.word}
	default:
		if d.query.Update(msg) {
			d.match(strings.TrimSpace(d.query.Value()))
		}
	}
	return action{}
}

func (d *paletteDialog) view(e *dialogEnv, width, height int) string {
	st := e.styles
	lines := []string{st.DialogTitle.Render("Commands"), st.FilterPrompt.Render(": ") + d.query.View(dialogWidth(width)-2, true, "type to narrow")}
	if len(d.shown) == 0 {
		lines = append(lines, st.Muted.Render("no command matches "+d.query.Value()))
	}
	// The list scrolls to keep the chosen line in the box.
	rows := max(height-6, 1)
	from := max(d.at-rows+1, 0)
	for i, e := range d.shown[from:min(from+rows, len(d.shown))] {
		text := e.word
		if e.args != "" {
			text += " " + e.args
		}
		line := fit(text, 22) + " " + e.does
		if from+i == d.at {
			lines = append(lines, st.Selected.Render("› "+line))
		} else {
			lines = append(lines, "  "+st.Muted.Render(line))
		}
	}
	return box(st, lines, width, height)
}
