package notion

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/claimdeck/claimdeck/model"
)

// roles names the roles of a Mapping as a configuration file spells them.
func (m *Mapping) roleNames() map[string]*string {
	return map[string]*string{
		"title": &m.Title, "key": &m.Key, "description": &m.Description, "status": &m.Status,
		"class": &m.Class, "priority": &m.Priority, "claimed_by": &m.ClaimedBy, "holder": &m.Holder,
		"run": &m.Run, "token": &m.Token, "expires": &m.Expires, "claimed_at": &m.ClaimedAt,
		"timeout": &m.Timeout, "started_at": &m.StartedAt, "done_at": &m.DoneAt,
		"artifacts": &m.Artifacts, "reason": &m.Reason, "unblock_action": &m.UnblockAction,
		"next_check_at": &m.NextCheckAt, "handoff_status": &m.HandoffStatus, "history": &m.History,
		"subtasks": &m.Subtasks,
	}
}

// Custom is a mapping given in a configuration file: a preset to start
// from, then property names by role, status options by state, and the
// properties the database may lack.
type Custom struct {
	Base       string            // a preset name; empty is ntask
	Properties map[string]string // role → property name ("" switches the role off)
	Statuses   map[string]string // state (queued, claimed, blocked, …) → select option
	Optional   []string          // property names the database may lack
}

// Build turns a custom mapping into a Mapping, naming every unknown role
// or state at once.
func (c Custom) Build() (Mapping, error) {
	m, err := Preset(c.Base)
	if err != nil {
		return Mapping{}, err
	}
	m.States = maps.Clone(m.States)
	roles := m.roleNames()
	var problems []string
	for role, prop := range c.Properties {
		p, ok := roles[strings.ToLower(strings.TrimSpace(role))]
		if !ok {
			problems = append(problems, fmt.Sprintf("unknown role %q", role))
			continue
		}
		*p = strings.TrimSpace(prop)
	}
	for state, option := range c.Statuses {
		st, err := model.ParseState(state)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if strings.TrimSpace(option) == "" {
			problems = append(problems, fmt.Sprintf("state %s: an empty status option", state))
			continue
		}
		m.States[st] = option
	}
	if m.Title == "" || m.Status == "" {
		problems = append(problems, "the title and status roles cannot be switched off")
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		valid := make([]string, 0, len(roles))
		for r := range roles {
			valid = append(valid, r)
		}
		sort.Strings(valid)
		return Mapping{}, fmt.Errorf("custom mapping: %s (roles: %s)", strings.Join(problems, "; "), strings.Join(valid, ", "))
	}
	m.Optional = append(slices.Clone(m.Optional), c.Optional...)
	return m, nil
}
