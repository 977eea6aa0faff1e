package tui

import (
	"slices"
	"strings"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/theme"
)

// column is one column of a view's table.
type column struct {
	title string
	// width is the most cells the column takes; it shrinks to what the
	// rows on screen need. 0 makes it the flexible column that takes the
	// rest (the title, wherever there is one).
	width int
	right bool // numbers align right
	// drop orders which columns go first when the terminal is narrow
	// (highest first); 0 never goes.
	drop int
	// field is what a column sort orders by; FieldNone: not sortable.
	field model.Field
	// whole: a name (a key, a source) that is not cut while the flexible
	// column has room to give; it takes more than width then, and is cut
	// in the middle when it must be.
	whole bool
	// flexNext: the column that takes the rest when the flexible one is
	// dropped (the title gives way to what matters more in the view).
	flexNext bool
}

// minFlex is the least the flexible column (usually the title) keeps
// before other columns are dropped.
const minFlex = 12

// gutter is the cursor mark and the pending-action mark before each row.
const gutter = 2

// grid is a windowed table: it knows how many rows there are but renders
// only the visible slice, so a frame and a cursor move cost the same at
// 100 rows and at 100,000 (bubbles/table re-renders far more per move).
type grid struct {
	cols   []column
	shown  []int // indices of the columns that fit
	widths []int // width of each shown column

	width, height  int // height counts the header line
	n              int
	cursor, offset int

	// need is each column's width for the rows on screen (nil: its
	// width), measured by render; cells and pending hold those rows.
	need    []int
	cells   []cell
	pending []bool

	// letter is, per column, the byte of its title that shift sorts by
	// (underlined in the header), or -1; sortCol is the sorted column
	// (-1: none, the view's preset order) and desc its direction.
	letter  []int
	sortCol int
	desc    bool
}

// cell is one cell to draw: its text and, unless the row is selected, its
// paint (nil: the plain cell paint).
type cell struct {
	text  string
	paint *paint
}

func (g *grid) setColumns(cols []column) {
	g.cols = cols
	g.sortCol = -1
	g.letter = slices.Repeat([]int{-1}, len(cols))
	g.layout()
}

// SetSize fits the columns to the width, dropping the least useful ones
// until the flexible column keeps minFlex cells.
func (g *grid) SetSize(width, height int) {
	g.width, g.height = width, height
	g.layout()
	g.clamp()
}

func (g *grid) layout() {
	dropped := map[int]bool{}
	for {
		fixed, flex := g.place(dropped)
		rest := g.width - fixed
		if flex >= 0 && rest >= minFlex || !g.dropOne(dropped) {
			if flex >= 0 {
				g.widths[flex] = max(rest, 1)
				g.widen(flex)
			}
			return
		}
	}
}

// place lists the columns not dropped with their widths, and returns the
// width of all but the flexible one and the flexible one's place (-1:
// none): the title, or when it is dropped the column marked flexNext.
func (g *grid) place(dropped map[int]bool) (fixed, flex int) {
	fixed, flex = gutter, -1
	g.shown, g.widths = g.shown[:0], g.widths[:0]
	titleGone := false
	for i, c := range g.cols {
		titleGone = titleGone || c.width == 0 && dropped[i]
	}
	for i, c := range g.cols {
		if dropped[i] {
			continue
		}
		w := c.width
		if w > 0 && len(g.need) == len(g.cols) {
			w = min(w, g.need[i])
		}
		g.shown = append(g.shown, i)
		g.widths = append(g.widths, w)
		if c.width == 0 || c.flexNext && titleGone {
			flex = len(g.widths) - 1
		} else {
			fixed += w
		}
		fixed++ // the space after every column
	}
	return fixed, flex
}

// widen gives the whole columns cut short what they need, out of the
// flexible column's room above minFlex: the title gives way first.
func (g *grid) widen(flex int) {
	if len(g.need) != len(g.cols) {
		return
	}
	for j, ci := range g.shown {
		spare := g.widths[flex] - minFlex
		if c := g.cols[ci]; c.whole && j != flex && g.need[ci] > g.widths[j] && spare > 0 {
			add := min(g.need[ci]-g.widths[j], spare)
			g.widths[j] += add
			g.widths[flex] -= add
		}
	}
}

// dropOne hides the visible column with the highest drop rank.
func (g *grid) dropOne(dropped map[int]bool) bool {
	best := -1
	for i, c := range g.cols {
		if !dropped[i] && c.drop > 0 && (best < 0 || c.drop > g.cols[best].drop) {
			best = i
		}
	}
	if best < 0 {
		return false
	}
	dropped[best] = true
	return true
}

// rows is how many data rows fit.
func (g *grid) rows() int { return max(g.height-1, 0) }

// SetLen tells the grid how many rows there are now.
func (g *grid) SetLen(n int) {
	g.n = n
	g.clamp()
}

// Move moves the cursor by delta rows.
func (g *grid) Move(delta int) { g.Select(g.cursor + delta) }

// Select puts the cursor on row i and scrolls just enough to show it.
func (g *grid) Select(i int) {
	g.cursor = i
	g.clamp()
}

func (g *grid) clamp() {
	g.cursor = max(min(g.cursor, g.n-1), 0)
	rows := g.rows()
	if g.cursor < g.offset {
		g.offset = g.cursor
	}
	if rows > 0 && g.cursor >= g.offset+rows {
		g.offset = g.cursor - rows + 1
	}
	g.offset = max(min(g.offset, g.n-rows), 0)
}

// render draws the header and the visible rows; row(i) fills cells for
// data row i (one per column, in column order) and says whether an action
// on it is pending.
func (g *grid) render(b *strings.Builder, ps *paints, row func(i int, cells []cell) bool) {
	end := min(g.offset+g.rows(), g.n)
	nc := len(g.cols)
	g.cells = slices.Grow(g.cells[:0], (end-g.offset)*nc)[:(end-g.offset)*nc]
	g.pending = slices.Grow(g.pending[:0], end-g.offset)[:end-g.offset]
	clear(g.cells)
	for i := g.offset; i < end; i++ {
		g.pending[i-g.offset] = row(i, g.cells[(i-g.offset)*nc:(i-g.offset+1)*nc])
	}
	g.measure()
	var line strings.Builder
	g.header(b, ps)
	for i := g.offset; i < end; i++ {
		b.WriteByte('\n')
		cells := g.cells[(i-g.offset)*nc : (i-g.offset+1)*nc]
		pending := g.pending[i-g.offset]
		mark := "  "
		switch {
		case i == g.cursor && pending:
			mark = "›…"
		case i == g.cursor:
			mark = "› "
		case pending:
			mark = " …"
		}
		if i == g.cursor {
			// One paint over the whole row: the selection must read at a
			// glance, with or without colour.
			line.Reset()
			for j, ci := range g.shown {
				line.WriteString(g.pad(cells[ci].text, j))
				line.WriteByte(' ')
			}
			ps.cursor.write(b, mark)
			ps.selected.write(b, line.String())
			continue
		}
		b.WriteString(mark)
		for j, ci := range g.shown {
			p := &ps.cell
			if cells[ci].paint != nil {
				p = cells[ci].paint
			}
			p.write(b, g.pad(cells[ci].text, j))
			b.WriteByte(' ')
		}
	}
	for i := end - g.offset; i < g.rows(); i++ {
		b.WriteByte('\n')
	}
}

// title is a column's header: its title, and an arrow when sorted by it.
func (g *grid) title(ci int) string {
	switch {
	case ci != g.sortCol:
		return g.cols[ci].title
	case g.desc:
		return g.cols[ci].title + "↓"
	}
	return g.cols[ci].title + "↑"
}

// header draws the titles with each sort letter underlined; the text
// between letters goes out as one run of the header paint.
func (g *grid) header(b *strings.Builder, ps *paints) {
	var run strings.Builder
	run.WriteString(strings.Repeat(" ", gutter))
	for j, ci := range g.shown {
		text := g.pad(g.title(ci), j)
		li := g.letter[ci]
		// Right-aligned titles are padded on the left; a cut title may
		// have lost its letter, and then nothing is underlined.
		at := len(text) - len(strings.TrimLeft(text, " ")) + li
		if li < 0 || at >= len(text) || text[at] != g.cols[ci].title[li] {
			run.WriteString(text + " ")
			continue
		}
		run.WriteString(text[:at])
		if run.Len() > 0 {
			ps.header.write(b, run.String())
			run.Reset()
		}
		ps.headerKey.write(b, text[at:at+1])
		run.WriteString(text[at+1:] + " ")
	}
	ps.header.write(b, run.String())
}

// measure sizes each column to the widest of its title and the cells on
// screen, so the title column gets what the others do not use.
func (g *grid) measure() {
	nc := len(g.cols)
	g.need = slices.Grow(g.need[:0], nc)[:nc]
	for i := range g.cols {
		g.need[i] = cells(g.title(i))
	}
	for k, c := range g.cells {
		if w := cells(theme.Safe(c.text)); w > g.need[k%nc] {
			g.need[k%nc] = w
		}
	}
	g.layout()
}

func (g *grid) pad(s string, j int) string {
	switch c := g.cols[g.shown[j]]; {
	case c.right:
		return fitRight(s, g.widths[j])
	case c.whole:
		return fitMiddle(theme.Safe(s), g.widths[j])
	}
	return fit(theme.Safe(s), g.widths[j])
}

// rowAt maps a screen line inside the grid (0 = header) to a data row.
func (g *grid) rowAt(line int) (int, bool) {
	i := g.offset + line - 1
	return i, line >= 1 && i < g.n && line <= g.rows()
}
