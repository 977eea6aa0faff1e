package tui

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

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

// saveFilter keeps the filter in force under name, through Options'
// SaveFilter, off the UI loop: it writes the config file.
func (m *Model) saveFilter(name string) tea.Cmd {
	expr := strings.TrimSpace(m.input.filter.Value())
	switch {
	case name == "":
		m.status.fail(":save NAME: the filter needs a name")
		return nil
	case !validFilterName(name):
		m.status.fail(":save " + name + ": a name is lower-case letters, digits, - and _")
		return nil
	case expr == "":
		m.status.fail(":save " + name + ": no filter to save; / or :filter sets one")
		return nil
	case m.input.filterErr != "":
		m.status.fail(":save " + name + ": the filter does not parse: " + m.input.filterErr)
		return nil
	case m.opts.SaveFilter == nil:
		m.status.fail(":save " + name + ": no configuration file to keep filters in")
		return nil
	}
	save := m.opts.SaveFilter
	return func() tea.Msg { return savedMsg{name: name, expr: expr, err: save(name, expr)} }
}

// saved records a filter the config file now keeps.
func (m *Model) saved(msg savedMsg) {
	if msg.err != nil {
		m.status.fail(":save " + msg.name + ": " + msg.err.Error())
		return
	}
	if m.input.filters == nil {
		m.input.filters = map[string]string{}
	}
	m.input.filters[msg.name] = msg.expr
	m.status.note("filter " + msg.name + " saved: " + msg.expr + " · :load " + msg.name + " brings it back")
}

// loadFilter puts a saved filter in force.
func (m *Model) loadFilter(name string) {
	names := slices.Sorted(maps.Keys(m.input.filters))
	expr, ok := m.input.filters[name]
	switch {
	case ok:
		m.input.filter.SetValue(expr)
		m.refilter()
		m.status.note("filter " + name + ": " + expr)
	case len(names) == 0:
		m.status.fail(":load " + name + ": no saved filters; :save NAME keeps the filter in force")
	case suggest(name, names) != "":
		m.status.fail(":load " + name + ": no such filter — did you mean " + suggest(name, names) + "?")
	default:
		m.status.fail(":load " + name + ": no such filter (" + strings.Join(names, ", ") + ")")
	}
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
