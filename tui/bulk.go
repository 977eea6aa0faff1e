package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/theme"
)

// newBulkDialog asks what a bulk action on the marked tasks needs (the
// reason, a hand-off's target, one of the board's agents or the
// configured ones); the preview follows, judged with it.
func newBulkDialog(a model.Action, b *board, agents []string) *bulkDialog {
	d := &bulkDialog{req: sources.Request{Action: a}, tasks: b.marked(), reason: &lineEdit{limit: 500}}
	if a == model.ActionHandoff {
		d.agents = b.knownAgents(agents)
	}
	return d
}

// bulkDialog asks for one reason (and a hand-off's target), then shows
// what the action would do with them, then y/N. It lists the tasks by id
// and title, scrolled with ↑/↓, so a wrong mark is seen before y.
type bulkDialog struct {
	scroller
	req     sources.Request
	tasks   []*model.Task
	preview *sources.BulkPreview // judged once the reason is given
	reason  *lineEdit
	agents  []string
	agent   int
	problem string
	refused []sources.BulkTask // as the last preview judged them
}

func (d *bulkDialog) hint(k KeyMap) string {
	if d.preview != nil {
		return hintOf([]key.Binding{k.Yes}, scrollHint(k), "any other key cancels: nothing is done")
	}
	if len(d.agents) > 0 {
		return hintOf([]key.Binding{k.Pick, k.Submit, k.Back}, "↑/↓ scroll")
	}
	if !d.req.Action.Needs().Reason {
		return hintOf([]key.Binding{k.Submit, k.Back}, "a reason if you like", "↑/↓ scroll")
	}
	return hintOf([]key.Binding{k.Submit, k.Back}, "type the reason", "↑/↓ scroll")
}

func (d *bulkDialog) typing() bool { return d.preview == nil }

// scrollKey scrolls the task list: the arrows and pages while the reason
// is typed (letters are text then), every scrolling key at the preview.
func (d *bulkDialog) scrollKey(e *dialogEnv, msg tea.KeyPressMsg) bool {
	n := len(d.listLines(e, e.width))
	if d.preview == nil {
		switch msg.String() {
		case "up", "down", "pgup", "pgdown":
		default:
			return false
		}
	}
	return d.scroll(e.keys, msg, n, 10)
}

func (d *bulkDialog) update(e *dialogEnv, msg tea.KeyPressMsg) action {
	nothing := action{close: true, note: fmt.Sprintf("%s of %d marked: nothing done", d.req.Action, len(d.tasks))}
	if d.scrollKey(e, msg) {
		return action{}
	}
	if d.preview != nil {
		if key.Matches(msg, e.keys.Yes) {
			return action{close: true, bulk: &bulkStart{preview: *d.preview, req: d.request(), titles: titles(d.tasks)}}
		}
		return nothing
	}
	switch msg.String() {
	case "esc":
		return nothing
	case "enter":
		d.judge(e)
		return action{}
	case "left", "right":
		if len(d.agents) > 0 {
			step := 1
			if msg.String() == "left" {
				step = len(d.agents) - 1
			}
			d.agent = (d.agent + step) % len(d.agents)
			return action{}
		}
	}
	if d.reason.Update(msg) {
		d.problem = ""
	}
	return action{}
}

// judge previews the action with the reason given: on to y/N when some
// task would be applied to, else it says why not and waits. A reason is
// required only where the action's needs say so, as for one task.
func (d *bulkDialog) judge(e *dialogEnv) {
	req := d.request()
	if d.problem = lacking(req); d.problem != "" {
		return
	}
	p := e.preview(req, d.tasks)
	d.refused = p.Refused
	if len(p.Apply) == 0 {
		d.problem = "nothing to apply: every marked task would be refused"
		return
	}
	d.preview, d.problem, d.offset = &p, "", 0
}

func (d *bulkDialog) request() sources.Request {
	req := d.req
	req.Reason = strings.TrimSpace(d.reason.Value())
	if len(d.agents) > 0 {
		req.To = d.agents[d.agent]
	}
	return req
}

// titles are the tasks' titles by source and id, for the lists.
func titles(ts []*model.Task) map[[2]string]string {
	out := make(map[[2]string]string, len(ts))
	for _, t := range ts {
		out[[2]string{t.Source, t.ID}] = t.Title
	}
	return out
}

// bulkLines is a preview or a summary's list under its head: each task's
// source, id and title, then why, when it was refused or failed, wrapped
// to width: what changed is the point of a refusal.
func bulkLines(st *theme.Styles, head string, list []sources.BulkTask, title map[[2]string]string, width int) []string {
	if len(list) == 0 {
		return nil
	}
	out := []string{st.Muted.Render(fmt.Sprintf("%s (%d)", head, len(list)))}
	for _, b := range list {
		line := "  " + b.Source + "/" + cmpKey(b)
		if t := title[[2]string{b.Source, b.Task}]; t != "" {
			line += "  " + t
		}
		if b.Reason != "" {
			line += ": " + b.Reason
		}
		for i, l := range strings.Split(ansi.Wordwrap(theme.Safe(line), max(width-4, 20), " "), "\n") {
			if i > 0 {
				l = "    " + l
			}
			out = append(out, l)
		}
	}
	return out
}

func cmpKey(b sources.BulkTask) string {
	if b.Key != "" {
		return b.Key
	}
	return b.Task
}

// asBulk are tasks as a bulk list names them.
func asBulk(ts []*model.Task) []sources.BulkTask {
	out := make([]sources.BulkTask, len(ts))
	for i, t := range ts {
		out[i] = sources.BulkTask{Source: t.Source, Task: t.ID, Key: t.DisplayKey()}
	}
	return out
}

// listLines are the tasks the dialog is about: the marked ones, then, once
// judged, those it would apply to and those it would refuse, with why.
func (d *bulkDialog) listLines(e *dialogEnv, width int) []string {
	st, title := e.styles, titles(d.tasks)
	w := dialogWidth(width)
	p := d.preview
	if p == nil {
		lines := bulkLines(st, "marked", asBulk(d.tasks), title, w)
		if d.problem != "" {
			lines = append(lines, bulkLines(st, "refused", d.refused, title, w)...)
		}
		return lines
	}
	return append(bulkLines(st, "apply to, each only if still as seen", p.Apply, title, w),
		bulkLines(st, "refused", p.Refused, title, w)...)
}

func (d *bulkDialog) view(e *dialogEnv, width, height int) string {
	st := e.styles
	per := map[string]int{}
	for _, t := range d.tasks {
		per[t.Source]++
	}
	var names []string
	for name, n := range per {
		names = append(names, fmt.Sprintf("%s %d", name, n))
	}
	slices.Sort(names)
	head := []string{
		st.DialogTitle.Render(fmt.Sprintf("%s %d marked tasks?", actionTitles[d.req.Action], len(d.tasks))),
		"",
		field(st, "sources", theme.Safe(strings.Join(names, " · "))),
	}
	if len(d.agents) > 0 {
		head = append(head, field(st, "to", "‹ "+theme.Safe(d.agents[d.agent])+" ›"))
	}
	placeholder := "optional"
	if d.req.Action.Needs().Reason {
		placeholder = ""
	}
	head = append(head, field(st, "reason", d.reason.View(dialogWidth(width)-9, d.preview == nil, placeholder)), "")
	var foot []string
	if d.problem != "" {
		foot = append(foot, st.Danger.Render(d.problem))
	}
	if p := d.preview; p != nil {
		foot = append(foot, fmt.Sprintf("Apply to %d tasks, one by one? ", len(p.Apply))+st.Key.Render("[y/N]"))
	} else {
		foot = append(foot, st.Muted.Render("enter: see what would be applied and refused, with this reason"))
	}
	list := d.listLines(e, width)
	room := max(height-2-len(head)-len(foot)-1, 1) // the border, and a blank before the foot
	lines := append(head, d.window(st, list, room)...)
	return box(st, append(append(lines, ""), foot...), width, height)
}

// window is the part of a list that fits room lines from the scroller's
// offset, saying what lies above and below and which keys show it.
func (s *scroller) window(st *theme.Styles, list []string, room int) []string {
	if len(list) <= room {
		s.offset = 0
		return list
	}
	if room < 3 {
		return []string{st.Warn.Render(fmt.Sprintf("%d lines: the terminal is too short to list them", len(list)))}
	}
	s.offset = max(min(s.offset, len(list)-(room-1)), 0)
	end := min(s.offset+room-1, len(list))
	out := slices.Clone(list[s.offset:end])
	switch {
	case end < len(list):
		out = append(out, st.Warn.Render(fmt.Sprintf("↓ %d more · ↑/↓ pgup/pgdown scroll", len(list)-end)))
	default:
		out = append(out, st.Muted.Render(fmt.Sprintf("the end · %d above · ↑/↓ scroll", s.offset)))
	}
	return out
}

// bulkRun is a bulk action under way.
type bulkRun struct {
	action      model.Action
	done, total int
	stop        context.CancelFunc
	events      chan tea.Msg
	titles      map[[2]string]string // the marked tasks' titles, for the summary
}

type (
	bulkProgressMsg struct{ done, total int }
	bulkDoneMsg     struct{ summary sources.BulkSummary }
)

// wait is the next progress or the end of the run.
func (r *bulkRun) wait() tea.Cmd {
	events := r.events
	return func() tea.Msg { return <-events }
}

// bulkStep takes a bulk action's progress and waits for more; at its end
// the run is over, and its summary and the tasks' titles are returned.
func (w *work) bulkStep(msg tea.Msg) (wait tea.Cmd, end *bulkDoneMsg, titles map[[2]string]string) {
	if w.bulk == nil {
		return nil, nil, nil
	}
	switch msg := msg.(type) {
	case bulkProgressMsg:
		w.bulk.done, w.bulk.total = msg.done, msg.total
		return w.bulk.wait(), nil, nil
	case bulkDoneMsg:
		titles = w.bulk.titles
		w.bulk = nil
		return nil, &msg, titles
	}
	return nil, nil, nil
}

// bar is the banner of a bulk action under way.
func (b *bulkRun) bar() string {
	width := 20
	filled := 0
	if b.total > 0 {
		filled = b.done * width / b.total
	}
	return fmt.Sprintf(" %s %d/%d %s%s  esc stops", b.action, b.done, b.total, strings.Repeat("█", filled), strings.Repeat("░", width-filled))
}
