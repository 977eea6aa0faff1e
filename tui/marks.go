package tui

import (
	"slices"
	"strconv"

	"github.com/claimdeck/claimdeck/model"
)

// toggleMark marks or unmarks the cursor's task and moves to the next
// row, so space space space marks three in a row; the note names the task
// and says the cursor moved. It says nothing when no task is under the
// cursor.
func (b *board) toggleMark() (note string, failed bool) {
	t := b.pane().selectedTask()
	if t == nil {
		return "", false
	}
	what := "marked "
	if _, ok := b.marks[t.Ref()]; ok {
		delete(b.marks, t.Ref())
		what = "unmarked "
	} else {
		b.marks[t.Ref()] = t
		b.markFrom = t.Ref()
	}
	b.pane().grid.Move(1)
	return what + t.DisplayKey() + " · " + strconv.Itoa(len(b.marks)) + " marked · cursor on the next row · esc clears", false
}

// markRange marks every task shown from the last one marked to the
// cursor, both included, and makes the cursor's task the next range's
// start; it fails when no mark is shown to range from.
func (b *board) markRange() (note string, failed bool) {
	p := b.pane()
	if t := p.selectedTask(); t != nil {
		from := slices.IndexFunc(p.shown, func(r row) bool { return r.t.Ref() == b.markFrom })
		if from < 0 {
			return "no mark to range from here: space marks where a range starts", true
		}
		lo, hi := min(from, p.grid.cursor), max(from, p.grid.cursor)
		for _, r := range p.shown[lo : hi+1] {
			b.marks[r.t.Ref()] = r.t
		}
		b.markFrom = t.Ref()
	}
	return b.markCount(), false
}

// markShown marks every task the view shows through the filter.
func (b *board) markShown() (note string, failed bool) {
	p := b.pane()
	if p.kind != nodesView && p.kind != activityView && p.kind != statsView {
		for _, r := range p.shown {
			b.marks[r.t.Ref()] = r.t
		}
	}
	return b.markCount(), false
}

func (b *board) markCount() string { return strconv.Itoa(len(b.marks)) + " marked · esc clears" }

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
