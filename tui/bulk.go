package tui

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/theme"
)

// toggleMark marks the task under the cursor, or unmarks it, and moves on.
func (m *Model) toggleMark() {
	t := m.selected()
	if t == nil {
		return
	}
	if _, ok := m.marks[t.Ref()]; ok {
		delete(m.marks, t.Ref())
	} else {
		m.marks[t.Ref()] = t
		m.markFrom = t.Ref()
	}
	m.move(1)
}

// markRange marks every task shown from the last one marked to the cursor,
// both included, and makes the cursor's task the next range's start.
func (m *Model) markRange() {
	t := m.selected()
	if t == nil {
		return
	}
	p := m.pane()
	from := slices.IndexFunc(p.shown, func(r row) bool { return r.t.Ref() == m.markFrom })
	if from < 0 {
		m.fail("no mark to range from here: space marks where a range starts")
		return
	}
	lo, hi := min(from, p.grid.cursor), max(from, p.grid.cursor)
	for _, r := range p.shown[lo : hi+1] {
		m.marks[r.t.Ref()] = r.t
	}
	m.markFrom = t.Ref()
	m.note(strconv.Itoa(len(m.marks)) + " marked · esc clears")
	m.syncKeys()
}

// markShown marks every task the view shows through the filter.
func (m *Model) markShown() {
	p := m.pane()
	if p.kind == nodesView || p.kind == activityView {
		return
	}
	for _, r := range p.shown {
		m.marks[r.t.Ref()] = r.t
	}
	m.note(strconv.Itoa(len(m.marks)) + " marked · esc clears")
	m.syncKeys()
}

// marked are the marked tasks in the order of the view on screen, then
// those the view no longer shows.
func (m *Model) marked() []*model.Task {
	out := make([]*model.Task, 0, len(m.marks))
	seen := make(map[string]bool, len(m.marks))
	for _, r := range m.pane().shown {
		if t, ok := m.marks[r.t.Ref()]; ok {
			out = append(out, t)
			seen[r.t.Ref()] = true
		}
	}
	for ref, t := range m.marks {
		if !seen[ref] {
			out = append(out, t)
		}
	}
	return out
}

// startBulk opens the preview of an action on the marked tasks.
func (m *Model) startBulk(a model.Action) {
	tasks := m.marked()
	req := sources.Request{Action: a}
	d := &bulkDialog{req: req, tasks: tasks, preview: m.hub.PreviewBulk(req, tasks), reason: &lineEdit{limit: 500}}
	if a == model.ActionHandoff {
		d.agents = m.knownAgents()
	}
	m.push(d)
}

// bulkDialog shows what a bulk action would do, asks for one reason (and a
// hand-off's target), then y/N.
type bulkDialog struct {
	req     sources.Request
	tasks   []*model.Task
	preview sources.BulkPreview
	reason  *lineEdit
	agents  []string
	agent   int
	confirm bool
	problem string
}

func (d *bulkDialog) hint() string {
	if d.confirm {
		return "y do it · any other key cancels: nothing is done"
	}
	return "type the reason · enter continue · esc back: nothing is done"
}

func (d *bulkDialog) update(m *Model, msg tea.KeyMsg) tea.Cmd {
	if d.confirm {
		m.pop()
		if msg.String() != "y" && msg.String() != "Y" {
			m.note(fmt.Sprintf("%s of %d marked: nothing done", d.req.Action, len(d.tasks)))
			return nil
		}
		return m.runBulk(d.preview, d.request())
	}
	switch msg.Type {
	case tea.KeyEsc:
		m.pop()
		m.note(fmt.Sprintf("%s of %d marked: nothing done", d.req.Action, len(d.tasks)))
		return nil
	case tea.KeyEnter:
		switch {
		case len(d.preview.Apply) == 0:
			d.problem = "nothing to apply: every marked task would be refused"
		case strings.TrimSpace(d.reason.Value()) == "":
			d.problem = "a reason is required"
		default:
			d.confirm = true
		}
		return nil
	case tea.KeyLeft, tea.KeyRight:
		if len(d.agents) > 0 {
			step := 1
			if msg.Type == tea.KeyLeft {
				step = len(d.agents) - 1
			}
			d.agent = (d.agent + step) % len(d.agents)
			return nil
		}
	}
	if d.reason.Update(msg) {
		d.problem = ""
	}
	return nil
}

func (d *bulkDialog) request() sources.Request {
	req := d.req
	req.Reason = strings.TrimSpace(d.reason.Value())
	if len(d.agents) > 0 {
		req.To = d.agents[d.agent]
	}
	return req
}

// bulkLines is a preview or a summary's list, at most limit lines.
func bulkLines(st *theme.Styles, head string, list []sources.BulkTask, limit int) []string {
	if len(list) == 0 {
		return nil
	}
	out := []string{st.Muted.Render(head)}
	for i, b := range list {
		if i == limit {
			out = append(out, st.Faint.Render(fmt.Sprintf("  … and %d more", len(list)-limit)))
			break
		}
		line := "  " + b.Source + "/" + cmpKey(b)
		if b.Reason != "" {
			line += ": " + b.Reason
		}
		out = append(out, theme.Safe(line))
	}
	return out
}

func cmpKey(b sources.BulkTask) string {
	if b.Key != "" {
		return b.Key
	}
	return b.Task
}

func (d *bulkDialog) view(m *Model, width, height int) string {
	st := m.styles
	p := d.preview
	var per []string
	for name, n := range p.Sources {
		per = append(per, fmt.Sprintf("%s %d", name, n))
	}
	slices.Sort(per)
	lines := []string{
		st.DialogTitle.Render(fmt.Sprintf("%s %d marked tasks?", actionTitles[d.req.Action], p.Count)),
		"",
		field(st, "sources", theme.Safe(strings.Join(per, " · "))),
		field(st, "apply to", strconv.Itoa(len(p.Apply))+", each only if still as seen"),
		field(st, "refused", strconv.Itoa(len(p.Refused))),
	}
	lines = append(lines, bulkLines(st, "refused:", p.Refused, 6)...)
	lines = append(lines, "")
	if len(d.agents) > 0 {
		lines = append(lines, field(st, "to", "‹ "+theme.Safe(d.agents[d.agent])+" ›"))
	}
	lines = append(lines, field(st, "reason", d.reason.View(min(width-4, 76)-11, !d.confirm, "")))
	if d.problem != "" {
		lines = append(lines, "", st.Danger.Render(d.problem))
	}
	if d.confirm {
		lines = append(lines, "", fmt.Sprintf("Apply to %d tasks, one by one? ", len(p.Apply))+st.Key.Render("[y/N]"))
	}
	return box(st, lines, width, height)
}

// bulkRun is a bulk action under way.
type bulkRun struct {
	action      model.Action
	done, total int
	stop        context.CancelFunc
	events      chan tea.Msg
}

type (
	bulkProgressMsg struct{ done, total int }
	bulkDoneMsg     struct{ summary sources.BulkSummary }
)

// runBulk applies a previewed action off the UI loop; progress and the
// summary come back as messages.
func (m *Model) runBulk(p sources.BulkPreview, req sources.Request) tea.Cmd {
	ctx, stop := context.WithCancel(context.Background())
	run := &bulkRun{action: req.Action, total: len(p.Apply), stop: stop, events: make(chan tea.Msg, 1)}
	m.bulk = run
	m.marks = map[string]*model.Task{}
	h := m.hub
	go func() {
		s := h.ApplyBulk(ctx, p, req, func(done, total int) {
			select {
			case run.events <- bulkProgressMsg{done, total}:
			default: // the screen catches up with the next one
			}
		})
		stop()
		run.events <- bulkDoneMsg{s}
	}()
	return m.waitBulk()
}

func (m *Model) waitBulk() tea.Cmd {
	events := m.bulk.events
	return func() tea.Msg { return <-events }
}

// bulkStep takes a bulk action's progress or its end.
func (m *Model) bulkStep(msg tea.Msg) tea.Cmd {
	if m.bulk == nil {
		return nil
	}
	switch msg := msg.(type) {
	case bulkProgressMsg:
		m.bulk.done, m.bulk.total = msg.done, msg.total
		return m.waitBulk()
	case bulkDoneMsg:
		m.bulk = nil
		m.bulkDone(msg.summary)
	}
	return nil
}

// bulkDone keeps the summary in Activity and shows it.
func (m *Model) bulkDone(s sources.BulkSummary) {
	what := fmt.Sprintf("%s %s of %d: %d applied, %d refused, %d failed", m.hub.Actor(), s.Action,
		len(s.Applied)+len(s.Refused)+len(s.Failed)+len(s.Stopped), len(s.Applied), len(s.Refused), len(s.Failed))
	if len(s.Stopped) > 0 {
		what += fmt.Sprintf(", stopped with %d not tried", len(s.Stopped))
	}
	var named []string
	for _, b := range append(append([]sources.BulkTask{}, s.Refused...), s.Failed...) {
		named = append(named, cmpKey(b))
	}
	if len(named) > 0 {
		what += " (" + strings.Join(named, ", ") + ")"
	}
	failed := s.Err() != nil
	m.addActivity(activity{At: m.now(), Task: "bulk", Actor: m.hub.Actor(), What: what, Human: true, Failed: failed})
	if failed {
		m.fail(what)
	} else {
		m.note(what)
	}
	st := m.styles
	lines := []string{what, ""}
	lines = append(lines, bulkLines(st, "refused:", s.Refused, 20)...)
	lines = append(lines, bulkLines(st, "failed:", s.Failed, 20)...)
	lines = append(lines, bulkLines(st, "not tried:", s.Stopped, 20)...)
	// Reasons are wrapped, not cut: what changed is the point of a refusal.
	var wrapped []string
	for _, l := range lines {
		wrapped = append(wrapped, strings.Split(ansi.Wordwrap(l, max(m.width-6, 20), " "), "\n")...)
	}
	lines = wrapped
	m.push(&detailDialog{title: actionTitles[s.Action] + " summary", lines: lines})
	m.derive()
}

// bulkBar is the banner of a bulk action under way.
func (m *Model) bulkBar() string {
	b := m.bulk
	width := 20
	filled := 0
	if b.total > 0 {
		filled = b.done * width / b.total
	}
	return fmt.Sprintf(" %s %d/%d %s%s  esc stops", b.action, b.done, b.total, strings.Repeat("█", filled), strings.Repeat("░", width-filled))
}
