package tui

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

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
	// offers says which of taskActions can apply to the task as last
	// drawn: only those are offered.
	offers []bool
}

// trailMsg carries a task read afresh for its detail.
type trailMsg struct {
	source, id string
	task       *model.Task
	err        error
}

// hint offers the actions that can apply to the task as it stands, by
// the keys they are bound to.
func (d *taskDialog) hint(k KeyMap) string {
	k.setActions(d.offers)
	var bs []key.Binding
	for _, b := range k.actionKeys() {
		bs = append(bs, *b)
	}
	// Closing before copying and scrolling: a narrow screen cuts the end.
	return hintOf(bs, keyName(k.Close)+" close", keyName(k.Copy)+" "+k.Copy.Help().Desc, keyName(k.Up)+"/"+keyName(k.Down)+" scroll")
}

func (d *taskDialog) typing() bool { return false }

// gotTrail keeps a fetched trail and hands it to the detail (among
// dialogs) still showing its task.
func (w *work) gotTrail(msg trailMsg, dialogs []dialog) {
	if msg.err == nil && msg.task != nil {
		w.trails[msg.task.Ref()] = msg.task.More().History
	}
	for _, d := range dialogs {
		if td, ok := d.(*taskDialog); ok && td.source == msg.source && td.id == msg.id {
			if msg.err != nil {
				td.trailErr = msg.err.Error()
			} else if msg.task != nil {
				td.trail = msg.task.More().History
			}
		}
	}
}

// task is the detail's task as the snapshot has it now.
func (d *taskDialog) task(e *dialogEnv) *model.Task {
	if t := e.board.find(d.source, d.id); t != nil {
		d.last = t
	}
	return d.last
}

func (d *taskDialog) update(e *dialogEnv, msg tea.KeyPressMsg) action {
	t := d.task(e)
	k := e.keys
	for _, ta := range taskActions {
		if slices.Contains(ta.binding(&k).Keys(), msg.String()) {
			return action{start: &startAction{task: t, action: ta.action}}
		}
	}
	if key.Matches(msg, k.Copy) {
		return action{copy: t}
	}
	d.refresh(e, e.width) // scrolling needs the lines as they are now
	return d.detailDialog.update(e, msg)
}

func (d *taskDialog) refresh(e *dialogEnv, width int) {
	t := *d.task(e)
	t.EditMore().History = model.MergeHistory(t.More().History, d.trail)
	d.title = t.DisplayKey() + " · " + t.Source
	d.lines = e.board.withFamily(&t, taskDetail(&t, e.now, e.pace, e.board.snap.Policy, e.board.snap.Classify(&t, e.now), e.loc, width))
	if d.trailErr != "" {
		d.lines = append(d.lines, "", "full history unavailable: "+theme.Safe(d.trailErr))
	}
}

func (d *taskDialog) view(e *dialogEnv, width, height int) string {
	d.refresh(e, width)
	d.offers = e.offers(d.last)
	return d.detailDialog.view(e, width, height)
}

// nodeDialog is a node's detail with a cursor over the tasks claimed on
// it; enter opens one.
type nodeDialog struct {
	detailDialog
	node  model.Node
	tasks []*model.Task
	sel   int
}

func (d *nodeDialog) hint(k KeyMap) string {
	return hintOf([]key.Binding{k.Up, k.Down}, "enter open the task", "esc close")
}

func (d *nodeDialog) typing() bool { return false }

func (d *nodeDialog) update(e *dialogEnv, msg tea.KeyPressMsg) action {
	k := e.keys
	switch {
	case key.Matches(msg, k.Up):
		d.sel = max(d.sel-1, 0)
	case key.Matches(msg, k.Down):
		d.sel = min(d.sel+1, max(len(d.tasks)-1, 0))
	case key.Matches(msg, k.Detail):
		if d.sel < len(d.tasks) {
			return action{open: d.tasks[d.sel]}
		}
		return action{close: true}
	default:
		d.lines = nodeDetail(d.node, d.tasks, d.sel, e.now, e.loc)
		return d.detailDialog.update(e, msg)
	}
	return action{}
}

func (d *nodeDialog) view(e *dialogEnv, width, height int) string {
	d.title = "node " + d.node.Name
	d.lines = nodeDetail(d.node, d.tasks, d.sel, e.now, e.loc)
	// Keep the picked task on the page.
	if at := slices.IndexFunc(d.lines, func(l string) bool { return strings.HasPrefix(l, "› ") }); at >= 0 && at-d.offset >= height-1 {
		d.offset = at - height + 2
	}
	return d.detailDialog.view(e, width, height)
}

// taskDetail lists every field of a task and its history; the title is
// wrapped in full to the width.
func taskDetail(t *model.Task, now time.Time, pc pace, p model.Policy, c model.Classification, loc *time.Location, width int) []string {
	when := func(at time.Time) string {
		if at.IsZero() {
			return "—"
		}
		if pc.sped() {
			return pc.at(at, now, loc, "")
		}
		if at.After(now) {
			return at.In(loc).Format("2006-01-02 15:04:05") + " (in " + pc.span(at.Sub(now)) + ")"
		}
		return at.In(loc).Format("2006-01-02 15:04:05") + " (" + pc.ago(at, now) + " ago)"
	}
	token := "—"
	if t.Claim().Token != "" {
		token = model.ShownToken(t.Claim().Token)
	}
	kv := [][2]string{
		{"source", t.Source}, {"id", t.ID}, {"key", t.DisplayKey()}, {"title", ""},
		{"state", t.State.String() + " (raw " + orDash(t.RawStatus) + ")"},
		{"class", t.Class.String()}, {"priority", orDash(model.PriorityName(t.Priority))},
		{"created", when(t.CreatedAt.Time())}, {"edited", when(t.EditedAt.Time())},
		{"holder", orDash(t.Claim().Holder.String())}, {"agent", orDash(t.Claim().Name)},
		{"run", orDash(t.Claim().RunID)}, {"node", orDash(c.Placement.String())}, {"lock token", token},
		{"claimed", when(t.Claim().ClaimedAt.Time())}, {"heartbeat", when(t.Claim().HeartbeatAt.Time())},
		{"expires", when(t.Claim().Expires.Time())},
	}
	if !t.Claim().Expires.IsZero() {
		kv = append(kv, [2]string{"left", pc.clock(model.Remaining(t, now))})
	}
	lease := model.Health(t, now, p).String()
	if t.Problem() != "" {
		// Nothing is known of a lease the file does not give.
		kv[slices.IndexFunc(kv, func(e [2]string) bool { return e[0] == "state" })][1] = "BROKEN: held as claimed, never pulled (raw " + orDash(t.RawStatus) + ")"
		lease = "— (the file is broken)"
	}
	kv = append(kv,
		[2]string{"lease", lease},
		[2]string{"escalation", orDash(c.Level.String())},
		[2]string{"standing", orDash(c.Reason)},
		[2]string{"recorded", orDash(t.Escalated.String())},
	)
	if r := t.Reserved(); r != nil && r.For != "" {
		kv = append(kv, [2]string{"reserved", fmt.Sprintf("for %s until %s by %s, %s: %s",
			r.For, when(r.Until), orDash(r.By), orDash(r.Priority), orDash(r.Reason))})
	}
	kv = append(kv,
		[2]string{"reason", orDash(theme.Safe(t.More().Reason))}, [2]string{"unblock", orDash(theme.Safe(t.UnblockAction()))},
		[2]string{"next check", when(t.NextCheckAt())}, [2]string{"artifacts", orDash(theme.Safe(t.More().Artifacts))},
		[2]string{"subtasks", fmt.Sprintf("%d open", t.OpenSubtasks)}, [2]string{"version", orDash(t.Version)},
	)
	var out []string
	if t.Problem() != "" {
		// First, and wrapped whole: the file to repair and what is wrong.
		out = wrapField("PROBLEM", theme.Safe(brokenFile(t.Problem())), width)
		if path, _, ok := strings.Cut(t.Problem(), ": "); ok && brokenFile(t.Problem()) != t.Problem() {
			out = append(out, wrapField("in", theme.Safe(filepath.Dir(path)), width)...)
		}
		out = append(out, "")
	}
	out = append(out, fieldLines(kv, t.Title, width)...)
	if t.Description != "" {
		out = append(out, "", "description")
		out = append(out, strings.Split(ansi.Wordwrap(t.Description, 76, ""), "\n")...)
	}
	return append(out, historyLines(t, now, pc, loc, width)...)
}

// fieldLines lays out a task's fields, its title wrapped in full.
func fieldLines(kv [][2]string, title string, width int) []string {
	var out []string
	for _, e := range kv {
		if e[0] != "title" {
			out = append(out, fmt.Sprintf("%-11s %s", e[0], e[1]))
			continue
		}
		out = append(out, wrapField("title", theme.Safe(title), width)...)
	}
	return out
}

// wrapField is a field whose value is wrapped in full under its name; a
// path is broken where it must be, not cut.
func wrapField(name, value string, width int) []string {
	var out []string
	for i, l := range strings.Split(ansi.Wrap(value, max(width-12, 20), " /"), "\n") {
		if i > 0 {
			name = ""
		}
		out = append(out, fmt.Sprintf("%-11s %s", name, l))
	}
	return out
}

// historyLines is a task's timeline, each reason wrapped under its line.
func historyLines(t *model.Task, now time.Time, pc pace, loc *time.Location, width int) []string {
	history := model.Timeline(t)
	out := []string{"", fmt.Sprintf("history (%d, newest last)", len(history))}
	for _, e := range history {
		what := e.Actor
		if e.Reason != "" && what != "" {
			what += ": "
		}
		text := what + theme.Safe(e.Reason)
		if e.Detail != "" {
			text += " (" + theme.Safe(e.Detail) + ")"
		}
		// A reason is what the page is about: wrapped under its line, not cut.
		const indent = 2 + 14 + 2 + 15
		for i, l := range strings.Split(ansi.Wordwrap(text, max(width-indent, 20), " "), "\n") {
			if i == 0 {
				out = append(out, fmt.Sprintf("  %-14s  %-14s %s", pc.at(e.At, now, loc, "01-02 15:04:05"), e.Action, l))
			} else {
				out = append(out, strings.Repeat(" ", indent)+l)
			}
		}
	}
	return out
}

// nodeDetail shows a node and the tasks claimed on it, sel marked.
func nodeDetail(n model.Node, tasks []*model.Task, sel int, now time.Time, loc *time.Location) []string {
	out := []string{
		fmt.Sprintf("%-11s %s", "status", n.Status),
		fmt.Sprintf("%-11s %s", "last seen", ago(n.LastSeen, now)),
		fmt.Sprintf("%-11s %d", "failures", n.Failures),
		fmt.Sprintf("%-11s %s", "last error", orDash(theme.Safe(n.LastErr))),
		fmt.Sprintf("%-11s %d", "queue", n.QueueDepth),
		fmt.Sprintf("%-11s %s", "health url", orDash(theme.Safe(model.RedactURL(n.Health)))),
	}
	if !n.LastTaskAt.IsZero() {
		out = append(out, fmt.Sprintf("%-11s %s", "last task", n.LastTaskAt.In(loc).Format(time.RFC3339)))
	}
	out = append(out, "", fmt.Sprintf("claimed here (%d)", len(tasks)))
	for i, t := range tasks {
		mark := "  "
		if i == sel {
			mark = "› "
		}
		out = append(out, fmt.Sprintf("%s%-10s %-8s %-12s %s", mark, t.DisplayKey(), t.Source, t.Claim().Name, theme.Safe(t.Title)))
	}
	if len(n.ClaimedTasks) > 0 {
		out = append(out, "", "reported by the node: "+strings.Join(n.ClaimedTasks, ", "))
	}
	return out
}
