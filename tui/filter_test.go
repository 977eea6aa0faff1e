package tui

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

func TestSparkline(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	cases := []struct {
		lat   []time.Duration
		width int
		want  string
	}{
		{nil, 12, ""},
		{ms(1, 2, 3), 12, "▁▁▁"}, // jitter on a fast node stays flat
		{ms(0, 25, 50), 12, "▁▄█"},
		{ms(100, 200, 400), 12, "▂▄█"},
		{ms(900, 0, 25, 50), 3, "▁▄█"}, // only the last width pings count
	}
	for _, c := range cases {
		if got := sparkline(c.lat, c.width); got != c.want {
			t.Errorf("sparkline(%v, %d) = %q, want %q", c.lat, c.width, got, c.want)
		}
	}
}

func TestFilterByFieldAndText(t *testing.T) {
	cases := []struct {
		view   viewKind
		filter string
		want   []string
	}{
		{leasesView, "agent:alpha", []string{"TASK-9", "TASK-4"}},
		{leasesView, "agent:alp node:n1", []string{"TASK-9", "TASK-4"}},
		{queueView, "source:staging", []string{"S-1", "S-2"}}, // S-2: a dead holder's claim next rescues
		{queueView, "tls", []string{"TASK-1"}},
		{queueView, "agent:bravo", []string{"TASK-3", "TASK-5"}}, // reserved for bravo; bravo's dead claim
		{staleView, "state:claimed node:n3", []string{"TASK-7"}},
		{queueView, "nothing-like-this", nil},
		{staleView, "level>=urgent", []string{"S-2", "TASK-5"}},
		{staleView, "!level>=urgent", []string{"TASK-7"}},
		{queueView, "prio>=high !tls", []string{"TASK-3", "S-1"}},
		{queueView, "age>100m", []string{"TASK-1", "A-1", "S-2"}},
	}
	for _, c := range cases {
		t.Run(c.filter, func(t *testing.T) {
			r := newRig(t)
			r.press(fmt.Sprint(int(c.view)+1), "/")
			r.typeText(c.filter)
			r.press("enter")
			if got := rowKeys(r.m.pane().shown); !slices.Equal(got, c.want) {
				t.Fatalf("filter %q shows %v, want %v", c.filter, got, c.want)
			}
			r.press("esc")
			if r.m.input.filter.Value() != "" || len(r.m.pane().shown) != len(r.m.pane().members) {
				t.Fatal("esc must clear the filter")
			}
		})
	}
	t.Run("a word that does not parse keeps the last filter and says what to fix", func(t *testing.T) {
		r := newRig(t)
		r.press("/")
		r.typeText("tls !")
		if got := rowKeys(r.m.pane().shown); !slices.Equal(got, []string{"TASK-1"}) {
			t.Fatalf("while the filter does not parse: %v, want the last one's TASK-1", got)
		}
		if !strings.Contains(r.screen(), `"!" needs a word after it`) {
			t.Fatalf("no message naming what to fix:\n%s", r.screen())
		}
		r.typeText("edge")
		if strings.Contains(r.screen(), "needs a word") || len(r.m.pane().shown) != 0 {
			t.Fatalf("the fixed filter is not applied: %v", rowKeys(r.m.pane().shown))
		}
	})
	t.Run("backspace widens again", func(t *testing.T) {
		r := newRig(t)
		r.press("/")
		r.typeText("tlsx")
		r.press("backspace")
		if got := rowKeys(r.m.pane().shown); !slices.Equal(got, []string{"TASK-1"}) {
			t.Fatalf("after backspace: %v", got)
		}
	})
}

func TestEveryTaskIsFindable(t *testing.T) {
	cases := []struct {
		view   viewKind
		filter string
		want   []string
	}{
		{parkedView, "", []string{"TASK-11", "TASK-12", "TASK-10"}}, // the one in review, then the failed check overdue, then the blocked one's
		{parkedView, "state:blocked", []string{"TASK-10"}},
		{allView, "state:done", []string{"TASK-8"}},
		{allView, "state:canceled", []string{"TASK-13"}},
		{allView, "sdk", []string{"TASK-10"}},
	}
	for _, c := range cases {
		t.Run(views[c.view].title+" "+c.filter, func(t *testing.T) {
			r := newRig(t)
			r.press(fmt.Sprint(int(c.view) + 1))
			if c.filter != "" {
				r.press("/")
				r.typeText(c.filter)
				r.press("enter")
			}
			if got := rowKeys(r.m.pane().shown); !slices.Equal(got, c.want) {
				t.Fatalf("%s %q shows %v, want %v", views[c.view].title, c.filter, got, c.want)
			}
		})
	}
}

func TestParkedShowsTheBlockerReasonUnblockActionAndNextCheck(t *testing.T) {
	r := newRig(t)
	r.size(160, 30)
	r.press("6")
	row := rowOf(t, r, "TASK-10")
	for _, want := range []string{"blocked", "Upgrade the payments SDK", "needs the vendor's sandbox key", "ask finance for the key", "in 20m"} {
		if !strings.Contains(row, want) {
			t.Fatalf("the blocked row lacks %q: %q", want, row)
		}
	}
	if row := rowOf(t, r, "TASK-12"); !strings.Contains(row, "due 5m") {
		t.Fatalf("an overdue check must say so: %q", row)
	}
}

func TestFilteringMovesTheCursorToTheFirstMatch(t *testing.T) {
	r := newRig(t)
	r.press("7", "G") // TASK-13, canceled, is last and matches the filter too
	r.press("/")
	r.typeText("task-1")
	if sel := r.m.selected(); sel == nil || sel.DisplayKey() != "TASK-1" {
		t.Fatalf("after filtering the cursor is on %v, want the first match TASK-1", sel)
	}
	r.press("G", "backspace")
	if r.m.pane().grid.cursor != 0 {
		t.Fatalf("widening the filter left the cursor at %d", r.m.pane().grid.cursor)
	}
}

func TestSortCycles(t *testing.T) {
	r := newRig(t)
	r.press("s")
	got := r.m.pane().shown
	if !slices.IsSortedFunc(got, by(func(a, b *model.Task) int { return a.CreatedAt.Time().Compare(b.CreatedAt.Time()) })) || !strings.Contains(r.screen(), "oldest first") {
		t.Fatalf("second sort is not oldest first: %v", rowKeys(got))
	}
	r.press("s", "s")
	if r.m.pane().sort != 0 {
		t.Fatal("sort must cycle back to pull order")
	}
}

func TestAStandingFilterIsJudgedOnEverySnapshotAtItsTime(t *testing.T) {
	r := newRig(t)
	r.press("1", "/")
	r.typeText("age>100m")
	r.press("enter")
	typed := rowKeys(r.m.pane().shown)
	if !slices.Equal(typed, []string{"TASK-1", "A-1", "S-2"}) {
		t.Fatalf("typed: %v", typed)
	}
	r.archive.Put(&model.Task{ID: "a2", Key: "A-2", Title: "New chore", State: model.StateQueued, CreatedAt: model.StampOf(r.now), EditedAt: model.StampOf(r.now)})
	r.poll()
	if got := rowKeys(r.m.pane().shown); !slices.Equal(got, typed) {
		t.Fatalf("after a snapshot: %v, want what typing showed, %v", got, typed)
	}
	r.now = r.now.Add(60 * time.Minute) // TASK-2 is now 110 minutes old
	r.archive.Put(&model.Task{ID: "a3", Key: "A-3", Title: "Newer chore", State: model.StateQueued, CreatedAt: model.StampOf(r.now), EditedAt: model.StampOf(r.now)})
	r.poll()
	if got := rowKeys(r.m.pane().shown); !slices.Contains(got, "TASK-2") || slices.Contains(got, "S-1") {
		t.Fatalf("a snapshot an hour later: %v, want TASK-2 in and S-1 (70 minutes old) out", got)
	}
	r.now = r.now.Add(31 * time.Minute) // S-1 is now 101 minutes old; no snapshot since
	r.press("7")
	if got := rowKeys(r.m.pane().shown); !slices.Contains(got, "S-1") {
		t.Fatalf("the All view shown 31 minutes after the snapshot: %v, want S-1 judged at the time it is shown", got)
	}
}

// TestEveryKeyIsOneRow: each binding of KeyMap is bound by exactly one row
// of keyRows (a field without a row would be a key with no keys), names
// are unique, and every key that acts on a task is destructive.
