package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/theme"
)

// dialog is one layer of the dialog stack; the top one gets every key.
// It reads what the root shows it (a dialogEnv), never the root itself:
// what a key means for the dashboard comes back as an action, which the
// root applies.
type dialog interface {
	update(e *dialogEnv, msg tea.KeyPressMsg) action
	view(e *dialogEnv, width, height int) string
	// hint replaces the key help under the table while the dialog is open;
	// it is built from the key map, so it follows a rebinding.
	hint(k KeyMap) string
	// typing says whether keys are text here, so a burst of runes stays
	// one burst.
	typing() bool
}

// dialogEnv is what a dialog reads of the dashboard, built by the root
// for each key and each frame (Model.env): values, a copy of the key map,
// the board to read and the few questions a dialog asks of the root.
type dialogEnv struct {
	styles   *theme.Styles
	keys     KeyMap // a copy: a dialog's change to it goes nowhere
	width    int    // the terminal's
	now      time.Time
	loc      *time.Location
	pace     pace
	readOnly bool   // the whole dashboard (Options.ReadOnly)
	board    *board // read, never written: find, agentNode, the snapshot
	// offers says which of taskActions can apply to a task as it stands.
	offers func(*model.Task) []bool
	// preview judges a bulk action (the hub's desk; it writes nothing).
	preview func(sources.Request, []*model.Task) sources.BulkPreview
	// fullHelp is the view's help columns.
	fullHelp func(KeyMap) [][]key.Binding
	// trail is a task's full trail as last fetched, by ref.
	trail func(ref string) []model.Event
}

// hintOf is a one-line hint naming the enabled bindings' first keys and
// what they do, then any words of its own.
func hintOf(bs []key.Binding, extra ...string) string {
	var parts []string
	for _, b := range bs {
		if b.Enabled() && len(b.Keys()) > 0 {
			parts = append(parts, keyName(b)+" "+b.Help().Desc)
		}
	}
	return strings.Join(append(parts, extra...), " · ")
}

// keyName is a binding's first key as a hint writes it.
func keyName(b key.Binding) string {
	switch k := b.Keys()[0]; k {
	case "up":
		return "↑"
	case "down":
		return "↓"
	default:
		if strings.HasPrefix(b.Help().Key, "←") {
			return b.Help().Key
		}
		return k
	}
}

// scrollHint names the keys that scroll a page.
func scrollHint(k KeyMap) string {
	return keyName(k.Up) + "/" + keyName(k.Down) + " " + keyName(k.PageUp) + "/" + keyName(k.PageDown) + " scroll"
}

func (d *confirmDialog) hint(k KeyMap) string {
	return hintOf([]key.Binding{k.Yes}, "any other key cancels: nothing is done")
}
func (d *formDialog) hint(k KeyMap) string {
	return hintOf([]key.Binding{k.NextField, k.Pick, k.Submit, k.Back})
}
func (d *detailDialog) hint(k KeyMap) string {
	var bs []key.Binding
	if d.again != nil {
		bs = append(bs, k.Again)
	}
	return hintOf(append(bs, k.Close), scrollHint(k))
}
func (d *helpDialog) hint(k KeyMap) string {
	return scrollHint(k) + " · " + keyName(k.Back) + " " + keyName(k.Help) + " " + keyName(k.Quit) + " close"
}

func (d *confirmDialog) typing() bool { return false }
func (d *formDialog) typing() bool    { return true }
func (d *detailDialog) typing() bool  { return false }
func (d *helpDialog) typing() bool    { return false }

// confirmDialog asks y/N before an action. Anything but y — enter
// included — is No: at 3 a.m. the safe answer must be the easy one.
type confirmDialog struct {
	req sources.Request
}

func (d *confirmDialog) update(e *dialogEnv, msg tea.KeyPressMsg) action {
	if key.Matches(msg, e.keys.Yes) {
		return action{close: true, send: &d.req}
	}
	return action{close: true, note: fmt.Sprintf("%s %s: nothing done", d.req.Action, d.req.Seen.DisplayKey())}
}

var actionTitles = map[model.Action]string{
	model.ActionTakeover:     "Claim as HUMAN",
	model.ActionForceRelease: "Force-release",
	model.ActionCancel:       "Cancel",
	model.ActionHandoff:      "Hand off",
	model.ActionApprove:      "Approve",
	model.ActionRework:       "Send back for rework",
	model.ActionUnblock:      "Unblock",
	model.ActionComplete:     "Complete my claim",
	model.ActionReview:       "Send my claim to review",
	model.ActionBlock:        "Block my claim",
	model.ActionRelease:      "Give my claim back",
}

func (d *confirmDialog) view(e *dialogEnv, width, height int) string {
	st := e.styles
	t := d.req.Seen
	lines := []string{
		st.DialogTitle.Render(theme.Safe(fmt.Sprintf("%s %s on %s?", actionTitles[d.req.Action], t.DisplayKey(), t.Source))),
		"",
	}
	lines = append(lines, e.taskSummary(t)...)
	if d.req.Action == model.ActionHandoff {
		p, _ := model.ParsePriority(d.req.Priority)
		lines = append(lines, field(st, "to", d.req.To+", priority "+model.PriorityName(p)))
	}
	if d.req.Reason != "" {
		lines = append(lines, field(st, "reason", d.req.Reason))
	}
	if d.req.Unblock != "" {
		lines = append(lines, field(st, "unblock", d.req.Unblock))
	}
	lines = append(lines, "", "Only if the task is still as shown. Proceed? "+st.Key.Render("[y/N]"))
	return box(st, lines, width, height)
}

// taskSummary is what a human must see before acting: the task and who
// holds it as they saw it, with the lease as it stands now (a heartbeat
// moves it while the dialog is open).
func (e *dialogEnv) taskSummary(seen *model.Task) []string {
	st, now, pc := e.styles, e.now, e.pace
	t := seen
	if live := e.board.find(seen.Source, seen.ID); live != nil {
		t = live
	}
	holder := "nobody"
	if seen.Held() {
		holder = seen.Claim().Holder.String() + " " + seen.Claim().Name
		if seen.Claim().RunID != "" {
			holder += " · run " + seen.Claim().RunID
		}
		if seen.Claim().Node != "" {
			holder += " · node " + seen.Claim().Node
		}
	}
	out := []string{
		field(st, "title", theme.Safe(seen.Title)),
		field(st, "state", seen.State.String()+" ("+orDash(seen.RawStatus)+")"),
		field(st, "holder", holder),
	}
	if !t.Claim().Expires.IsZero() {
		if left := model.Remaining(t, now); left >= 0 {
			out = append(out, field(st, "lease", pc.clock(left)+" left"))
		} else {
			out = append(out, field(st, "lease", "expired "+pc.clock(-left)+" ago"))
		}
	}
	if r := seen.Reserved(); r.Active(now) {
		out = append(out, field(st, "reserved", r.For))
	}
	if seen.State == model.StateReview {
		// What a reviewer decides on: who submitted it (from the full
		// trail once fetched), what they said, what they produced.
		withTrail := *seen
		withTrail.EditMore().History = model.MergeHistory(seen.More().History, e.trail(seen.Ref()))
		out = append(out, field(st, "submitter", orDash(model.Submitter(&withTrail))))
		out = append(out, wrapped(st, "summary", orDash(seen.More().Reason))...)
		out = append(out, wrapped(st, "artifacts", orDash(seen.More().Artifacts))...)
	}
	if t != seen && (t.State != seen.State || t.Claim().Name != seen.Claim().Name || t.Claim().Token != seen.Claim().Token) {
		out = append(out, st.Warn.Render(fmt.Sprintf("⚠ changed since you looked: now %s, held by %s", t.State, orDash(t.Claim().Name))))
	}
	return out
}

func field(st *theme.Styles, name, value string) string {
	return st.Field.Render(fmt.Sprintf("%-8s ", name)) + theme.Safe(value)
}

// wrapped is a field whose value is wrapped under its name inside a
// dialog, at most four lines: a summary is read, not cut at the border.
func wrapped(st *theme.Styles, name, value string) []string {
	lines := strings.Split(ansi.Wrap(theme.Safe(value), 76-2-10, " /"), "\n")
	if len(lines) > 4 {
		lines = append(lines[:3], "… (the detail, enter, has the rest)")
	}
	out := []string{field(st, name, lines[0])}
	for _, l := range lines[1:] {
		out = append(out, strings.Repeat(" ", 10)+l)
	}
	return out
}

// dialogWidth is the width of a box's text on a screen width wide.
func dialogWidth(width int) int { return min(width-4, 76) - 2 }

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
		lines[i] = ansi.Truncate(l, dialogWidth(width), "…") // within the padding, never wrapped
	}
	// Lip Gloss v2's width counts the border too: inner is inside it.
	b := st.Dialog.Width(inner + st.Dialog.GetHorizontalBorderSize()).Render(strings.Join(lines, "\n"))
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
	req     sources.Request
	fields  []formField
	focus   int
	problem string
}

// newReasonForm asks for a reason: required when the action's needs say
// so (a cancel, a rework), else optional (a takeover, a force-release).
func newReasonForm(req sources.Request) *formDialog {
	return &formDialog{req: req, fields: []formField{{name: "reason", edit: &lineEdit{limit: 500}}}}
}

// newBlockForm asks why a person's own claim is blocked and what would
// unblock it.
func newBlockForm(req sources.Request) *formDialog {
	return &formDialog{req: req, fields: []formField{
		{name: "reason", edit: &lineEdit{limit: 500}},
		{name: "unblock", edit: &lineEdit{limit: 500}},
	}}
}

// handoffPriorities are the tasks' own priority words that seed 001's
// hand-off priorities (normal, urgent, critical) stand for.
var handoffPriorities = []string{"medium", "high", "critical"}

// newHandoffForm asks for the target (typed, or picked with ←/→ among the
// known agents), a reason and a priority in the tasks' words, starting at
// the task's own.
func newHandoffForm(req sources.Request, agents []string) *formDialog {
	prio := slices.Index(handoffPriorities, model.PriorityName(req.Seen.Priority))
	to := &lineEdit{limit: 100}
	if len(agents) > 0 {
		to.SetValue(agents[0])
	}
	return &formDialog{req: req, fields: []formField{
		{name: "to", edit: to, choices: agents},
		{name: "reason", edit: &lineEdit{limit: 500}},
		{name: "priority", choices: handoffPriorities, choice: max(prio, 0)},
	}}
}

func (d *formDialog) update(e *dialogEnv, msg tea.KeyPressMsg) action {
	f := &d.fields[d.focus]
	switch msg.String() {
	case "esc":
		return action{close: true, note: fmt.Sprintf("%s %s: nothing done", d.req.Action, d.req.Seen.DisplayKey())}
	case "tab", "down":
		d.focus = (d.focus + 1) % len(d.fields)
		return action{}
	case "shift+tab", "up":
		d.focus = (d.focus + len(d.fields) - 1) % len(d.fields)
		return action{}
	case "enter":
		return d.submit()
	case "left", "right":
		if len(f.choices) > 0 {
			d.pick(f, msg.String() == "left")
			return action{}
		}
	}
	if t := typed(msg); f.edit != nil && len(f.choices) > 0 && t != "" && t != " " && f.edit.Value() == f.choices[f.choice] {
		f.edit.SetValue("") // typing replaces a pick
	}
	if f.edit != nil && f.edit.Update(msg) {
		d.problem = ""
	}
	return action{}
}

// pick steps a choice field; a pick fills its text in, typing replaces it.
func (d *formDialog) pick(f *formField, back bool) {
	step := 1
	if back {
		step = len(f.choices) - 1
	}
	f.choice = (max(f.choice, 0) + step) % len(f.choices)
	if f.edit != nil {
		f.edit.SetValue(f.choices[f.choice])
	}
	d.problem = ""
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

// submit hands the filled-in request to a confirmation dialog, once it
// has what the action needs.
func (d *formDialog) submit() action {
	req := d.req
	req.Reason = d.value("reason")
	req.Unblock = d.value("unblock")
	if req.Action == model.ActionHandoff {
		p, _ := model.ParsePriority(d.value("priority"))
		req.To, req.Priority = d.value("to"), model.HandoffPriority(p)
	}
	if d.problem = lacking(req); d.problem != "" {
		return action{}
	}
	return action{close: true, push: &confirmDialog{req: req}}
}

// lacking is what req still lacks of what its action needs
// (model.Action.Needs), in the desk's words, or "". The one-task forms and
// the bulk dialog ask it alike.
func lacking(req sources.Request) string {
	need := req.Action.Needs()
	switch {
	case need.Reason && strings.TrimSpace(req.Reason) == "":
		return "a reason is required"
	case need.Target && strings.TrimSpace(req.To) == "":
		return "a target agent (or ANY) is required"
	}
	return ""
}

// needed says whether the field named name must be filled in.
func (d *formDialog) needed(name string) bool {
	need := d.req.Action.Needs()
	return name == "reason" && need.Reason || name == "to" && need.Target
}

func (d *formDialog) view(e *dialogEnv, width, height int) string {
	st := e.styles
	t := d.req.Seen
	lines := []string{st.DialogTitle.Render(theme.Safe(fmt.Sprintf("%s %s on %s", actionTitles[d.req.Action], t.DisplayKey(), t.Source))), ""}
	lines = append(lines, e.taskSummary(t)...)
	lines = append(lines, "")
	inner := dialogWidth(width) - 11
	for i, f := range d.fields {
		lines = append(lines, d.fieldLine(st, f, i == d.focus, inner))
	}
	if d.req.Action == model.ActionHandoff {
		if to := d.value("to"); to != "" && to != model.AnyAgent {
			if node := e.board.agentNode(to); node != "" && e.board.snap.Mesh.Down(node) {
				lines = append(lines, "", st.Danger.Render("⚠ "+to+" runs on node "+node+", which is DOWN: it may never pick this up"))
			}
		}
	}
	if d.problem != "" {
		lines = append(lines, "", st.Danger.Render(d.problem))
	}
	return box(st, lines, width, height)
}

func (d *formDialog) fieldLine(st *theme.Styles, f formField, focused bool, inner int) string {
	mark := "  "
	if focused {
		mark = st.Cursor.Render("› ")
	}
	v := ""
	switch {
	case f.edit != nil && len(f.choices) > 0:
		v = f.edit.View(inner-12, focused, "type a name") + st.Muted.Render("  ←/→ pick")
	case f.edit != nil:
		placeholder := ""
		if !d.needed(f.name) {
			placeholder = "optional"
		}
		v = f.edit.View(inner, focused, placeholder)
	default:
		v = "‹ " + f.choices[f.choice] + " ›"
	}
	return mark + field(st, f.name, v)
}

// scroller is a page of lines and where it is scrolled to.
type scroller struct {
	offset int
}

// scroll moves the page by a key of the key map, over n lines; it reports
// whether the key was a scrolling one.
func (s *scroller) scroll(k KeyMap, msg tea.KeyPressMsg, n, page int) bool {
	switch {
	case key.Matches(msg, k.Up):
		s.offset--
	case key.Matches(msg, k.Down):
		s.offset++
	case key.Matches(msg, k.PageUp):
		s.offset -= page
	case key.Matches(msg, k.PageDown) || msg.String() == "space":
		s.offset += page
	case key.Matches(msg, k.Top):
		s.offset = 0
	case key.Matches(msg, k.Bottom):
		s.offset = n
	default:
		return false
	}
	s.offset = max(min(s.offset, n-1), 0)
	return true
}

// detailDialog is a scrollable page of lines: a task's fields and
// history, or a node and its tasks, or a refusal. again, on a CONFLICT,
// is the task as it was seen: a key opens it as it is now.
type detailDialog struct {
	scroller
	title string
	lines []string
	again *model.Task
}

func (d *detailDialog) update(e *dialogEnv, msg tea.KeyPressMsg) action {
	k := e.keys
	switch {
	case d.scroll(k, msg, len(d.lines), 10):
	case d.again != nil && key.Matches(msg, k.Again):
		if t := e.board.find(d.again.Source, d.again.ID); t != nil {
			return action{close: true, open: t}
		}
		return action{close: true, fail: d.again.DisplayKey() + " is no longer in the snapshot"}
	case key.Matches(msg, k.Close):
		return action{close: true}
	default:
		return action{ignored: true}
	}
	return action{}
}

func (d *detailDialog) view(e *dialogEnv, width, height int) string {
	st := e.styles
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
// (actions in read-only mode) do not appear. It scrolls, and closes only
// on esc, ? or q, so a key meant for scrolling never closes it.
type helpDialog struct {
	scroller
}

func (d *helpDialog) update(e *dialogEnv, msg tea.KeyPressMsg) action {
	k := e.keys
	if key.Matches(msg, k.Back) || key.Matches(msg, k.Help) || key.Matches(msg, k.Quit) {
		return action{close: true}
	}
	if !d.scroll(k, msg, len(d.lines(e, e.width)), 10) {
		return action{ignored: true}
	}
	return action{}
}

func (d *helpDialog) lines(e *dialogEnv, width int) []string {
	st := e.styles
	h := help.New()
	h.Styles.FullKey, h.Styles.FullDesc, h.Styles.FullSeparator = st.Key, st.KeyDesc, st.Faint
	h.SetWidth(width)
	var lines []string
	// Every key of the view, the actions included: one that cannot apply
	// to the task under the cursor says why when pressed.
	k := e.keys
	if !e.readOnly {
		k.setActions(slices.Repeat([]bool{true}, len(taskActions)))
	}
	groups := e.fullHelp(k)
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
		st.Muted.Render("Actions act on the task under the cursor; one that cannot apply says why."),
		st.Muted.Render("a w act on a task in Review; d v b u on your own claim (c takes one)."),
		st.Muted.Render("With marks, an action previews and applies to every marked task."),
		st.Muted.Render("In a dialog only its keys act; : or / there drops text till enter/esc."),
		st.Muted.Render("Mouse: click selects, wheel scrolls."))
	if e.readOnly {
		lines = append(lines, st.Warn.Render("read-only: actions are off"))
	}
	return lines
}

func (d *helpDialog) view(e *dialogEnv, width, height int) string {
	st := e.styles
	all := d.lines(e, width)
	room := max(height-2-3, 1) // the box's border, the title, a blank and the last line
	d.offset = max(min(d.offset, len(all)-room), 0)
	end := min(d.offset+room, len(all))
	lines := append([]string{st.DialogTitle.Render("Keys"), ""}, all[d.offset:end]...)
	switch {
	case end < len(all):
		lines = append(lines, st.Warn.Render(fmt.Sprintf("↓ %d more lines: %s", len(all)-end, scrollHint(e.keys))))
	case d.offset > 0:
		lines = append(lines, st.Muted.Render("the end · "+scrollHint(e.keys)))
	}
	return box(st, lines, width, height)
}
