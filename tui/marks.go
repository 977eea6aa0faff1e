package tui

import (
	"slices"
	"strconv"

	"github.com/claimdeck/claimdeck/model"
)

// toggleMark marks the task under the cursor, or unmarks it; it reports
// whether there was one.
func (b *board) toggleMark() bool {
	t := b.pane().selectedTask()
	if t == nil {
		return false
	}
	if _, ok := b.marks[t.Ref()]; ok {
		delete(b.marks, t.Ref())
	} else {
		b.marks[t.Ref()] = t
		b.markFrom = t.Ref()
	}
	return true
}

// markRange marks every task shown from the last one marked to the
// cursor, both included, and makes the cursor's task the next range's
// start; it reports false when no mark is shown to range from.
func (b *board) markRange() bool {
	p := b.pane()
	t := p.selectedTask()
	if t == nil {
		return true
	}
	from := slices.IndexFunc(p.shown, func(r row) bool { return r.t.Ref() == b.markFrom })
	if from < 0 {
		return false
	}
	lo, hi := min(from, p.grid.cursor), max(from, p.grid.cursor)
	for _, r := range p.shown[lo : hi+1] {
		b.marks[r.t.Ref()] = r.t
	}
	b.markFrom = t.Ref()
	return true
}

// markShown marks every task the view shows through the filter.
func (b *board) markShown() {
	p := b.pane()
	if p.kind == nodesView || p.kind == activityView || p.kind == statsView {
		return
	}
	for _, r := range p.shown {
		b.marks[r.t.Ref()] = r.t
	}
}

// marked are the marked tasks in the order of the view on screen, then
// those the view no longer shows.
func (b *board) marked() []*model.Task {
	out := make([]*model.Task, 0, len(b.marks))
	seen := make(map[string]bool, len(b.marks))
	for _, r := range b.pane().shown {
		if t, ok := b.marks[r.t.Ref()]; ok {
			out = append(out, t)
			seen[r.t.Ref()] = true
		}
	}
	for ref, t := range b.marks {
		if !seen[ref] {
			out = append(out, t)
		}
	}
	return out
}

// toggleMark marks or unmarks the cursor's task and moves to the next
// row, so space space space marks three in a row; the note names the task
// and says the cursor moved.
func (m *Model) toggleMark() {
	t := m.selected()
	if !m.board.toggleMark() {
		return
	}
	what := "marked "
	if _, ok := m.board.marks[t.Ref()]; !ok {
		what = "unmarked "
	}
	m.move(1)
	m.status.note(what + t.DisplayKey() + " · " + strconv.Itoa(len(m.board.marks)) + " marked · cursor on the next row · esc clears")
}

func (m *Model) markRange() {
	if !m.board.markRange() {
		m.status.fail("no mark to range from here: space marks where a range starts")
		return
	}
	m.status.note(strconv.Itoa(len(m.board.marks)) + " marked · esc clears")
	m.syncKeys()
}

func (m *Model) markShown() {
	m.board.markShown()
	m.status.note(strconv.Itoa(len(m.board.marks)) + " marked · esc clears")
	m.syncKeys()
}
