package tui

import (
	"fmt"
	"slices"
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
	lines = append(lines, taskSummary(t, m.now(), m.pace, st)...)
	if d.req.Action == model.ActionHandoff {
		p, _ := model.ParsePriority(d.req.Priority)
		lines = append(lines, field(st, "to", d.req.To+", priority "+model.PriorityName(p)))
	}
	if d.req.Reason != "" {
		lines = append(lines, field(st, "reason", d.req.Reason))
	}
	lines = append(lines, "", "Only if the task is still as shown. Proceed? "+st.Key.Render("[y/N]"))
	return box(st, lines, width, height)
}

// taskSummary is what a human must see before acting: the task and who
// holds it now.
func taskSummary(t *model.Task, now time.Time, pc pace, st *theme.Styles) []string {
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
			out = append(out, field(st, "lease", pc.clock(left)+" left"))
		} else {
			out = append(out, field(st, "lease", "expired "+pc.clock(-left)+" ago"))
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
	if room := max(height-2, 2); len(lines) > room {
		// Never hide part of a dialog silently: say what is missing and
		// what would show it.
		hidden := len(lines) - room + 1
		lines = append(lines[:room-1:room-1], st.Warn.Render(fmt.Sprintf("%d more lines: the terminal needs %d rows for all of this", hidden, len(lines)+7)))
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

// newReleaseForm asks for an optional reason before a force-release.
func newReleaseForm(req sources.Request) *formDialog {
	return &formDialog{req: req, fields: []formField{{name: "reason", edit: &lineEdit{limit: 500}}}}
}

// handoffPriorities are the tasks' own priority words that seed 001's
// hand-off priorities (normal, urgent, critical) stand for.
var handoffPriorities = []string{"medium", "high", "critical"}

// newHandoffForm asks for the target (typed, or picked with ←/→ among the
// known agents), a reason and a priority in the tasks' words, starting at
// the task's own.
func newHandoffForm(req sources.Request, agents []string, _ *theme.Styles) *formDialog {
	prio := slices.Index(handoffPriorities, model.PriorityName(req.Seen.Priority))
	to := &lineEdit{limit: 100}
	if len(agents) > 0 {
		to.SetValue(agents[0])
	}
	return &formDialog{req: req, required: "to", fields: []formField{
		{name: "to", edit: to, choices: agents},
		{name: "reason", edit: &lineEdit{limit: 500}},
		{name: "priority", choices: handoffPriorities, choice: max(prio, 0)},
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
		if len(f.choices) > 0 {
			step := 1
			if msg.Type == tea.KeyLeft {
				step = len(f.choices) - 1
			}
			f.choice = (max(f.choice, 0) + step) % len(f.choices)
			if f.edit != nil {
				// A pick fills the text in; typing replaces it.
				f.edit.SetValue(f.choices[f.choice])
			}
			d.problem = ""
			return nil
		}
	}
	if f.edit != nil && len(f.choices) > 0 && msg.Type == tea.KeyRunes && f.edit.Value() == f.choices[f.choice] {
		f.edit.SetValue("") // typing replaces a pick
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
		if f.choice < 0 || f.choice >= len(f.choices) {
			return ""
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
		p, _ := model.ParsePriority(d.value("priority"))
		req.To, req.Priority = d.value("to"), model.HandoffPriority(p)
	}
	m.pop()
	m.push(&confirmDialog{req: req})
	return nil
}

func (d *formDialog) view(m *Model, width, height int) string {
	st := m.styles
	t := d.req.Seen
	lines := []string{st.DialogTitle.Render(theme.Safe(fmt.Sprintf("%s %s on %s", actionTitles[d.req.Action], t.DisplayKey(), t.Source))), ""}
	lines = append(lines, taskSummary(t, m.now(), m.pace, st)...)
	lines = append(lines, "")
	inner := min(width-4, 76) - 11
	for i, f := range d.fields {
		mark := "  "
		if i == d.focus {
			mark = st.Cursor.Render("› ")
		}
		v := ""
		switch {
		case f.edit != nil && len(f.choices) > 0:
			v = f.edit.View(inner-14, i == d.focus, "type a name") + st.Muted.Render("  ←/→ pick")
		case f.edit != nil:
			placeholder := ""
			if d.required != f.name {
				placeholder = "optional"
			}
			v = f.edit.View(inner, i == d.focus, placeholder)
		default:
			v = "‹ " + f.choices[f.choice] + " ›"
		}
		lines = append(lines, mark+field(st, f.name, v))
	}
	if d.req.Action == model.ActionHandoff {
		if to := d.value("to"); to != "" && to != model.AnyAgent {
			if node := m.agentNode(to); node != "" && m.snap.Mesh.Down(node) {
				lines = append(lines, "", st.Danger.Render("⚠ "+to+" runs on node "+node+", which is DOWN: it may never pick this up"))
			}
		}
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
	groups := m.pane().FullHelp(m.keys)
	// Two groups a row: four side by side do not fit 80 columns.
	for i := 0; i < len(groups); i += 2 {
		if i > 0 {
			lines = append(lines, "")
		}
		lines = append(lines, strings.Split(h.FullHelpView(groups[i:min(i+2, len(groups))]), "\n")...)
	}
	lines = append(lines, "",
		st.Muted.Render("filter: agent: state: source: node: level>=urgent age>30m stuck>1h"),
		st.Muted.Render("prio>=high, !word negates, plus free text; every word must match."),
		st.Muted.Render("shift+letter sorts by the column with that letter underlined; again reverses."),
		st.Muted.Render("With marks, an action previews and applies to every marked task."),
		st.Muted.Render("Mouse: click selects, wheel scrolls."))
	if m.opts.ReadOnly {
		lines = append(lines, st.Warn.Render("read-only: actions are off"))
	}
	lines = append(lines, "", st.Muted.Render("any key closes"))
	return box(st, lines, width, height)
}

// taskDetail lists every field of a task and its history; the title is
// wrapped in full to the width.
func taskDetail(t *model.Task, now time.Time, pc pace, p model.Policy, c model.Classification, loc *time.Location, width int) []string {
	when := func(at time.Time) string {
		if at.IsZero() {
			return "—"
		}
		if at.After(now) {
			return at.In(loc).Format("2006-01-02 15:04:05") + " (in " + pc.span(at.Sub(now)) + ")"
		}
		return at.In(loc).Format("2006-01-02 15:04:05") + " (" + pc.ago(at, now) + " ago)"
	}
	token := "—"
	if t.Claim.Token != "" {
		// Enough to tell two tokens apart, not enough to write with.
		token = ansi.Truncate(t.Claim.Token, 8, "…")
	}
	kv := [][2]string{
		{"source", t.Source}, {"id", t.ID}, {"key", t.DisplayKey()}, {"title", ""},
		{"state", t.State.String() + " (raw " + orDash(t.RawStatus) + ")"},
		{"class", t.Class.String()}, {"priority", orDash(model.PriorityName(t.Priority))},
		{"created", when(t.CreatedAt)}, {"edited", when(t.EditedAt)},
		{"holder", orDash(t.Claim.Holder.String())}, {"agent", orDash(t.Claim.Name)},
		{"run", orDash(t.Claim.RunID)}, {"node", orDash(c.Placement.String())}, {"lock token", token},
		{"claimed", when(t.Claim.ClaimedAt)}, {"heartbeat", when(t.Claim.HeartbeatAt)},
		{"expires", when(t.Claim.Expires)},
	}
	if !t.Claim.Expires.IsZero() {
		kv = append(kv, [2]string{"left", pc.clock(model.Remaining(t, now))})
	}
	kv = append(kv,
		[2]string{"lease", model.Health(t, now, p).String()},
		[2]string{"escalation", orDash(c.Level.String())},
		[2]string{"standing", orDash(c.Reason)},
		[2]string{"recorded", orDash(t.Escalated.String())},
	)
	if r := t.Reservation; r != nil && r.For != "" {
		kv = append(kv, [2]string{"reserved", fmt.Sprintf("for %s until %s by %s, %s: %s",
			r.For, when(r.Until), orDash(r.By), orDash(r.Priority), orDash(r.Reason))})
	}
	kv = append(kv,
		[2]string{"reason", orDash(theme.Safe(t.Reason))}, [2]string{"unblock", orDash(theme.Safe(t.UnblockAction()))},
		[2]string{"next check", when(t.NextCheckAt())}, [2]string{"artifacts", orDash(theme.Safe(t.Artifacts))},
		[2]string{"subtasks", fmt.Sprintf("%d open", t.OpenSubtasks)}, [2]string{"version", orDash(t.Version)},
	)
	if t.Problem != "" {
		kv = append(kv, [2]string{"PROBLEM", theme.Safe(t.Problem)})
	}
	var out []string
	for _, e := range kv {
		if e[0] != "title" {
			out = append(out, fmt.Sprintf("%-11s %s", e[0], e[1]))
			continue
		}
		for i, l := range strings.Split(ansi.Wordwrap(theme.Safe(t.Title), max(width-12, 20), " "), "\n") {
			name := ""
			if i == 0 {
				name = "title"
			}
			out = append(out, fmt.Sprintf("%-11s %s", name, l))
		}
	}
	if t.Description != "" {
		out = append(out, "", "description")
		out = append(out, strings.Split(ansi.Wordwrap(t.Description, 76, ""), "\n")...)
	}
	history := model.Timeline(t)
	out = append(out, "", fmt.Sprintf("history (%d, newest last)", len(history)))
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
				out = append(out, fmt.Sprintf("  %s  %-14s %s", e.At.In(loc).Format("01-02 15:04:05"), e.Action, l))
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
		fmt.Sprintf("%-11s %s", "health url", orDash(n.Health)),
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
		out = append(out, fmt.Sprintf("%s%-10s %-8s %-12s %s", mark, t.DisplayKey(), t.Source, t.Claim.Name, theme.Safe(t.Title)))
	}
	if len(n.ClaimedTasks) > 0 {
		out = append(out, "", "reported by the node: "+strings.Join(n.ClaimedTasks, ", "))
	}
	return out
}
