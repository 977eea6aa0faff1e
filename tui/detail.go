package tui

import (
	"context"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/theme"
)

// taskDialog is a task's detail as a working place: drawn from the live
// snapshot every frame, its whole trail fetched from the source once, and
// the actions at hand.
type taskDialog struct {
	detailDialog
	source, id string
	last       *model.Task   // the task as last seen, should it leave the snapshot
	trail      []model.Event // the source's full trail, once fetched
	trailErr   string
}

// trailMsg carries a task read afresh for its detail.
type trailMsg struct {
	source, id string
	task       *model.Task
	err        error
}

func (d *taskDialog) hint() string {
	return "c claim · r release · x cancel · h hand off · y copy id · ↑/↓ scroll · esc close"
}

// openTask pushes a task's detail and fetches its full trail.
func (m *Model) openTask(t *model.Task) tea.Cmd {
	m.push(&taskDialog{source: t.Source, id: t.ID, last: t})
	h, timeout := m.hub, m.opts.ActionTimeout
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		full, err := h.Get(ctx, t.Source, t.ID)
		return trailMsg{source: t.Source, id: t.ID, task: full, err: err}
	}
}

// gotTrail hands a fetched trail to the detail still showing its task.
func (m *Model) gotTrail(msg trailMsg) {
	for _, d := range m.dialogs {
		if td, ok := d.(*taskDialog); ok && td.source == msg.source && td.id == msg.id {
			if msg.err != nil {
				td.trailErr = msg.err.Error()
			} else if msg.task != nil {
				td.trail = msg.task.History
			}
		}
	}
}

// find is the task with this source and id in the snapshot, or nil.
func (m *Model) find(source, id string) *model.Task {
	for _, t := range m.all {
		if t.ID == id && t.Source == source {
			return t
		}
	}
	return nil
}

// findKey is the task with this source and display key (or id), or nil.
func (m *Model) findKey(source, key string) *model.Task {
	for _, t := range m.all {
		if t.Source == source && (t.DisplayKey() == key || t.ID == key) {
			return t
		}
	}
	return nil
}

// task is the detail's task as the snapshot has it now.
func (d *taskDialog) task(m *Model) *model.Task {
	if t := m.find(d.source, d.id); t != nil {
		d.last = t
	}
	return d.last
}

func (d *taskDialog) update(m *Model, msg tea.KeyMsg) tea.Cmd {
	t := d.task(m)
	m.keys.setActions(!m.readOnly(t.Source))
	defer m.syncKeys()
	k := m.keys
	for _, a := range []struct {
		b      key.Binding
		action model.Action
	}{{k.Claim, model.ActionTakeover}, {k.Release, model.ActionForceRelease}, {k.Cancel, model.ActionCancel}, {k.Handoff, model.ActionHandoff}} {
		if key.Matches(msg, a.b) {
			m.startActionOn(t, a.action)
			return nil
		}
		if m.readOnlyKey(msg, a.b) {
			return nil
		}
	}
	if key.Matches(msg, k.Copy) {
		return m.copyID(t)
	}
	d.refresh(m, m.width) // scrolling needs the lines as they are now
	return d.detailDialog.update(m, msg)
}

func (d *taskDialog) refresh(m *Model, width int) {
	t := *d.task(m)
	t.History = model.MergeHistory(t.History, d.trail)
	d.title = t.DisplayKey() + " · " + t.Source
	d.lines = m.withFamily(&t, taskDetail(&t, m.now(), m.pace, m.snap.Policy, m.snap.Classify(&t, m.now()), m.loc, width))
	if d.trailErr != "" {
		d.lines = append(d.lines, "", "full history unavailable: "+theme.Safe(d.trailErr))
	}
}

func (d *taskDialog) view(m *Model, width, height int) string {
	d.refresh(m, width)
	return d.detailDialog.view(m, width, height)
}

// nodeDialog is a node's detail with a cursor over the tasks claimed on
// it; enter opens one.
type nodeDialog struct {
	detailDialog
	node  model.Node
	tasks []*model.Task
	sel   int
}

func (d *nodeDialog) hint() string { return "↑/↓ pick a task · enter open it · esc close" }

func (d *nodeDialog) update(m *Model, msg tea.KeyMsg) tea.Cmd {
	switch msg.String() {
	case "up", "k":
		d.sel = max(d.sel-1, 0)
	case "down", "j":
		d.sel = min(d.sel+1, max(len(d.tasks)-1, 0))
	case "enter":
		if d.sel < len(d.tasks) {
			return m.openTask(d.tasks[d.sel])
		}
		m.pop()
	default:
		d.lines = nodeDetail(d.node, d.tasks, d.sel, m.now(), m.loc)
		return d.detailDialog.update(m, msg)
	}
	return nil
}

func (d *nodeDialog) view(m *Model, width, height int) string {
	d.title = "node " + d.node.Name
	d.lines = nodeDetail(d.node, d.tasks, d.sel, m.now(), m.loc)
	// Keep the picked task on the page.
	if at := slices.IndexFunc(d.lines, func(l string) bool { return strings.HasPrefix(l, "› ") }); at >= 0 && at-d.offset >= height-1 {
		d.offset = at - height + 2
	}
	return d.detailDialog.view(m, width, height)
}

// readOnlyKey says "read-only" for an action key that is switched off,
// so a key press is never met with silence.
func (m *Model) readOnlyKey(msg tea.KeyMsg, b key.Binding) bool {
	if b.Enabled() || !slices.Contains(b.Keys(), msg.String()) {
		return false
	}
	m.fail(b.Help().Desc + ": read-only — actions are off for this source")
	return true
}

// copyID puts the task's id on the clipboard through the terminal (OSC 52),
// only when asked.
func (m *Model) copyID(t *model.Task) tea.Cmd {
	if m.opts.Copy == nil {
		m.fail("copy: this terminal offers no clipboard")
		return nil
	}
	m.note("copied " + t.ID)
	id, put := t.ID, m.opts.Copy
	return func() tea.Msg { put(id); return nil }
}
