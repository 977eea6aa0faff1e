package tui

import (
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/claimdeck/claimdeck/theme"
)

// paint is a style reduced to the escape sequences around its text, taken
// once from lipgloss. Table cells are drawn thousands of times a second;
// lipgloss.Style.Render costs microseconds each, a paint a string copy.
// Only for styles without layout (colours, bold, reverse).
type paint struct{ pre, post string }

// paintProbe is a printable letter: Lip Gloss v2 leaves control
// characters unstyled under an underline, and no escape sequence of a
// style holds an X.
const paintProbe = "X"

func paintOf(s lipgloss.Style) paint {
	r := s.Render(paintProbe)
	i := strings.Index(r, paintProbe)
	if i < 0 {
		return paint{}
	}
	return paint{pre: r[:i], post: r[i+len(paintProbe):]}
}

func (p *paint) write(b *strings.Builder, s string) {
	b.WriteString(p.pre)
	b.WriteString(s)
	b.WriteString(p.post)
}

// paints are the theme's table styles as paints.
type paints struct {
	header, cell, selected, cursor        paint
	headerKey                             paint // a header's sort letter
	accent, info, warn, danger, ok, muted paint
	barFull                               paint
	helpKey, helpDesc, helpSep            paint // the short help's
	levels                                [levelBroken + 1]paint
	styles                                *theme.Styles
	sources                               map[string]*paint
}

func newPaints(st *theme.Styles) *paints {
	p := &paints{
		header: paintOf(st.Header), cell: paintOf(st.Cell), selected: paintOf(st.Selected), cursor: paintOf(st.Cursor),
		headerKey: paintOf(st.Header.Underline(true)),
		accent:    paintOf(st.Accent), info: paintOf(st.Info), warn: paintOf(st.Warn), danger: paintOf(st.Danger),
		ok: paintOf(st.OK), muted: paintOf(st.Muted), barFull: paintOf(st.BarFull),
		helpKey: paintOf(st.Key), helpDesc: paintOf(st.KeyDesc), helpSep: paintOf(st.Faint),
		styles: st, sources: map[string]*paint{},
	}
	for i := range p.levels {
		p.levels[i] = paintOf(st.Level(i))
	}
	return p
}

// source is a source's label paint, made on first use.
func (p *paints) source(name string) *paint {
	if sp, ok := p.sources[name]; ok {
		return sp
	}
	sp := paintOf(p.styles.Source(name))
	p.sources[name] = &sp
	return &sp
}
