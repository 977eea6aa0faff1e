package tui

// Look-ups on the board: a task by its id or key, an agent's node, the
// agents a hand-off can name.

import (
	"slices"
	"strings"

	"github.com/claimdeck/claimdeck/model"
)

// find is the task with this source and id in the snapshot, or nil.
func (b *board) find(source, id string) *model.Task {
	for _, t := range b.all {
		if t.ID == id && t.Source == source {
			return t
		}
	}
	return nil
}

// findKey is the task with this source and display key (or id), or nil.
func (b *board) findKey(source, key string) *model.Task {
	for _, t := range b.all {
		if t.Source == source && (t.DisplayKey() == key || t.ID == key) {
			return t
		}
	}
	return nil
}

// agentNode is the node an agent was last seen claiming on, or "".
func (b *board) agentNode(agent string) string {
	for _, t := range b.all {
		if t.Claim().Node != "" && strings.EqualFold(t.Claim().Name, agent) {
			return t.Claim().Node
		}
	}
	return ""
}

// knownAgents are the hand-off targets on offer: configured agents and
// those seen holding or reserved for tasks, sorted, capped.
func (b *board) knownAgents(configured []string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(name string) {
		if name != "" && name != model.AnyAgent && !strings.HasPrefix(name, model.HumanPrefix) && !seen[name] && len(out) < 200 {
			seen[name] = true
			out = append(out, name)
		}
	}
	for _, a := range configured {
		add(a)
	}
	for _, r := range b.panes[leasesView].members {
		add(r.t.Claim().Name)
	}
	for _, r := range b.panes[staleView].members {
		add(r.t.Claim().Name)
	}
	slices.Sort(out)
	return append([]string{model.AnyAgent}, out...)
}
