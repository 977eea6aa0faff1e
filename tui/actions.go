package tui

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// action is what a dialog asks of the root after a key: dialogs read the
// root but never change it, so every change to the dashboard happens
// here, in Model.apply. The zero action does nothing.
type action struct {
	close bool   // pop the dialog that answered
	push  dialog // then open this one
	note  string // a status message
	fail  string // an error message
	// start opens the first dialog of an action on a task.
	start *startAction
	send  *sources.Request // apply one action
	bulk  *bulkStart       // apply a previewed bulk action
	open  *model.Task      // open a task's detail
	copy  *model.Task      // copy a task's id
	// command runs a : line; cmdline leaves text on the : line to finish.
	command, cmdline string
	leaveCommand     bool // the : line closes
	// ignored: the dialog has no use for the key; it did nothing.
	ignored bool
}

type startAction struct {
	task   *model.Task
	action model.Action
}

type bulkStart struct {
	preview sources.BulkPreview
	req     sources.Request
	titles  map[[2]string]string
}

// apply does what a dialog asked, in order: close, open, say, then start.
func (m *Model) apply(a action) tea.Cmd {
	if a.close {
		m.pop()
	}
	if a.push != nil {
		m.push(a.push)
	}
	if a.note != "" {
		m.status.note(a.note)
	}
	if a.fail != "" {
		m.status.fail(a.fail)
	}
	if a.leaveCommand {
		m.input.leaveCommand()
	}
	if a.cmdline != "" {
		m.input.startCommand()
		m.input.cmdline.SetValue(a.cmdline)
	}
	switch {
	case a.start != nil:
		m.startActionOn(a.start.task, a.start.action)
	case a.send != nil:
		return m.send(*a.send)
	case a.bulk != nil:
		return m.runBulk(a.bulk.preview, a.bulk.req, a.bulk.titles)
	case a.open != nil:
		return m.openTask(a.open)
	case a.copy != nil:
		return m.copyID(a.copy)
	case a.command != "":
		m.input.startCommand()
		m.input.cmdline.SetValue(a.command)
		return m.runCommand(m.input.enter())
	}
	return nil
}

// act starts an action on the marked tasks, or else on the selected one.
func (m *Model) act(a model.Action) {
	switch {
	case m.work.bulk != nil:
		m.status.fail("a bulk action is under way (esc stops it)")
	case len(m.board.marks) > 0:
		m.push(newBulkDialog(a, m.board, m.opts.Agents))
	default:
		m.startActionOn(m.selected(), a)
	}
}

// refusal says why action a cannot apply to t as shown, or "": read-only,
// or the desk's own rule (Desk.Precheck) on the task as it stands, asked
// of the hub's desk at the dashboard's door, as Apply will be. The reason
// is asked later, so the rule is asked with one in hand.
func (m *Model) refusal(t *model.Task, a model.Action) string {
	if m.readOnly(t.Source) {
		return "read-only — actions are off for this source"
	}
	by := model.Actor{Name: cmp.Or(m.hub.Actor(), "-"), Door: model.DoorDashboard}
	err := m.hub.Precheck(t, sources.Request{Action: a, Seen: t, Reason: "-", To: "-", By: by})
	if err == nil || model.CodeOf(err) == model.CodeMisconfigured && a.Move() == model.MoveNone {
		return "" // what the desk would say of the settings is for it to say
	}
	msg := err.Error()
	var e *model.Error
	if errors.As(err, &e) && e.Msg != "" {
		msg = e.Msg
	}
	return strings.TrimSuffix(msg, ": nothing was done")
}

// startActionOn opens the first dialog of an action on t, or says why it
// cannot apply.
func (m *Model) startActionOn(t *model.Task, a model.Action) {
	if t == nil {
		return
	}
	if t.Problem() != "" {
		m.status.fail("cannot act on " + t.DisplayKey() + ": " + t.Problem())
		return
	}
	if _, busy := m.work.pending[t.Ref()]; busy {
		m.status.fail(t.DisplayKey() + " already has an action under way")
		return
	}
	if why := m.refusal(t, a); why != "" {
		m.status.fail(fmt.Sprintf("%s %s: %s", a, t.DisplayKey(), why))
		return
	}
	req := sources.Request{Action: a, Seen: t}
	if a.Move() != model.MoveNone {
		m.work.wantTrail = t // the submitter is in the trail
	}
	switch {
	case a.Needs().Target:
		m.push(newHandoffForm(req, m.board.knownAgents(m.opts.Agents)))
	case a == model.ActionBlock:
		m.push(newBlockForm(req))
	case a.Needs().Reason, a == model.ActionForceRelease, a == model.ActionTakeover, a == model.ActionApprove, a == model.ActionUnblock, a == model.ActionReview:
		m.push(newReasonForm(req))
	default:
		m.push(&confirmDialog{req: req})
	}
}

// send marks the row pending and applies the action off the UI loop.
func (m *Model) send(req sources.Request) tea.Cmd {
	m.work.pending[req.Seen.Ref()] = req.Action
	m.status.note(fmt.Sprintf("%s %s…", req.Action, req.Seen.DisplayKey()))
	h, timeout := m.hub, m.opts.ActionTimeout
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		after, err := h.Apply(ctx, req)
		return actionMsg{req: req, after: after, seq: h.Seq(), err: err}
	}
}

// actionDone shows an action's outcome: the row at once on success, what
// changed on a CONFLICT, with a key to look again.
func (m *Model) actionDone(msg actionMsg) {
	ref := msg.req.Seen.Ref()
	delete(m.work.pending, ref)
	r := model.AuditRecord{At: m.now(), Actor: m.hub.Actor(), Source: msg.req.Seen.Source, Task: msg.req.Seen.DisplayKey(),
		Action: msg.req.Action, Reason: msg.req.Reason, Target: msg.req.To, Result: "applied"}
	if msg.err != nil {
		r.Result, r.Error = string(model.CodeOf(msg.err)), model.Redact(msg.err.Error())
		m.status.fail(fmt.Sprintf("%s %s refused: %s", msg.req.Action, msg.req.Seen.DisplayKey(), msg.err))
		// A refusal is worth more than one cut-off line: the whole reason,
		// with what changed, until the human dismisses it.
		d := &detailDialog{title: fmt.Sprintf("%s %s refused", actionTitles[msg.req.Action], msg.req.Seen.DisplayKey()),
			lines: strings.Split(ansi.Wordwrap(model.Redact(msg.err.Error()), max(m.screen.width-2, 20), " "), "\n")}
		if model.CodeOf(msg.err) == model.CodeConflict {
			d.again = msg.req.Seen
		}
		m.push(d)
	} else {
		m.status.note(fmt.Sprintf("%s %s applied", msg.req.Action, msg.req.Seen.DisplayKey()))
	}
	m.board.addActivity(recordActivity(r))
	if msg.after != nil {
		m.board.results[ref] = actionResult{after: msg.after, seq: msg.seq}
	}
	m.derive()
}

// detail opens every field of the selected task, or a node's tasks, or
// an activity's line (its times in loc) when its task is gone.
func (b *board) detail(loc *time.Location) action {
	p := b.pane()
	if p.len() == 0 {
		return action{}
	}
	switch p.kind {
	case nodesView:
		n := p.nodes[p.grid.cursor]
		var tasks []*model.Task
		for _, t := range b.all {
			if b.snap.Mesh.On(t, n.Name) {
				tasks = append(tasks, t)
			}
		}
		return action{push: &nodeDialog{node: n, tasks: tasks}}
	case activityView:
		a := p.acts[p.grid.cursor]
		if t := b.findKey(a.Source, a.Task); t != nil {
			return action{open: t}
		}
		return action{push: &detailDialog{title: "activity", lines: []string{
			"when    " + a.At.In(loc).Format(time.RFC3339), "source  " + a.Source, "task    " + a.Task,
			"actor   " + orDash(a.Actor), "what    " + a.What}}}
	default:
		if t := p.selectedTask(); t != nil {
			return action{open: t}
		}
	}
	return action{}
}

// openTask pushes a task's detail and fetches its full trail.
func (m *Model) openTask(t *model.Task) tea.Cmd {
	m.push(&taskDialog{source: t.Source, id: t.ID, last: t})
	return m.fetchTrail(t.Source, t.ID)
}

// fetchTrail reads a task's full trail afresh for its detail.
func (m *Model) fetchTrail(source, id string) tea.Cmd {
	h, timeout := m.hub, m.opts.ActionTimeout
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		full, err := h.Get(ctx, source, id)
		return trailMsg{source: source, id: id, task: full, err: err}
	}
}

// refetchTrail reads the trail again for an open detail of the task an
// action just changed, so its timeline shows that action.
func (m *Model) refetchTrail(source, id string) tea.Cmd {
	for _, d := range m.dialogs {
		if td, ok := d.(*taskDialog); ok && td.source == source && td.id == id {
			return m.fetchTrail(source, id)
		}
	}
	return nil
}

// copyID puts the task's id on the clipboard through the terminal (OSC 52),
// only when asked.
func (m *Model) copyID(t *model.Task) tea.Cmd {
	if m.opts.Copy == nil {
		m.status.fail("copy: this terminal offers no clipboard")
		return nil
	}
	m.status.note("copied " + t.ID)
	id, put := t.ID, m.opts.Copy
	return func() tea.Msg { put(id); return nil }
}

// runBulk applies a previewed action off the UI loop; progress and the
// summary come back as messages.
func (m *Model) runBulk(p sources.BulkPreview, req sources.Request, title map[[2]string]string) tea.Cmd {
	ctx, stop := context.WithCancel(context.Background())
	run := &bulkRun{action: req.Action, total: len(p.Apply), stop: stop, events: make(chan tea.Msg, 1), titles: title}
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
	return run.wait()
}

// bulkDone keeps the summary in Activity and shows it.
func (m *Model) bulkDone(s sources.BulkSummary, title map[[2]string]string) {
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
		m.status.fail(what)
	} else {
		m.status.note(what)
	}
	st := m.styles
	w := max(m.screen.width-2, 20)
	lines := append(strings.Split(ansi.Wordwrap(what, w, " "), "\n"), "")
	lines = append(lines, bulkLines(st, "refused", s.Refused, title, w)...)
	lines = append(lines, bulkLines(st, "failed", s.Failed, title, w)...)
	lines = append(lines, bulkLines(st, "not tried", s.Stopped, title, w)...)
	lines = append(lines, bulkLines(st, "applied", s.Applied, title, w)...)
	m.push(&detailDialog{title: actionTitles[s.Action] + " summary", lines: lines})
	m.derive()
}
