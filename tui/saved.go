package tui

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/claimdeck/claimdeck/model"
)

// savedMsg is the end of a :save: the config file written, or why not.
type savedMsg struct {
	name, expr string
	err        error
}

// validFilterName reports whether name can key a config's filters: map
// and be typed after :load: lower-case letters (the config reads keys
// without case), digits, - and _.
func validFilterName(name string) bool {
	return name != "" && strings.IndexFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	}) < 0
}

// saveFilter keeps the filter in force under name, through save (Options'
// SaveFilter), off the UI loop: it writes the config file. What stops it
// is said on st.
func (in *input) saveFilter(name string, save func(name, expr string) error, st *status) tea.Cmd {
	expr := strings.TrimSpace(in.filter.Value())
	switch {
	case name == "":
		st.fail(":save NAME: the filter needs a name")
		return nil
	case !validFilterName(name):
		st.fail(":save " + name + ": a name is lower-case letters, digits, - and _")
		return nil
	case expr == "":
		st.fail(":save " + name + ": no filter to save; / or :filter sets one")
		return nil
	case in.filterErr != "":
		st.fail(":save " + name + ": the filter does not parse: " + in.filterErr)
		return nil
	case save == nil:
		st.fail(":save " + name + ": no configuration file to keep filters in")
		return nil
	}
	return func() tea.Msg { return savedMsg{name: name, expr: expr, err: save(name, expr)} }
}

// saved records a filter the config file now keeps, and says so on st.
func (in *input) saved(msg savedMsg, st *status) {
	if msg.err != nil {
		st.fail(":save " + msg.name + ": " + msg.err.Error())
		return
	}
	if in.filters == nil {
		in.filters = map[string]string{}
	}
	in.filters[msg.name] = msg.expr
	st.note("filter " + msg.name + " saved: " + msg.expr + " · :load " + msg.name + " brings it back")
}

// loadFilter types a saved filter in, and reports whether it did: the
// caller puts it in force. What it did, or why not, is said on st.
func (in *input) loadFilter(name string, st *status) bool {
	names := slices.Sorted(maps.Keys(in.filters))
	expr, ok := in.filters[name]
	switch {
	case ok:
		in.filter.SetValue(expr)
		st.note("filter " + name + ": " + expr)
		return true
	case len(names) == 0:
		st.fail(":load " + name + ": no saved filters; :save NAME keeps the filter in force")
	case suggest(name, names) != "":
		st.fail(":load " + name + ": no such filter — did you mean " + suggest(name, names) + "?")
	default:
		st.fail(":load " + name + ": no such filter (" + strings.Join(names, ", ") + ")")
	}
	return false
}

// validSavedFilters refuses a config's saved filter that could not be
// loaded: a bad name or an expression that does not parse.
func validSavedFilters(filters map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(filters)) {
		if !validFilterName(name) {
			return fmt.Errorf("filters: %q: a name is lower-case letters, digits, - and _", name)
		}
		if _, err := model.ParseFilter(filters[name]); err != nil {
			return fmt.Errorf("filters: %s: %w", name, err)
		}
	}
	return nil
}
