package tui

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/hub"
)

// input is the two lines a person types in: the filter and the : line.
type input struct {
	filter    lineEdit
	filtering bool
	filterErr string // why the filter as typed does not parse
	// rejected is the filter as typed when it did not parse; inForce is
	// the text of the one in force (board.flt), named beside it.
	rejected, inForce string
	// filters are the saved filters by name: the config's, and :save's.
	filters map[string]string
	// archiveAsked: the kept filter brought history from the backends.
	archiveAsked bool
	cmdline      lineEdit
	commanding   bool
	cmdHistory   []string
	cmdAt        int // where up/down stand in cmdHistory
	// dropping: a dialog taking no text is open and : or / was typed;
	// dropped is what was typed since, shown and thrown away at enter or
	// esc, never a key of the dialog.
	dropping bool
	dropped  string
	// toldUnknown: the top dialog has said once that a key does nothing.
	toldUnknown bool
	// closedAt is when a key last closed a dialog, by keyClock; afterText
	// what was typed right after it and dropped.
	closedAt  time.Time
	afterText string
}

// filterKey edits the filter: every keystroke that changes it asks for
// a re-filter of the pane on screen (changed). Enter keeps the filter, esc
// drops it; both end the typing (kept).
func (in *input) filterKey(msg tea.KeyPressMsg) (changed, kept bool) {
	switch msg.String() {
	case "enter":
		in.filtering = false
		return false, true
	case "esc":
		in.filtering = false
		in.filter.SetValue("")
		return true, true
	default:
		return in.filter.Update(msg), false
	}
}

// parseFilter parses the filter as typed. One that does not parse leaves
// the last one in force, says what to fix, and is shown as rejected
// beside the one that stays.
func (in *input) parseFilter() (model.Filter, bool) {
	typed := in.filter.Value()
	f, err := model.ParseFilter(typed)
	in.filterErr, in.rejected = "", ""
	if err != nil {
		in.filterErr, in.rejected = err.Error(), typed
		return f, false
	}
	in.inForce = typed
	return f, true
}

// dropKey takes a key typed while text meant for a : line or a filter is
// being dropped: enter or esc ends it, and the note it returns says so;
// anything else is dropped with it.
func (in *input) dropKey(msg tea.KeyPressMsg) (note string) {
	switch msg.String() {
	case "enter", "esc":
		in.dropping = false
		return fmt.Sprintf("dropped %q: commands and the filter work once the dialog is closed", in.dropped)
	case "backspace":
		if r := []rune(in.dropped); len(r) > 0 {
			in.dropped = string(r[:len(r)-1])
		}
	default:
		in.dropped += typed(msg)
	}
	return ""
}

// startCommand opens the : line, its history walked from the end.
func (in *input) startCommand() { in.commanding, in.cmdAt = true, len(in.cmdHistory) }

// leaveCommand closes the : line and drops what it holds.
func (in *input) leaveCommand() {
	in.commanding = false
	in.cmdline.SetValue("")
}

// commandKey edits the : line: tab completes (with the sources' names),
// up/down walk the history, esc leaves, enter returns the line to run.
func (in *input) commandKey(msg tea.KeyPressMsg, sources []hub.SourceState) (run string) {
	switch msg.String() {
	case "esc":
		in.leaveCommand()
	case "enter":
		return in.enter()
	case "tab":
		in.cmdline.SetValue(in.complete(in.cmdline.Value(), sources))
	case "up", "down":
		step := -1
		if msg.String() == "down" {
			step = 1
		}
		at := min(max(in.cmdAt+step, 0), len(in.cmdHistory))
		in.cmdAt = at
		if at == len(in.cmdHistory) {
			in.cmdline.SetValue("")
		} else {
			in.cmdline.SetValue(in.cmdHistory[at])
		}
	default:
		in.cmdline.Update(msg)
	}
	return ""
}

// enter closes the : line and returns what it held, kept in the history;
// "" when it held nothing.
func (in *input) enter() string {
	line := strings.TrimSpace(in.cmdline.Value())
	in.leaveCommand()
	if line == "" {
		return ""
	}
	if n := len(in.cmdHistory); n == 0 || in.cmdHistory[n-1] != line {
		in.cmdHistory = append(in.cmdHistory, line)
	}
	in.cmdAt = len(in.cmdHistory)
	return line
}

// complete extends the line's last word to the longest prefix every
// candidate shares: a command, a source name after "source", a saved
// filter's after "load".
func (in *input) complete(line string, sources []hub.SourceState) string {
	words := strings.Fields(line)
	var cands []string
	var word string
	switch {
	case len(words) == 0:
		return line
	case len(words) == 1 && !strings.HasSuffix(line, " "):
		word, cands = words[0], commands()
	case words[0] == "source" && len(words) <= 2:
		if len(words) == 2 {
			word = words[1]
		}
		cands = []string{"all"}
		for _, s := range sources {
			cands = append(cands, s.Name)
		}
	case words[0] == "load" && len(words) <= 2:
		if len(words) == 2 {
			word = words[1]
		}
		cands = slices.Sorted(maps.Keys(in.filters))
	default:
		return line
	}
	var match []string
	for _, c := range cands {
		if strings.HasPrefix(c, word) {
			match = append(match, c)
		}
	}
	if len(match) == 0 {
		return line
	}
	common := match[0]
	for _, c := range match[1:] {
		for !strings.HasPrefix(c, common) {
			common = common[:len(common)-1]
		}
	}
	if len(match) == 1 {
		common += " "
	}
	return strings.TrimSuffix(line, word) + common
}
