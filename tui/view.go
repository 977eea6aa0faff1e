package tui

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/x/ansi"

	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/theme"
)

const appName = "claimdeck"

// View draws the screen: tabs, filter line, the table (or the top dialog),
// the banner, the footer and the short help. The banner has its own line,
// so an error never covers a row.
func (m *Model) View() string {
	if m.quitting {
		return ""
	}
	var b strings.Builder
	b.Grow(m.width * m.height * 2)
	b.WriteString(m.tabs())
	b.WriteByte('\n')
	b.WriteString(m.filterLine())
	b.WriteByte('\n')
	p := m.pane()
	if n := len(m.dialogs); n > 0 {
		b.WriteString(m.dialogs[n-1].view(m, m.width, p.grid.height))
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

func (m *Model) tabLabel(k viewKind) string {
	label := strconv.Itoa(int(k)+1) + " " + viewTitles[k]
	switch k {
	case nodesView:
		if m.snap.Mesh != nil {
			label += " " + strconv.Itoa(len(m.snap.Mesh.Nodes()))
		}
	case activityView:
	default:
		label += " " + strconv.Itoa(len(m.panes[k].members))
	}
	return label
}

func (m *Model) tabs() string {
	st := m.styles
	var b strings.Builder
	b.WriteString(st.Title.Render(appName))
	b.WriteString("  ")
	for k := range viewCount {
		if k == m.active {
			b.WriteString(st.TabActive.Render(m.tabLabel(k)))
		} else {
			b.WriteString(st.Tab.Render(m.tabLabel(k)))
		}
		b.WriteString("  ")
	}
	var flags []string
	if m.opts.ReadOnly {
		flags = append(flags, st.Warn.Render("READ-ONLY"))
	}
	if m.paused {
		flags = append(flags, st.Warn.Render("paused"))
	}
	return joinRight(b.String(), strings.Join(flags, " "), m.width)
}

func (m *Model) filterLine() string {
	st := m.styles
	p := m.pane()
	right := st.Muted.Render("sort: " + p.sorts[p.sort] + " · " + strconv.Itoa(p.len()) + " shown")
	rw := ansi.StringWidth(right)
	var left string
	switch {
	case m.filtering:
		left = st.FilterPrompt.Render("/ ") + m.filter.View(m.width-rw-3, true, st.Faint.Render("agent: state: source: node: or text"))
	case m.filter.Value() != "":
		left = st.FilterPrompt.Render("filter ") + m.filter.Value()
	default:
		left = st.Faint.Render("/ to filter")
	}
	return joinRight(left, right, m.width)
}

// joinRight puts right at the end of the line, cutting left to make room.
func joinRight(left, right string, width int) string {
	rw := ansi.StringWidth(right)
	lw := width - rw - 1
	if lw < 1 {
		return ansi.Truncate(left, width, "…")
	}
	left = ansi.Truncate(left, lw, "…")
	return left + strings.Repeat(" ", width-ansi.StringWidth(left)-rw) + right
}

var emptyText = [viewCount]string{
	"No eligible tasks: the queue is empty or everything is claimed.",
	"No active leases.",
	"Nothing stale or escalated.",
	"The mesh registry lists no nodes.",
	"No activity yet.",
}

func (m *Model) body(b *strings.Builder, p *pane) {
	st := m.styles
	if p.kind == nodesView && m.snap.Mesh == nil {
		lines := []string{"", "  No mesh is configured, so there are no nodes to show.",
			"  Set mesh.registry in the config to watch the machines your agents run on."}
		for i := range p.grid.height {
			if i > 0 {
				b.WriteByte('\n')
			}
			if i < len(lines) {
				b.WriteString(st.Muted.Render(fit(lines[i], m.width)))
			}
		}
		return
	}
	gs := m.paints
	var rows strings.Builder
	switch p.kind {
	case nodesView:
		p.grid.render(&rows, gs, func(i int, c []cell) bool { m.nodeCells(p.nodes[i], c); return false })
	case activityView:
		p.grid.render(&rows, gs, func(i int, c []cell) bool { m.activityCells(p.acts[i], c); return false })
	default:
		p.grid.render(&rows, gs, func(i int, c []cell) bool {
			t := p.shown[i].t
			m.taskCells(p, t, c)
			_, busy := m.pending[t.Ref()]
			return busy
		})
	}
	out := rows.String()
	if p.len() == 0 {
		msg := emptyText[p.kind]
		if len(m.terms) > 0 {
			msg = "Nothing matches the filter (esc clears it)."
		}
		if lines := strings.Split(out, "\n"); len(lines) > 1 {
			lines[1] = st.Muted.Render(fit("  "+msg, m.width))
			out = strings.Join(lines, "\n")
		}
	}
	b.WriteString(out)
}

func (m *Model) bannerLine() string {
	st := m.styles
	if m.banner != "" {
		if m.bannerIsErr {
			return st.Banner.Render(fit(" "+theme.Safe(m.banner), m.width))
		}
		return st.Notice.Render(fit(" "+theme.Safe(m.banner), m.width))
	}
	for _, s := range m.snap.Sources {
		if s.Status == hub.StatusDegraded {
			msg := " ⚠ " + s.Name + " degraded for " + ago(s.Since, m.now()) + ": " + theme.Safe(s.Err) + " — retrying, showing its last good data"
			return st.Banner.Render(fit(msg, m.width))
		}
	}
	return ""
}

// footer shows each source's state and how fresh its data is.
func (m *Model) footer() string {
	st := m.styles
	now := m.now()
	var parts []string
	for _, s := range m.snap.Sources {
		part := st.Source(s.Name).Render(s.Name) + " "
		switch s.Status {
		case hub.StatusOK:
			part += st.OK.Render("ok")
		case hub.StatusDegraded:
			part += st.Danger.Render("degraded")
		default:
			part += st.Warn.Render("connecting")
		}
		if !s.Updated.IsZero() {
			part += st.Footer.Render(" · updated " + ago(s.Updated, now) + " ago")
		}
		if m.readOnly(s.Name) && !m.opts.ReadOnly {
			part += st.Warn.Render(" (read-only)")
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return st.Footer.Render("waiting for the first poll…")
	}
	return ansi.Truncate(strings.Join(parts, st.Faint.Render(" │ ")), m.width, "…")
}

func (m *Model) helpLine() string {
	st := m.styles
	h := help.New()
	h.Styles.ShortKey, h.Styles.ShortDesc, h.Styles.ShortSeparator = st.Key, st.KeyDesc, st.Faint
	h.Width = m.width
	if n := len(m.dialogs); n > 0 {
		return st.Muted.Render(fit(m.dialogs[n-1].hint(), m.width))
	}
	if m.filtering {
		return st.Muted.Render(fit("enter keep filter · esc clear filter · ctrl+w delete word", m.width))
	}
	// bubbles/help can overrun its width by one item; cut it here.
	return ansi.Truncate(h.ShortHelpView(m.pane().ShortHelp(m.keys)), m.width, "…")
}
