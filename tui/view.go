package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/theme"
)

const appName = "claimdeck"

// View is the frame and the terminal's modes: the alternate screen, mouse
// clicks and wheel, focus reports, and the title (unless Options.Title
// takes it). Key disambiguation is asked for by Bubble Tea on every
// program; key releases are not asked for.
func (m *Model) View() tea.View {
	v := tea.NewView(m.frame())
	v.AltScreen, v.MouseMode, v.ReportFocus = true, tea.MouseModeCellMotion, true
	if m.opts.Title == nil {
		v.WindowTitle = m.screen.title
	}
	return v
}

// frame draws the screen: tabs, filter line, the table (or the top
// dialog), the banner, the footer and the short help. The banner has its
// own line, so an error never covers a row.
func (m *Model) frame() string {
	if m.screen.quitting {
		return ""
	}
	var b strings.Builder
	b.Grow(m.screen.width * m.screen.height * 2)
	b.WriteString(m.tabs())
	b.WriteByte('\n')
	b.WriteString(m.filterLine())
	b.WriteByte('\n')
	p := m.pane()
	if n := len(m.dialogs); n > 0 {
		b.WriteString(m.dialogs[n-1].view(m.env(), m.screen.width, p.grid.height))
	} else {
		m.body(&b, p)
	}
	b.WriteByte('\n')
	b.WriteString(m.bannerLine())
	b.WriteByte('\n')
	b.WriteString(m.footer())
	b.WriteByte('\n')
	b.WriteString(m.helpLine())
	return b.String()
}

func (m *Model) filterLine() string {
	st := m.styles
	p := m.pane()
	right := st.Muted.Render("sort: " + p.sortName() + " · " + strconv.Itoa(p.len()) + " shown")
	rw := cells(right)
	below := m.tabLayout().below
	var left string
	switch {
	case m.input.commanding:
		left = st.FilterPrompt.Render(": ") + m.input.cmdline.View(m.screen.width-rw-3, true, st.Faint.Render(commandHintIn(m.screen.width-rw-3, m.keys.Palette)))
	case m.input.filtering:
		left = st.FilterPrompt.Render("/ ") + m.input.filter.View(m.screen.width-rw-3, true, st.Faint.Render("agent: state: source: node: level>= age> prio>= !word or text"))
	case m.input.rejected != "":
		// The rejected text is not what the rows show: say so, and name
		// the filter they do show.
		left = st.Danger.Render("rejected ") + theme.Safe(m.input.rejected) + st.Muted.Render(" · in force: "+orDash(theme.Safe(m.input.inForce)))
	case m.input.filter.Value() != "":
		left = st.FilterPrompt.Render("filter ") + theme.Safe(m.input.filter.Value())
	case below:
	default:
		left = st.Faint.Render("/ to filter · : for commands")
	}
	if m.board.scope != "" {
		left = st.Accent.Render("source "+theme.Safe(m.board.scope)) + " · " + left
	}
	if below {
		return m.alarmBelow(left)
	}
	return joinRight(left, right, m.screen.width)
}

// joinRight puts right at the end of the line, cutting left to make room.
func joinRight(left, right string, width int) string {
	rw := cells(right)
	lw := width - rw - 1
	if lw < 1 {
		return ansi.Truncate(left, width, "…")
	}
	left = ansi.Truncate(left, lw, "…")
	return left + strings.Repeat(" ", width-cells(left)-rw) + right
}

func (m *Model) body(b *strings.Builder, p *pane) {
	st := m.styles
	if p.kind == nodesView && m.board.snap.Mesh == nil {
		lines := []string{"", "  No mesh is configured, so there are no nodes to show.",
			"  Set mesh.registry in the config to watch the machines your agents run on."}
		for i := range p.grid.height {
			if i > 0 {
				b.WriteByte('\n')
			}
			if i < len(lines) {
				b.WriteString(st.Muted.Render(fit(lines[i], m.screen.width)))
			}
		}
		return
	}
	gs := m.paints
	pn := m.pen()
	var rows strings.Builder
	switch p.kind {
	case nodesView:
		p.grid.render(&rows, gs, func(i int, c []cell) bool { pn.nodeCells(p.nodes[i], c); return false })
	case activityView:
		p.grid.render(&rows, gs, func(i int, c []cell) bool { pn.activityCells(p.acts[i], c); return false })
	case statsView:
		p.grid.render(&rows, gs, func(i int, c []cell) bool { pn.statsCells(p.stats[i], c); return false })
	default:
		p.grid.render(&rows, gs, func(i int, c []cell) bool {
			t := p.shown[i].t
			pn.taskCells(p, t, c)
			if len(m.board.marks) > 0 {
				if _, ok := m.board.marks[t.Ref()]; ok {
					c[0].text = "✓ " + c[0].text
				}
			}
			_, busy := m.work.pending[t.Ref()]
			return busy
		})
	}
	out := rows.String()
	if p.len() == 0 {
		msgs := []string{st.Muted.Render(fit("  "+views[p.kind].empty, m.screen.width))}
		if len(m.board.all) == 0 && p.kind != nodesView && p.kind != activityView && p.kind != statsView && !loading(m.board.snap) {
			// A board with nothing on it says how work gets there.
			msgs = []string{
				st.Muted.Render(fit("  No tasks in any source yet. To add one:", m.screen.width)),
				fit(`    claimdeck create --title "what needs doing"`, m.screen.width),
				st.Muted.Render(fit("  or let an agent create it (ntask create); it shows here at the next poll.", m.screen.width)),
			}
		}
		if len(m.board.flt.Terms) > 0 {
			msgs = []string{st.Muted.Render(fit("  Nothing matches the filter (esc clears it).", m.screen.width))}
		}
		if p.kind != nodesView && p.kind != activityView {
			if sick := m.board.sourceTrouble(m.styles, &m.screen, m.loc); len(sick) > 0 {
				// An empty view over a failing source is not an empty queue.
				msgs = sick
			}
		}
		if lines := strings.Split(out, "\n"); len(lines) > 1 {
			for i, msg := range msgs {
				if i+1 < len(lines) {
					lines[i+1] = msg
				}
			}
			out = strings.Join(lines, "\n")
		}
	}
	b.WriteString(out)
}

// sourceTrouble says, on a screen sc wide, for each source not answering, what is wrong, since
// when, its last error and when it is tried again.
func (b *board) sourceTrouble(st *theme.Styles, sc *screen, loc *time.Location) []string {
	now := b.now()
	var out []string
	for _, s := range b.snap.Sources {
		switch s.Status {
		case hub.StatusDegraded:
			out = append(out, st.Danger.Render(fit(fmt.Sprintf("  %s %s since %s (%s ago), %d failed polls",
				s.Name, sourceWord(s), s.Since.In(loc).Format("15:04:05"), ago(s.Since, now), s.Failures), sc.width)))
			for _, l := range strings.Split(ansi.Wordwrap("last error: "+theme.Safe(s.Err), max(sc.width-6, 20), " "), "\n") {
				out = append(out, fit("    "+l, sc.width))
			}
			next := "next retry now"
			if r := s.Health.Retry; r.After(now) {
				next = "next retry in " + span(r.Sub(now))
			}
			hint := "its rows are missing from this view until it answers"
			if s.Health.Code == model.CodeMisconfigured {
				hint = "fix the source's configuration; " + hint
			}
			out = append(out, st.Muted.Render(fit("    "+next+"; "+hint, sc.width)), "")
		case hub.StatusOK:
			if sc.lagging(&s, now) {
				out = append(out, st.Warn.Render(fit(fmt.Sprintf("  %s lagging: no answer for %s (polled every %s); the rows shown may be old",
					s.Name, ago(s.Updated, now), s.Health.Every), sc.width)), "")
			}
		case hub.StatusConnecting:
			out = append(out, st.Warn.Render(fit("  "+s.Name+" connecting: no poll has answered yet", sc.width)), "")
		}
	}
	return out
}

// lagging is a source that has stopped answering without failing, judged
// by the hub's rule; never while paused, when nobody polls.
func (sc *screen) lagging(s *hub.SourceState, now time.Time) bool {
	return !sc.paused && s.Lagging(now)
}

// sourceWord names a degraded source's trouble as the status bar and the
// alarm say it.
func sourceWord(s hub.SourceState) string {
	if s.Health.Code == model.CodeMisconfigured {
		return "MISCONFIGURED"
	}
	return "UNREACHABLE"
}

func (m *Model) bannerLine() string {
	st := m.styles
	if m.work.bulk != nil {
		return st.Notice.Render(fit(m.work.bulk.bar(), m.screen.width))
	}
	if m.input.filterErr != "" {
		return st.Banner.Render(fit(" filter rejected: "+theme.Safe(m.input.filterErr)+" — in force: "+orDash(theme.Safe(m.input.inForce)), m.screen.width))
	}
	if m.status.text != "" {
		if m.status.isErr {
			return st.Banner.Render(fit(" "+theme.Safe(m.status.text), m.screen.width))
		}
		return st.Notice.Render(fit(" "+theme.Safe(m.status.text), m.screen.width))
	}
	for _, s := range m.board.snap.Sources {
		if s.Status == hub.StatusDegraded {
			msg := " ⚠ " + s.Name + " " + strings.ToLower(sourceWord(s)) + " for " + ago(s.Since, m.now()) + ": " + theme.Safe(s.Err) + " — retrying, showing its last good data"
			return st.Banner.Render(fit(msg, m.screen.width))
		}
	}
	if ptr := m.board.stuckPointer(&m.keys); ptr != "" {
		// The Queue a person starts on says where the stuck work is.
		return st.Warn.Render(fit(ptr, m.screen.width))
	}
	return ""
}

// footer shows each source's state and how fresh its data is.
func (m *Model) footer() string {
	st := m.styles
	now := m.now()
	var parts []string
	for _, s := range m.board.snap.Sources {
		part := st.Source(s.Name).Render(s.Name) + " "
		if s.Reads != "" {
			part += st.Footer.Render(theme.Safe(s.Reads) + " ")
		}
		switch {
		case m.screen.lagging(&s, now):
			part += st.Warn.Render("lagging")
		case s.Status == hub.StatusOK:
			part += st.OK.Render("ok")
		case s.Status == hub.StatusDegraded:
			part += st.Danger.Render(strings.ToLower(sourceWord(s)))
		default:
			part += st.Warn.Render("connecting")
		}
		if !s.Updated.IsZero() {
			part += st.Footer.Render(" · updated " + ago(s.Updated, now) + " ago")
		}
		if s.Loading {
			part += st.Warn.Render(" · loading…")
		}
		if s.Archived > 0 {
			// History stays in the backend; a state:done filter reads it.
			part += st.Footer.Render(fmt.Sprintf(" · %d finished earlier", s.Archived))
		}
		if m.readOnly(s.Name) && !m.opts.ReadOnly {
			part += st.Warn.Render(" (read-only)")
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return st.Footer.Render("waiting for the first poll…")
	}
	return ansi.Truncate(strings.Join(parts, st.Faint.Render(" │ ")), m.screen.width, "…")
}

func (m *Model) helpLine() string {
	st := m.styles
	if m.input.dropping {
		return st.Warn.Render(fit(fmt.Sprintf("dropping %q: no : line or filter in a dialog · enter or esc ends", m.input.dropped), m.screen.width))
	}
	if n := len(m.dialogs); n > 0 {
		return st.Muted.Render(fit(m.dialogs[n-1].hint(m.keys), m.screen.width))
	}
	if m.input.filtering {
		return st.Muted.Render(fit("enter keep filter · esc clear filter · ctrl+w delete word", m.screen.width))
	}
	if m.input.commanding {
		return st.Muted.Render(fit("enter run · tab complete · ↑/↓ history · esc leave", m.screen.width))
	}
	return shortHelp(m.paints, m.pane().ShortHelp(m.keys), m.screen.width)
}

// shortHelp fits the pane's keys on one line of width: the last two (help and
// quit) always stay; the ones before them give way from the right.
func shortHelp(ps *paints, items []key.Binding, width int) string {
	var enabled []key.Binding
	for _, b := range items {
		if b.Enabled() {
			enabled = append(enabled, b)
		}
	}
	for {
		line := helpItems(ps, enabled)
		if cells(line) <= width || len(enabled) <= 2 {
			return ansi.Truncate(line, width, "…")
		}
		enabled = slices.Delete(enabled, len(enabled)-3, len(enabled)-2)
	}
}

// helpItems is bubbles/help's short view of items ("key desc • key
// desc"), drawn with paints: its lipgloss renders were a sixth of a frame.
func helpItems(ps *paints, items []key.Binding) string {
	var b strings.Builder
	for i, kb := range items {
		if i > 0 {
			ps.helpSep.write(&b, " • ")
		}
		ps.helpKey.write(&b, kb.Help().Key)
		b.WriteByte(' ')
		ps.helpDesc.write(&b, kb.Help().Desc)
	}
	return b.String()
}

// pen is the rows' pen as the dashboard stands.
func (m *Model) pen() rowPen {
	return rowPen{paints: m.paints, pace: m.pace, now: m.now, loc: m.loc, board: m.board}
}

// retitle sets the terminal's title (through set) when what it says has
// changed.
func (s *screen) retitle(t string, set func(string)) tea.Cmd {
	if t == s.title {
		return nil
	}
	s.title = t
	return func() tea.Msg {
		if set != nil {
			set(t)
		}
		return nil
	}
}
