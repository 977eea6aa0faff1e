package tui

import (
	"slices"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/claimdeck/claimdeck/model"
)

// commandWord is one word of the : line: what it takes and does (the
// palette shows both), and the task action it starts, if it names one.
type commandWord struct {
	word, args, does string
	action           model.Action
}

// commandWords are the words the : line knows besides the views' names:
// the dashboard's own, then one per action of taskActions, named and
// helped as model.ActionRows names them at every door.
var commandWords = func() []commandWord {
	out := []commandWord{
		{word: "source", args: "NAME|all", does: "scope every view to one source"}, {word: "sort", args: "COLUMN [desc]", does: "sort the view by a column"},
		{word: "filter", args: "EXPR", does: "filter the views"}, {word: "save", args: "NAME", does: "keep the filter in the config"},
		{word: "load", args: "NAME", does: "bring a saved filter back"},
	}
	for _, ta := range taskActions {
		out = append(out, actionWord(ta.action))
	}
	return append(out, commandWord{word: "help", does: "every key"}, commandWord{word: "q", does: "quit"}, commandWord{word: "quit", does: "quit"})
}()

// actionWord is a's word on the : line: its row's word and help, and the
// argument its needs take (a hand-off's agent, else the dialog asks).
func actionWord(a model.Action) commandWord {
	row := a.Row()
	c := commandWord{word: row.Word, does: row.Help, action: a}
	if a.Needs().Target {
		c.args = "[AGENT]"
	}
	return c
}

// commandAction is the task action a : word names, if any.
func commandAction(word string) (model.Action, bool) {
	for _, c := range commandWords {
		if c.word == word && c.action != "" {
			return c.action, true
		}
	}
	return "", false
}

// commandHint is the : line's placeholder: every command and its argument.
func commandHint() string {
	var words []string
	for _, v := range views {
		words = append(words, v.name)
	}
	for _, c := range commandWords {
		words = append(words, strings.TrimSpace(c.word+" "+c.args))
	}
	return strings.Join(words, " · ")
}

// commands are every word the : line takes, views first.
func commands() []string {
	var out []string
	for _, v := range views {
		out = append(out, v.name)
	}
	for _, c := range commandWords {
		out = append(out, c.word)
	}
	return out
}

// runCommand does what a : line says, or says what to type instead.
func (m *Model) runCommand(line string) tea.Cmd {
	if line == "" {
		return nil
	}
	word, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	for v, spec := range views {
		if word == spec.name {
			m.show(viewKind(v))
			return nil
		}
	}
	if a, ok := commandAction(word); ok {
		m.act(a)
		if a.Needs().Target && arg != "" {
			m.presetAgent(arg)
		}
		return nil
	}
	switch word {
	case "q", "quit":
		m.screen.quitting = true
		return tea.Quit
	case "help":
		m.push(&helpDialog{})
	case "filter":
		m.input.filter.SetValue(arg)
		m.refilter()
	case "source":
		m.scopeTo(arg)
	case "sort":
		m.sortCommand(arg)
	case "save":
		return m.input.saveFilter(arg, m.opts.SaveFilter, &m.status)
	case "load":
		if m.input.loadFilter(arg, &m.status) {
			m.refilter()
		}
	default:
		msg := "unknown command :" + word
		if s := suggest(word, commands()); s != "" {
			msg += " — did you mean :" + s + "?"
		}
		m.status.fail(msg + " (:help lists the keys)")
	}
	return nil
}

// scopeTo narrows every view to one source, or widens them again (all).
func (m *Model) scopeTo(name string) {
	if name == "" || name == "all" {
		m.board.scope = ""
	} else {
		var names []string
		for _, s := range m.board.snap.Sources {
			names = append(names, s.Name)
		}
		if !slices.Contains(names, name) {
			msg := ":source " + name + ": no such source (" + strings.Join(names, ", ") + " or all)"
			if s := suggest(name, names); s != "" {
				msg = ":source " + name + ": no such source — did you mean " + s + "?"
			}
			m.status.fail(msg)
			return
		}
		m.board.scope = name
	}
	for _, p := range m.board.panes {
		p.unfiltered = true
	}
	m.freshen(m.pane())
}

// sortCommand sorts the view by a column (:sort pri desc), or by one of
// its presets by name (:sort pull order); a bare :sort is the first preset.
func (m *Model) sortCommand(arg string) {
	p := m.pane()
	words := strings.Fields(strings.ToLower(arg))
	desc := false
	if n := len(words); n > 0 && (words[n-1] == "desc" || words[n-1] == "asc") {
		desc, words = words[n-1] == "desc", words[:n-1]
	}
	name := strings.Join(words, " ")
	if name == "" {
		p.sort, p.grid.sortCol, p.unsorted = 0, -1, true
		m.freshen(p)
		return
	}
	if i := slices.Index(p.sorts, name); i >= 0 {
		p.sort, p.grid.sortCol, p.unsorted = i, -1, true
		m.freshen(p)
		return
	}
	var names []string
	for ci, c := range p.grid.cols {
		if c.field == model.FieldNone {
			continue
		}
		if strings.ToLower(c.title) == name {
			p.grid.sortCol, p.grid.desc, p.unsorted = ci, desc, true
			m.freshen(p)
			return
		}
		names = append(names, strings.ToLower(c.title))
	}
	title := views[p.kind].title
	if len(names) == 0 {
		m.status.fail(":sort: " + title + " sorts only by its presets (s): " + strings.Join(p.sorts, ", "))
		return
	}
	msg := ":sort " + name + ": " + title + " has no such column (" + strings.Join(names, ", ") + ")"
	if s := suggest(name, names); s != "" {
		msg = ":sort " + name + ": " + title + " has no such column — did you mean " + s + "?"
	}
	m.status.fail(msg)
}

// presetAgent chooses agent in the hand-off dialog just opened.
func (m *Model) presetAgent(agent string) {
	n := len(m.dialogs)
	if n == 0 {
		return
	}
	switch d := m.dialogs[n-1].(type) {
	case *bulkDialog:
		if i := slices.Index(d.agents, agent); i >= 0 {
			d.agent = i
		}
	case *formDialog:
		for i := range d.fields {
			if d.fields[i].name == "to" && d.fields[i].edit != nil {
				d.fields[i].edit.SetValue(agent)
			}
		}
	}
}

// suggest is the candidate nearest word by edit distance, when near
// enough to be a slip of the finger.
func suggest(word string, cands []string) string {
	return model.Nearest(word, cands, 3)
}
