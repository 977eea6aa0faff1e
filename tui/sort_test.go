package tui

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

// shownKeys are the display keys of the pane on screen, top down.
func shownKeys(r *rig) []string {
	var out []string
	for _, row := range r.m.pane().shown {
		out = append(out, row.t.DisplayKey())
	}
	return out
}

// sortedBy reports whether the pane on screen is in o's order.
func sortedBy(r *rig, o model.Order) bool {
	return slices.IsSortedFunc(r.m.pane().shown, by(o.Compare))
}

// TestColumnSortAndReversal: shift+P sorts the Queue by priority, again
// reverses it, and s goes back to the presets, named pull order first.
func TestColumnSortAndReversal(t *testing.T) {
	r := newRig(t)
	pull := shownKeys(r)
	if !strings.Contains(r.screen(), "sort: pull order") {
		t.Fatalf("the Queue's default is not named pull order:\n%s", r.screen())
	}
	r.press("P")
	if !sortedBy(r, model.Order{Field: model.FieldPriority}) || !strings.Contains(r.screen(), "PRI↑") {
		t.Fatalf("P did not sort by priority ascending: %v\n%s", shownKeys(r), r.screen())
	}
	r.press("P")
	if !sortedBy(r, model.Order{Field: model.FieldPriority, Desc: true}) || !strings.Contains(r.screen(), "PRI↓") {
		t.Fatalf("P again did not reverse: %v\n%s", shownKeys(r), r.screen())
	}
	r.press("s")
	if got := shownKeys(r); !slices.Equal(got, pull) || strings.Contains(r.screen(), "PRI↓") {
		t.Fatalf("s left the column sort on: %v, want pull order %v", got, pull)
	}
}

// TestSortLettersAvoidBoundKeys: RESERVED's R is refresh's key, so its
// letter is the next one, E; no view gives two columns one letter.
func TestSortLettersAvoidBoundKeys(t *testing.T) {
	r := newRig(t)
	for _, p := range r.m.board.panes {
		seen := map[byte]bool{}
		for ci, li := range p.grid.letter {
			if li < 0 {
				continue
			}
			ch := p.grid.cols[ci].title[li]
			if seen[ch] || r.m.keys.bound(string(ch)) {
				t.Fatalf("%s: letter %c of %s is taken", views[p.kind].title, ch, p.grid.cols[ci].title)
			}
			seen[ch] = true
		}
	}
	q := r.m.board.panes[queueView]
	if ci := q.sortLetter("E"); ci < 0 || q.grid.cols[ci].title != "RESERVED" {
		t.Fatalf("E sorts column %d of the Queue, want RESERVED", ci)
	}
}

// TestSortCommand: :sort COLUMN [desc] sorts as the letter does, a preset
// is named, an unknown column gets a suggestion, and a view without
// column sorts says so.
func TestSortCommand(t *testing.T) {
	r := newRig(t)
	run := func(line string) {
		r.press(":")
		r.typeText(line)
		r.press("enter")
	}
	run("sort age desc")
	if !sortedBy(r, model.Order{Field: model.FieldAge, Desc: true}) || !strings.Contains(r.screen(), "sort: age descending") {
		t.Fatalf(":sort age desc: %v\n%s", shownKeys(r), r.screen())
	}
	run("sort pull order")
	if !strings.Contains(r.screen(), "sort: pull order") {
		t.Fatalf(":sort pull order:\n%s", r.screen())
	}
	run("sort prio")
	if !strings.Contains(r.screen(), ":sort prio: Queue has no such column — did you mean pri?") {
		t.Fatalf("an unknown column:\n%s", r.screen())
	}
	run("nodes")
	run("sort name")
	if !strings.Contains(r.screen(), "sort: name") {
		t.Fatalf(":sort name on Nodes, a preset:\n%s", r.screen())
	}
	run("sort seen")
	if !strings.Contains(r.screen(), "Nodes sorts only by its presets") {
		t.Fatalf(":sort on Nodes:\n%s", r.screen())
	}
}

// TestColumnSortIsExactlyModelOrder: the packed sort of every number and
// time column, and the keyed sort of every text column, put 5,000 tasks
// (ties, never-claimed and unexpired among them; titles in either case, in
// other scripts and in broken UTF-8) in exactly model.Order's order, both
// ways.
func TestColumnSortIsExactlyModelOrder(t *testing.T) {
	tasks := bigQueue(5000, rand.New(rand.NewPCG(11, 12))).Sources[0].Tasks.AppendTo(nil)
	for i, title := range []string{"ÉCOLE", "école", "\u212aelvin", "kelvin", "Zebra", "zebra", "a\xff", "a\ufffd", "İstanbul", "istanbul"} {
		tasks[20+i].Title = title
	}
	tasks[3].EditMore().Unblock = &model.Unblock{NextCheckAt: t0.Add(time.Hour)}
	tasks[9].EditClaim().ClaimedAt = model.StampOf(t0.Add(-time.Nanosecond))
	tasks[10].EditClaim().ClaimedAt = model.StampOf(t0.Add(-2 * time.Nanosecond)) // the same second
	for f := model.FieldSource; f <= model.FieldReserved; f++ {
		for _, desc := range []bool{false, true} {
			o := model.Order{Field: f, Desc: desc}
			p := &pane{kind: queueView}
			for _, task := range tasks {
				p.members = append(p.members, row{t: task})
			}
			want := slices.Clone(tasks)
			slices.SortFunc(want, o.Compare)
			p.sortColumn(o)
			if got := rowKeys(p.members); !slices.Equal(got, keys(want)) {
				t.Fatalf("field %d desc %v: the column sort differs from model.Order", f, desc)
			}
		}
	}
}
