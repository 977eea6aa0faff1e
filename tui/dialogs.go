package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/theme"
)

// dialog is one layer of the dialog stack; the top one gets every key.
type dialog interface {
	update(m *Model, msg tea.KeyMsg) tea.Cmd
	view(m *Model, width, height int) string
	// hint replaces the key help under the table while the dialog is open.
	hint() string
}

func (d *confirmDialog) hint() string { return "y do it · any other key cancels: nothing is done" }
func (d *formDialog) hint() string {
	return "tab next field · ←/→ choose · enter continue · esc back"
}
func (d *detailDialog) hint() string { return "↑/↓ pgup/pgdown scroll · esc close" }
func (d *helpDialog) hint() string   { return "any key closes" }

// confirmDialog asks y/N before an action. Anything but y — enter
// included — is No: at 3 a.m. the safe answer must be the easy one.
type confirmDialog struct {
	req sources.Request
}

func (d *confirmDialog) update(m *Model, msg tea.KeyMsg) tea.Cmd {
	m.pop()
	if msg.String() == "y" || msg.String() == "Y" {
		return m.send(d.req)
	}
	m.note(fmt.Sprintf("%s %s: nothing done", d.req.Action, d.req.Seen.DisplayKey()))
	return nil
}

var actionTitles = map[model.Action]string{
	model.ActionTakeover:     "Claim as HUMAN",
	model.ActionForceRelease: "Force-release",
	model.ActionCancel:       "Cancel",
	model.ActionHandoff:      "Hand off",
}

func (d *confirmDialog) view(m *Model, width, height int) string {
	st := m.styles
	t := d.req.Seen
	lines := []string{
		st.DialogTitle.Render(theme.Safe(fmt.Sprintf("%s %s on %s?", actionTitles[d.req.Action], t.DisplayKey(), t.Source))),
		"",
	}
	lines = append(lines, taskSummary(t, m.now(), st)...)
	if d.req.Action == model.ActionHandoff {
		lines = append(lines, field(st, "to", d.req.To+", priority "+d.req.Priority))
	}
	if d.req.Reason != "" {
		lines = append(lines, field(st, "reason", d.req.Reason))
	}
	lines = append(lines, "", "Only if the task is still as shown. Proceed? "+st.Key.Render("[y/N]"))
	return box(st, lines, width, height)
}

// taskSummary is what a human must see before acting: the task and who
// holds it now.
func taskSummary(t *model.Task, now time.Time, st *theme.Styles) []string {
	holder := "nobody"
	if t.Claim.Held() {
		holder = t.Claim.Holder.String() + " " + t.Claim.Name
		if t.Claim.RunID != "" {
			holder += " · run " + t.Claim.RunID
		}
		if t.Claim.Node != "" {
			holder += " · node " + t.Claim.Node
		}
	}
	out := []string{
		field(st, "title", theme.Safe(t.Title)),
		field(st, "state", t.State.String()+" ("+orDash(t.RawStatus)+")"),
		field(st, "holder", holder),
	}
	if !t.Claim.Expires.IsZero() {
		if left := model.Remaining(t, now); left >= 0 {
			out = append(out, field(st, "lease", clock(left)+" left"))
		} else {
			out = append(out, field(st, "lease", "expired "+clock(-left)+" ago"))
		}
	}
	if r := t.Reservation; r.Active(now) {
		out = append(out, field(st, "reserved", r.For))
	}
	return out
}

func field(st *theme.Styles, name, value string) string {
	return st.Field.Render(fmt.Sprintf("%-9s", name)) + theme.Safe(value)
}

// box draws a dialog centred in the body area, its lines cut to fit.
func box(st *theme.Styles, lines []string, width, height int) string {
	inner := min(width-4, 76)
	if len(lines) > height-2 {
		lines = lines[:max(height-2, 1)]
	}
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, inner, "…")
	}
	b := st.Dialog.Width(inner).Render(strings.Join(lines, "\n"))
	return lipgloss.Place(width, height, lipgloss.Center, lipgloss.Center, b)
}

// formField is one input of a form: free text or a choice.
type formField struct {
	name    string
	edit    *lineEdit
	choices []string
	choice  int
}

// formDialog gathers what an action needs (a reason; a hand-off's target
// and priority) and then asks for confirmation.
type formDialog struct {
	req      sources.Request
	fields   []formField
	focus    int
	required string // the field that must not be empty
	problem  string
}

func newReasonForm(req sources.Request, _ *theme.Styles) *formDialog {
	return &formDialog{req: req, fields: []formField{{name: "reason", edit: &lineEdit{limit: 500}}}, required: "reason"}
}

// handoffPriorities are seed 001's hand-off priorities.
var handoffPriorities = []string{"normal", "urgent", "critical"}

func newHandoffForm(req sources.Request, agents []string, _ *theme.Styles) *formDialog {
	return &formDialog{req: req, fields: []formField{
		{name: "to", choices: agents},
		{name: "reason", edit: &lineEdit{limit: 500}},
		{name: "priority", choices: handoffPriorities},
	}}
}

func (d *formDialog) update(m *Model, msg tea.KeyMsg) tea.Cmd {
	f := &d.fields[d.focus]
	switch msg.Type {
	case tea.KeyEsc:
		m.pop()
		m.note(fmt.Sprintf("%s %s: nothing done", d.req.Action, d.req.Seen.DisplayKey()))
		return nil
	case tea.KeyTab, tea.KeyDown:
		d.focus = (d.focus + 1) % len(d.fields)
		return nil
	case tea.KeyShiftTab, tea.KeyUp:
		d.focus = (d.focus + len(d.fields) - 1) % len(d.fields)
		return nil
	case tea.KeyEnter:
		return d.submit(m)
	case tea.KeyLeft, tea.KeyRight:
		if f.choices != nil {
			step := 1
			if msg.Type == tea.KeyLeft {
				step = len(f.choices) - 1
			}
			f.choice = (f.choice + step) % len(f.choices)
			return nil
		}
	}
	if f.edit != nil && f.edit.Update(msg) {
		d.problem = ""
	}
	return nil
}

func (d *formDialog) value(name string) string {
	for _, f := range d.fields {
		if f.name != name {
			continue
		}
		if f.edit != nil {
			return strings.TrimSpace(f.edit.Value())
		}
		return f.choices[f.choice]
	}
	return ""
}

// submit hands the filled-in request to a confirmation dialog.
func (d *formDialog) submit(m *Model) tea.Cmd {
	if d.required != "" && d.value(d.required) == "" {
		d.problem = "a " + d.required + " is required"
		return nil
	}
	req := d.req
	req.Reason = d.value("reason")
	if req.Action == model.ActionHandoff {
		req.To, req.Priority = d.value("to"), d.value("priority")
	}
	m.pop()
	m.push(&confirmDialog{req: req})
	return nil
}

func (d *formDialog) view(m *Model, width, height int) string {
	st := m.styles
	t := d.req.Seen
	lines := []string{st.DialogTitle.Render(theme.Safe(fmt.Sprintf("%s %s on %s", actionTitles[d.req.Action], t.DisplayKey(), t.Source))), ""}
	lines = append(lines, taskSummary(t, m.now(), st)...)
	lines = append(lines, "")
	inner := min(width-4, 76) - 11
	for i, f := range d.fields {
		mark := "  "
		if i == d.focus {
			mark = st.Cursor.Render("› ")
		}
		v := ""
		if f.edit != nil {
			v = f.edit.View(inner, i == d.focus, "")
		} else {
			v = "‹ " + f.choices[f.choice] + " ›"
		}
		lines = append(lines, mark+field(st, f.name, v))
	}
	if d.problem != "" {
		lines = append(lines, "", st.Danger.Render(d.problem))
	}
	return box(st, lines, width, height)
}

// detailDialog is a scrollable page of lines: a task's fields and
// history, or a node and its tasks.
type detailDialog struct {
	title  string
	lines  []string
	offset int
}

func (d *detailDialog) update(m *Model, msg tea.KeyMsg) tea.Cmd {
	switch msg.String() {
	case "up", "k":
		d.offset = max(d.offset-1, 0)
	case "down", "j":
		d.offset = min(d.offset+1, max(len(d.lines)-1, 0))
	case "pgup":
		d.offset = max(d.offset-10, 0)
	case "pgdown", " ":
		d.offset = min(d.offset+10, max(len(d.lines)-1, 0))
	case "end", "G":
		d.offset = len(d.lines)
	case "esc", "enter", "q":
		m.pop()
	}
	return nil
}

func (d *detailDialog) view(m *Model, width, height int) string {
	st := m.styles
	var b strings.Builder
	b.WriteString(st.DialogTitle.Render(fit(theme.Safe(d.title), width-22)))
	b.WriteString(st.Muted.Render(fitRight("esc close · ↑/↓ scroll", 22)))
	// Scrolling past the end shows the last page, not a blank one.
	d.offset = max(min(d.offset, len(d.lines)-height+1), 0)
	end := min(d.offset+height-1, len(d.lines))
	for _, l := range d.lines[d.offset:end] {
		b.WriteByte('\n')
		b.WriteString(fit(theme.Safe(l), width))
	}
	for i := end - d.offset; i < height-1; i++ {
		b.WriteByte('\n')
	}
	return b.String()
}

// helpDialog is the full help, generated from the key map: disabled keys
// (actions in read-only mode) do not appear.
type helpDialog struct{}

func (d *helpDialog) update(m *Model, msg tea.KeyMsg) tea.Cmd {
	m.pop()
	return nil
}

func (d *helpDialog) view(m *Model, width, height int) string {
	st := m.styles
	h := help.New()
	h.Styles.FullKey, h.Styles.FullDesc, h.Styles.FullSeparator = st.Key, st.KeyDesc, st.Faint
	h.Width = width
	lines := []string{st.DialogTitle.Render("Keys"), ""}
	lines = append(lines, strings.Split(h.FullHelpView(m.pane().FullHelp(m.keys)), "\n")...)
	lines = append(lines, "",
		st.Muted.Render("filter: agent:NAME state:STATE source:NAME node:NAME, plus free text;"),
		st.Muted.Render("every word must match. Mouse: click selects, wheel scrolls."))
	if m.opts.ReadOnly {
		lines = append(lines, st.Warn.Render("read-only: actions are off"))
	}
	lines = append(lines, "", st.Muted.Render("any key closes"))
	return box(st, lines, width, height)
}

// taskDetail lists every field of a task and its history.
func taskDetail(t *model.Task, now time.Time, p model.Policy, c model.Classification, loc *time.Location) []string {
	when := func(at time.Time) string {
		if at.IsZero() {
			return "—"
		}
		if at.After(now) {
			return at.In(loc).Format("2006-01-02 15:04:05") + " (in " + span(at.Sub(now)) + ")"
		}
		return at.In(loc).Format("2006-01-02 15:04:05") + " (" + ago(at, now) + " ago)"
	}
	token := "—"
	if t.Claim.Token != "" {
		// Enough to tell two tokens apart, not enough to write with.
		token = ansi.Truncate(t.Claim.Token, 8, "…")
	}
	kv := [][2]string{
		{"source", t.Source}, {"id", t.ID}, {"key", t.DisplayKey()}, {"title", theme.Safe(t.Title)},
		{"state", t.State.String() + " (raw " + orDash(t.RawStatus) + ")"},
		{"class", t.Class.String()}, {"priority", orDash(model.PriorityName(t.Priority))},
		{"created", when(t.CreatedAt)}, {"edited", when(t.EditedAt)},
		{"holder", orDash(t.Claim.Holder.String())}, {"agent", orDash(t.Claim.Name)},
		{"run", orDash(t.Claim.RunID)}, {"node", orDash(t.Claim.Node)}, {"lock token", token},
		{"claimed", when(t.Claim.ClaimedAt)}, {"heartbeat", when(t.Claim.HeartbeatAt)},
		{"expires", when(t.Claim.Expires)},
	}
	if !t.Claim.Expires.IsZero() {
		kv = append(kv, [2]string{"left", clock(model.Remaining(t, now))})
	}
	kv = append(kv,
		[2]string{"lease", model.Health(t, now, p).String()},
		[2]string{"escalation", orDash(c.Level.String())},
		[2]string{"standing", orDash(c.Reason)},
		[2]string{"recorded", orDash(t.Escalated.String())},
	)
	if r := t.Reservation; r.For != "" {
		kv = append(kv, [2]string{"reserved", fmt.Sprintf("for %s until %s by %s, %s: %s",
			r.For, when(r.Until), orDash(r.By), orDash(r.Priority), orDash(r.Reason))})
	}
	kv = append(kv,
		[2]string{"reason", orDash(theme.Safe(t.Reason))}, [2]string{"unblock", orDash(theme.Safe(t.UnblockAction))},
		[2]string{"next check", when(t.NextCheckAt)}, [2]string{"artifacts", orDash(theme.Safe(t.Artifacts))},
		[2]string{"subtasks", fmt.Sprintf("%d open", t.OpenSubtasks)}, [2]string{"version", orDash(t.Version)},
	)
	if t.Problem != "" {
		kv = append(kv, [2]string{"PROBLEM", theme.Safe(t.Problem)})
	}
	var out []string
	for _, e := range kv {
		out = append(out, fmt.Sprintf("%-11s %s", e[0], e[1]))
	}
	if t.Description != "" {
		out = append(out, "", "description")
		out = append(out, strings.Split(ansi.Wordwrap(t.Description, 76, ""), "\n")...)
	}
	out = append(out, "", fmt.Sprintf("history (%d)", len(t.History)))
	for _, e := range t.History {
		line := fmt.Sprintf("  %s  %-14s %s", e.At.In(loc).Format("01-02 15:04:05"), e.Action, e.Actor)
		if e.Reason != "" {
			line += ": " + theme.Safe(e.Reason)
		}
		if e.Detail != "" {
			line += " (" + theme.Safe(e.Detail) + ")"
		}
		out = append(out, line)
	}
	return out
}

// nodeDetail shows a node and the tasks claimed on it.
func nodeDetail(n model.Node, tasks []*model.Task, now time.Time, loc *time.Location) []string {
	out := []string{
		fmt.Sprintf("%-11s %s", "status", n.Status),
		fmt.Sprintf("%-11s %s", "last seen", ago(n.LastSeen, now)),
		fmt.Sprintf("%-11s %d", "failures", n.Failures),
		fmt.Sprintf("%-11s %s", "last error", orDash(theme.Safe(n.LastErr))),
		fmt.Sprintf("%-11s %d", "queue", n.QueueDepth),
		fmt.Sprintf("%-11s %s", "health url", orDash(n.Health)),
	}
	if !n.LastTaskAt.IsZero() {
		out = append(out, fmt.Sprintf("%-11s %s", "last task", n.LastTaskAt.In(loc).Format(time.RFC3339)))
	}
	out = append(out, "", fmt.Sprintf("claimed here (%d)", len(tasks)))
	for _, t := range tasks {
		out = append(out, fmt.Sprintf("  %-10s %-8s %-12s %s", t.DisplayKey(), t.Source, t.Claim.Name, theme.Safe(t.Title)))
	}
	if len(n.ClaimedTasks) > 0 {
		out = append(out, "", "reported by the node: "+strings.Join(n.ClaimedTasks, ", "))
	}
	return out
}
