package tui

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/theme"
)

// startBulk asks what a bulk action on the marked tasks needs (the reason,
// a hand-off's target); the preview follows, judged with it.
func (m *Model) startBulk(a model.Action) {
	d := &bulkDialog{req: sources.Request{Action: a}, tasks: m.board.marked(), reason: &lineEdit{limit: 500}}
	if a == model.ActionHandoff {
		d.agents = m.board.knownAgents(m.opts.Agents)
	}
	m.push(d)
}

// bulkDialog asks for one reason (and a hand-off's target), then shows
// what the action would do with them, then y/N.
type bulkDialog struct {
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
		return hintOf([]key.Binding{k.Yes}, "any other key cancels: nothing is done")
	}
	if len(d.agents) > 0 {
		return hintOf([]key.Binding{k.Pick, k.Submit, k.Back})
	}
	return hintOf([]key.Binding{k.Submit, k.Back}, "type the reason")
}

func (d *bulkDialog) typing() bool { return d.preview == nil }

func (d *bulkDialog) update(m *Model, msg tea.KeyMsg) action {
	nothing := action{close: true, note: fmt.Sprintf("%s of %d marked: nothing done", d.req.Action, len(d.tasks))}
	if d.preview != nil {
		if key.Matches(msg, m.keys.Yes) {
			return action{close: true, bulk: &bulkStart{preview: *d.preview, req: d.request()}}
		}
		return nothing
	}
	switch msg.Type {
	case tea.KeyEsc:
		return nothing
	case tea.KeyEnter:
		d.judge(m)
		return action{}
	case tea.KeyLeft, tea.KeyRight:
		if len(d.agents) > 0 {
			step := 1
			if msg.Type == tea.KeyLeft {
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
// task would be applied to, else it says why not and waits.
func (d *bulkDialog) judge(m *Model) {
	req := d.request()
	if req.Reason == "" {
		d.problem = "a reason is required" // one line in the journal for many overrides
		return
	}
	p := m.hub.PreviewBulk(req, d.tasks)
	d.refused = p.Refused
	if len(p.Apply) == 0 {
		d.problem = "nothing to apply: every marked task would be refused"
		return
	}
	d.preview, d.problem = &p, ""
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
	per := map[string]int{}
	for _, t := range d.tasks {
		per[t.Source]++
	}
	var names []string
	for name, n := range per {
		names = append(names, fmt.Sprintf("%s %d", name, n))
	}
	slices.Sort(names)
	lines := []string{
		st.DialogTitle.Render(fmt.Sprintf("%s %d marked tasks?", actionTitles[d.req.Action], len(d.tasks))),
		"",
		field(st, "sources", theme.Safe(strings.Join(names, " · "))),
	}
	if len(d.agents) > 0 {
		lines = append(lines, field(st, "to", "‹ "+theme.Safe(d.agents[d.agent])+" ›"))
	}
	lines = append(lines, field(st, "reason", d.reason.View(min(width-4, 76)-11, d.preview == nil, "")))
	if p := d.preview; p != nil {
		lines = append(lines, "",
			field(st, "apply to", strconv.Itoa(len(p.Apply))+", each only if still as seen"),
			field(st, "refused", strconv.Itoa(len(p.Refused))))
		lines = append(lines, bulkLines(st, "refused:", p.Refused, 6)...)
		lines = append(lines, "", fmt.Sprintf("Apply to %d tasks, one by one? ", len(p.Apply))+st.Key.Render("[y/N]"))
	} else {
		lines = append(lines, "", st.Muted.Render("enter: see what would be applied and refused, with this reason"))
	}
	if d.problem != "" {
		lines = append(lines, "", st.Danger.Render(d.problem))
		if d.preview == nil {
			lines = append(lines, bulkLines(st, "refused:", d.refused, 6)...)
		}
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
	m.work.bulk = run
	m.board.marks = map[string]*model.Task{}
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
	events := m.work.bulk.events
	return func() tea.Msg { return <-events }
}

// bulkStep takes a bulk action's progress or its end.
func (m *Model) bulkStep(msg tea.Msg) tea.Cmd {
	if m.work.bulk == nil {
		return nil
	}
	switch msg := msg.(type) {
	case bulkProgressMsg:
		m.work.bulk.done, m.work.bulk.total = msg.done, msg.total
		return m.waitBulk()
	case bulkDoneMsg:
		m.work.bulk = nil
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
	m.board.addActivity(activity{At: m.now(), Task: "bulk", Actor: m.hub.Actor(), What: what, Human: true, Failed: failed})
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
		wrapped = append(wrapped, strings.Split(ansi.Wordwrap(l, max(m.screen.width-6, 20), " "), "\n")...)
	}
	lines = wrapped
	m.push(&detailDialog{title: actionTitles[s.Action] + " summary", lines: lines})
	m.derive()
}

// bulkBar is the banner of a bulk action under way.
func (m *Model) bulkBar() string {
	b := m.work.bulk
	width := 20
	filled := 0
	if b.total > 0 {
		filled = b.done * width / b.total
	}
	return fmt.Sprintf(" %s %d/%d %s%s  esc stops", b.action, b.done, b.total, strings.Repeat("█", filled), strings.Repeat("░", width-filled))
}
