package tui

import (
	"context"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/claimdeck/claimdeck/model"
)

// burst handles a message that carries several keys' text at once. Bubble
// Tea v1 delivered keys typed faster than a frame ("jjj") as one message;
// v2's decoder hands each key over on its own, so from a terminal this is
// one key, but a message of several runes (sent by a test or a door) is
// still taken key by key outside text inputs, in order; once one of them
// opens a text input, the rest are typed into it.
func (m *Model) burst(msg tea.KeyPressMsg) tea.Cmd {
	text := typed(msg)
	if m.afterClose(text) {
		return nil
	}
	if utf8.RuneCountInString(text) < 2 || m.typing() {
		return m.key(msg)
	}
	var cmds []tea.Cmd
	for i, r := range text {
		one := msg
		if m.typing() {
			one.Text = text[i:]
			cmds = append(cmds, m.key(one))
			break
		}
		one.Code, one.Text = r, string(r)
		open := len(m.dialogs)
		cmds = append(cmds, m.key(one))
		if m.screen.quitting {
			break
		}
		if rest := text[i+utf8.RuneLen(r):]; len(m.dialogs) < open && rest != "" {
			// Typed for the dialog that just closed, not for what is under it.
			m.status.note(fmt.Sprintf("dropped %q, typed after the dialog closed", rest))
			break
		}
	}
	return tea.Batch(cmds...)
}

// burstGap is how soon after the key that closed a dialog a letter is
// taken for part of the same burst (typed ahead, pasted, sent by tmux in
// one write): about a frame, far quicker than a person reads the screen.
// Bubble Tea v1 handed such a burst over as one message; v2 hands each
// key over on its own, so the time between them tells.
const burstGap = 15 * time.Millisecond

// afterClose drops a letter that comes within burstGap of the key that
// closed a dialog, or of a letter dropped so: it was typed for the dialog,
// not for what is under it.
func (m *Model) afterClose(text string) bool {
	in := &m.input
	if text == "" || in.closedAt.IsZero() || m.typing() {
		in.closedAt = time.Time{}
		return false
	}
	now := m.keyClock()
	if now.Sub(in.closedAt) > burstGap {
		in.closedAt = time.Time{}
		return false
	}
	in.closedAt, in.afterText = now, in.afterText+text
	m.status.note(fmt.Sprintf("dropped %q, typed after the dialog closed", in.afterText))
	return true
}

// typed is the text a key types: a printable key (a letter, the space
// bar) pressed without ctrl or alt; "" for any other key.
func typed(msg tea.KeyPressMsg) string {
	if msg.Mod.Contains(tea.ModCtrl) || msg.Mod.Contains(tea.ModAlt) {
		return ""
	}
	return msg.Text
}

// paste takes pasted text: into the text field being typed in, as if
// typed; elsewhere it does nothing, as a paste did on Bubble Tea v1.
func (m *Model) paste(msg tea.PasteMsg) tea.Cmd {
	if !m.typing() {
		return nil
	}
	return m.key(tea.KeyPressMsg{Code: tea.KeyExtended, Text: msg.Content})
}

// typing says whether keys are text now: the filter, the : line, or a
// dialog's text field.
func (m *Model) typing() bool {
	if m.input.dropping {
		return true
	}
	if n := len(m.dialogs); n > 0 {
		return m.dialogs[n-1].typing()
	}
	return m.input.filtering || m.input.commanding
}

// key handles one key: ctrl-c always quits; then the top dialog, the
// filter or the : line, or else the key map.
func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	open := len(m.dialogs)
	cmd := m.oneKey(msg)
	if len(m.dialogs) < open {
		m.input.closedAt, m.input.afterText = m.keyClock(), ""
	}
	if t := m.work.wantTrail; t != nil {
		m.work.wantTrail = nil
		return tea.Batch(cmd, m.fetchTrail(t.Source, t.ID))
	}
	return cmd
}

func (m *Model) oneKey(msg tea.KeyPressMsg) tea.Cmd {
	if msg.String() == "ctrl+c" {
		m.screen.quitting = true
		return tea.Quit
	}
	switch {
	case m.input.dropping:
		if s := m.input.dropKey(msg); s != "" {
			m.status.note(s)
		}
		return nil
	case len(m.dialogs) > 0:
		return m.dialogKey(msg)
	case m.input.filtering:
		changed, kept := m.input.filterKey(msg)
		if changed {
			m.refilter()
		}
		if kept {
			return m.askArchive()
		}
		return nil
	case m.input.commanding:
		return m.runCommand(m.input.commandKey(msg, m.board.snap.Sources))
	}
	was := m.board.active
	cmd := m.boardKey(msg)
	if m.board.active == statsView && was != statsView {
		return tea.Batch(cmd, m.loadStats())
	}
	return cmd
}

// dialogKey gives a key to the top dialog and to nothing else. A dialog
// that takes no text has no : line and no filter: what a person types
// after : or / there is dropped until enter or esc, so its letters never
// reach one of the dialog's actions. A key the dialog does not know does
// nothing, and says so once per dialog.
func (m *Model) dialogKey(msg tea.KeyPressMsg) tea.Cmd {
	top := m.dialogs[len(m.dialogs)-1]
	startsText := !top.typing() && (key.Matches(msg, m.keys.Command) || key.Matches(msg, m.keys.Filter))
	a := top.update(m.env(), msg)
	if startsText {
		m.input.dropping, m.input.dropped = true, msg.String()
		a.ignored = false
	}
	if a.ignored && !m.input.toldUnknown {
		m.input.toldUnknown = true
		a.note = fmt.Sprintf("%q does nothing here · %s", msg.String(), top.hint(m.keys))
	}
	return m.apply(a)
}

// boardKey is a key of the key map over the rows.
func (m *Model) boardKey(msg tea.KeyPressMsg) tea.Cmd {
	for _, ka := range keyActions {
		if key.Matches(msg, *ka.binding(&m.keys)) {
			return ka.do(m)
		}
	}
	if v := viewKey(msg, m.keys); v >= 0 {
		m.show(v)
		return nil
	}
	if p := m.pane(); p.sortLetter(msg.String()) >= 0 {
		p.sortBy(p.sortLetter(msg.String()))
		m.freshen(p)
		return nil
	}
	// An action key switched off is never met with silence: say why.
	for i, b := range m.keys.actionKeys() {
		if slices.Contains(b.Keys(), msg.String()) {
			m.startActionOn(m.selected(), taskActions[i].action)
			break
		}
	}
	return nil
}

// keyAction is what one binding of the key map does over the rows.
type keyAction struct {
	binding func(*KeyMap) *key.Binding
	do      func(*Model) tea.Cmd
}

// moveBy moves the cursor by a number of rows that depends on the pane.
func moveBy(rows func(p *pane) int) func(*Model) tea.Cmd {
	return func(m *Model) tea.Cmd { m.move(rows(m.pane())); return nil }
}

func actOn(a model.Action) func(*Model) tea.Cmd {
	return func(m *Model) tea.Cmd { m.act(a); return nil }
}

// keyActions are the key map's bindings over the rows, in the order they
// are tried.
var keyActions = []keyAction{
	{func(k *KeyMap) *key.Binding { return &k.Quit }, func(m *Model) tea.Cmd { m.screen.quitting = true; return tea.Quit }},
	{func(k *KeyMap) *key.Binding { return &k.Back }, (*Model).back},
	{func(k *KeyMap) *key.Binding { return &k.Up }, moveBy(func(*pane) int { return -1 })},
	{func(k *KeyMap) *key.Binding { return &k.Down }, moveBy(func(*pane) int { return 1 })},
	{func(k *KeyMap) *key.Binding { return &k.PageUp }, moveBy(func(p *pane) int { return -p.grid.rows() })},
	{func(k *KeyMap) *key.Binding { return &k.PageDown }, moveBy(func(p *pane) int { return p.grid.rows() })},
	{func(k *KeyMap) *key.Binding { return &k.Top }, moveBy(func(p *pane) int { return -p.len() })},
	{func(k *KeyMap) *key.Binding { return &k.Bottom }, moveBy(func(p *pane) int { return p.len() })},
	{func(k *KeyMap) *key.Binding { return &k.NextView }, func(m *Model) tea.Cmd {
		m.show((m.board.active + 1) % viewCount)
		return nil
	}},
	{func(k *KeyMap) *key.Binding { return &k.PrevView }, func(m *Model) tea.Cmd {
		m.show((m.board.active + viewCount - 1) % viewCount)
		return nil
	}},
	{func(k *KeyMap) *key.Binding { return &k.Sort }, func(m *Model) tea.Cmd {
		p := m.pane()
		p.nextSort()
		m.freshen(p)
		return nil
	}},
	{func(k *KeyMap) *key.Binding { return &k.Filter }, func(m *Model) tea.Cmd { m.input.filtering = true; return nil }},
	{func(k *KeyMap) *key.Binding { return &k.Help }, func(m *Model) tea.Cmd { m.push(&helpDialog{}); return nil }},
	{func(k *KeyMap) *key.Binding { return &k.Refresh }, func(m *Model) tea.Cmd {
		m.status.note("refreshing every source…")
		h := m.hub
		return func() tea.Msg { h.Refresh(); return nil }
	}},
	{func(k *KeyMap) *key.Binding { return &k.Detail }, func(m *Model) tea.Cmd { return m.apply(m.board.detail(m.loc)) }},
	{func(k *KeyMap) *key.Binding { return &k.Command }, func(m *Model) tea.Cmd {
		m.input.startCommand()
		return nil
	}},
	{func(k *KeyMap) *key.Binding { return &k.Palette }, func(m *Model) tea.Cmd { m.push(newPalette()); return nil }},
	{func(k *KeyMap) *key.Binding { return &k.Mark }, func(m *Model) tea.Cmd { m.sayMarks(m.board.toggleMark()); return nil }},
	{func(k *KeyMap) *key.Binding { return &k.MarkAll }, func(m *Model) tea.Cmd { m.sayMarks(m.board.markShown()); return nil }},
	{func(k *KeyMap) *key.Binding { return &k.MarkRange }, func(m *Model) tea.Cmd { m.sayMarks(m.board.markRange()); return nil }},
	{func(k *KeyMap) *key.Binding { return &k.Copy }, func(m *Model) tea.Cmd {
		if t := m.selected(); t != nil {
			return m.copyID(t)
		}
		return nil
	}},
}

func init() {
	for _, ta := range taskActions {
		keyActions = append(keyActions, keyAction{ta.binding, actOn(ta.action)})
	}
}

// back stops a bulk action under way, or clears the marks, or the status
// line and the filter.
func (m *Model) back() tea.Cmd {
	switch {
	case m.work.bulk != nil:
		m.work.bulk.stop()
	case len(m.board.marks) > 0:
		clear(m.board.marks)
		m.status.note("marks cleared")
		m.syncKeys()
	default:
		m.status.text = ""
		if m.input.filter.Value() != "" || m.input.filterErr != "" {
			m.input.filter.SetValue("")
			m.refilter()
			return m.askArchive()
		}
	}
	return nil
}

// nextSort steps through the pane's preset orders; after a column sort it
// goes back to the preset it left.
func (p *pane) nextSort() {
	if p.grid.sortCol < 0 {
		p.sort = (p.sort + 1) % len(p.sorts)
	}
	p.grid.sortCol = -1
	p.unsorted = true
}

// viewKey is the view a key opens, or -1.
func viewKey(msg tea.KeyPressMsg, k KeyMap) viewKind {
	return viewKind(slices.IndexFunc(k.viewKeys(), func(b key.Binding) bool { return key.Matches(msg, b) }))
}

// refilter puts the filter as typed in force. One that does not parse
// leaves the last one in force, says what to fix, and is shown as
// rejected beside the one that stays.
func (m *Model) refilter() {
	if f, ok := m.input.parseFilter(); ok {
		m.board.setFilter(f)
		m.syncKeys()
	}
}

// sayMarks says what a change of the marks did; the action keys follow
// the marks.
func (m *Model) sayMarks(note string, failed bool) {
	switch {
	case note == "":
		return
	case failed:
		m.status.fail(note)
	default:
		m.status.note(note)
	}
	m.syncKeys()
}

// askArchive brings the history a kept filter asks for, or lets go of it
// when the filter no longer does. The backends are read off the UI loop.
func (m *Model) askArchive() tea.Cmd {
	q := archiveQuery(m.board.flt)
	if q == nil && !m.input.archiveAsked {
		return nil
	}
	m.input.archiveAsked = q != nil
	if q != nil {
		m.status.note("reading finished tasks older than the window…")
	}
	h, timeout := m.hub, m.opts.ActionTimeout
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		return archiveMsg{err: h.LoadArchive(ctx, q)}
	}
}
