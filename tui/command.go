package tui

import (
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

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

// commandHintIn is the : line's placeholder in width columns: every
// command, or, where they do not all fit, how to find them — a hint cut
// after the views' names tells nothing of the actions.
func commandHintIn(width int, palette key.Binding) string {
	if all := commandHint(); cells(all) <= width {
		return all
	}
	if ks := palette.Keys(); palette.Enabled() && len(ks) > 0 {
		return "tab completes · " + ks[0] + " lists every command"
	}
	return "tab completes"
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
			presetAgent(m.dialogs, arg)
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
		m.refreshed(m.board.scopeTo(arg))
	case "sort":
		m.refreshed(m.pane().sortCommand(arg))
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

// scopeTo narrows every view to one source, or widens them again (all);
// it says why not when there is no such source.
func (b *board) scopeTo(name string) (why string) {
	if name == "" || name == "all" {
		b.scope = ""
	} else {
		var names []string
		for _, s := range b.snap.Sources {
			names = append(names, s.Name)
		}
		if !slices.Contains(names, name) {
			msg := ":source " + name + ": no such source (" + strings.Join(names, ", ") + " or all)"
			if s := suggest(name, names); s != "" {
				msg = ":source " + name + ": no such source — did you mean " + s + "?"
			}
			return msg
		}
		b.scope = name
	}
	for _, p := range b.panes {
		p.unfiltered = true
	}
	return ""
}

// sortCommand sorts the view by a column (:sort pri desc), or by one of
// its presets by name (:sort pull order); a bare :sort is the first
// preset. It says why not when the pane has no such order.
func (p *pane) sortCommand(arg string) (why string) {
	words := strings.Fields(strings.ToLower(arg))
	desc := false
	if n := len(words); n > 0 && (words[n-1] == "desc" || words[n-1] == "asc") {
		desc, words = words[n-1] == "desc", words[:n-1]
	}
	name := strings.Join(words, " ")
	if name == "" {
		p.sort, p.grid.sortCol, p.unsorted = 0, -1, true
		return ""
	}
	if i := slices.Index(p.sorts, name); i >= 0 {
		p.sort, p.grid.sortCol, p.unsorted = i, -1, true
		return ""
	}
	var names []string
	for ci, c := range p.grid.cols {
		if c.field == model.FieldNone {
			continue
		}
		if strings.ToLower(c.title) == name {
			p.grid.sortCol, p.grid.desc, p.unsorted = ci, desc, true
			return ""
		}
		names = append(names, strings.ToLower(c.title))
	}
	title := views[p.kind].title
	if len(names) == 0 {
		return ":sort: " + title + " sorts only by its presets (s): " + strings.Join(p.sorts, ", ")
	}
	msg := ":sort " + name + ": " + title + " has no such column (" + strings.Join(names, ", ") + ")"
	if s := suggest(name, names); s != "" {
		msg = ":sort " + name + ": " + title + " has no such column — did you mean " + s + "?"
	}
	return msg
}

// presetAgent chooses agent in the hand-off dialog just opened, the top
// of dialogs.
func presetAgent(dialogs []dialog, agent string) {
	n := len(dialogs)
	if n == 0 {
		return
	}
	switch d := dialogs[n-1].(type) {
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

// refreshed brings the pane on screen up to date after a change of the
// views, or says why there was none.
func (m *Model) refreshed(why string) {
	if why != "" {
		m.status.fail(why)
		return
	}
	m.freshen(m.pane())
}

// suggest is the candidate nearest word by edit distance, when near
// enough to be a slip of the finger.
func suggest(word string, cands []string) string {
	return model.Nearest(word, cands, 3)
}
