package tui

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/stats"
)

func TestADemoRunningFasterCountsInItsOwnTime(t *testing.T) {
	r := newRig(t, func(o *Options) { o.Speed = 60 })
	r.prod.Put((&model.Task{ID: "d1", Key: "D-1", Title: "fast", State: model.StateClaimed, RawStatus: "claimed", CreatedAt: model.StampOf(t0.Add(-30 * time.Second))}).WithClaim(model.Claim{Holder: model.HolderAgent, Name: "alpha", Token: "t", ClaimedAt: model.StampOf(t0.Add(-5 * time.Second)), HeartbeatAt: model.StampOf(t0.Add(-5 * time.Second)), Expires: model.StampOf(t0.Add(15 * time.Second))}))
	r.poll()
	r.size(120, 40)
	r.press("2")
	if row := rowOf(t, r, "D-1"); !strings.Contains(row, "5m") || !strings.Contains(row, "15:00") {
		t.Fatalf("15 s at 60× must read as 15:00 left, claimed 5m ago: %q", row)
	}
}

func TestASourceThatStopsAnsweringIsSaidToLag(t *testing.T) {
	r := newRig(t)
	r.size(120, 40)
	s := r.m.board.snap
	s.Sources = slices.Clone(s.Sources)
	for i := range s.Sources {
		s.Sources[i].Health.Every = 2 * time.Second
	}
	r.m.applySnapshot(s)
	if top := topLines(r.screen()); strings.Contains(top, "LAGGING") {
		t.Fatalf("a source polled 3 s ago lags: %q", top)
	}
	r.now = r.now.Add(10 * time.Second) // 13 s without an answer, polled every 2 s
	r.m.Update(tickMsg{})
	screen := r.screen()
	if top := topLines(screen); !strings.Contains(top, "PROD, STAGING, ARCHIVE LAGGING") {
		t.Fatalf("the top bar does not say prod lags: %q", top)
	}
	if !strings.Contains(screen, "prod lagging · updated 13s ago") {
		t.Fatalf("the status bar does not say prod lags:\n%s", screen)
	}
	r.m.Update(tea.BlurMsg{})
	if strings.Contains(r.screen(), "LAGGING") {
		t.Fatal("paused, nobody polls: nothing lags")
	}
}

// The Stats view's waits and ages count in the demo's time too, as every
// other column does: 5 s queued at 60× reads as 5m.
func TestStatsCountInADemosOwnTime(t *testing.T) {
	for _, c := range []struct {
		speed float64
		want  string
	}{{1, "5s/10s"}, {60, "5m/10m"}} {
		r := newRig(t, func(o *Options) { o.Speed = c.speed })
		cells := make([]cell, len(views[statsView].cols))
		r.m.pen().statsCells(statsRow{kind: "all", g: stats.Group{QueueWait: stats.Quantiles{N: 4, P50: 5, P95: 10}}}, cells)
		if got := cells[6].text; got != c.want {
			t.Errorf("at %g× the queue wait reads %q, want %q", c.speed, got, c.want)
		}
	}
}

// topLines are the top bar's two lines: the tabs, and the alarm's place
// when it does not fit beside them.
func topLines(screen string) string {
	lines := strings.SplitN(screen, "\n", 3)
	return strings.Join(lines[:min(2, len(lines))], "\n")
}

// At 80 columns with an alarm, every view's number, name and count stay
// on the first line (the alarm takes the second whole); the Queue says
// where the stuck claims are and how to get there.
func TestEveryTabKeepsItsCountBesideAnAlarmAt80Columns(t *testing.T) {
	r := newRig(t)
	r.size(80, 24)
	screen := r.screen()
	lines := strings.Split(screen, "\n")
	for k := range viewCount {
		label := views[k].key + " " + views[k].title[:3]
		if !strings.Contains(lines[0], label) {
			t.Fatalf("the tab %q is missing: %q", label, lines[0])
		}
		if k == activityView || k == statsView {
			continue // they count nothing
		}
		if !regexp.MustCompile(regexp.QuoteMeta(label) + `[a-z]* \d+`).MatchString(lines[0]) {
			t.Fatalf("the tab %q has no count: %q", label, lines[0])
		}
	}
	if !strings.Contains(lines[1], "N3 DOWN · 1 ESCALATED · 1 URGENT · 1 STALE · 1 IN REVIEW") {
		t.Fatalf("the whole alarm is not on the second line: %q", lines[1])
	}
	if !strings.Contains(screen, "→ 3 stuck claims waiting in Stale: press 3") {
		t.Fatalf("the Queue does not point at the stuck claims:\n%s", screen)
	}
	r.press("2")
	if strings.Contains(r.screen(), "stuck claims waiting") {
		t.Fatal("the pointer shows outside the Queue")
	}
}

// No two tabs read alike however short they are cut to a prefix: Stale and
// Stats once both read "Sta" at 80 columns.
func TestShortTabTitlesAreDistinct(t *testing.T) {
	seen := map[string]viewKind{}
	for k := range viewCount {
		short := shortTitle(k)
		if len(short) < 3 && len(short) < len(views[k].title) {
			t.Errorf("%s is cut to %q, under 3 letters", views[k].title, short)
		}
		if o, dup := seen[short]; dup {
			t.Errorf("%s and %s both read %q", views[o].title, views[k].title, short)
		}
		seen[short] = k
	}
}

// A task view off screen lets go of its rows at a derive, and All makes
// none: when one comes back it shows every task it holds, in its order,
// with the cursor on the task it was on, though that task's place moved.
func TestAViewComesBackWholeWithItsCursorAfterLettingGoOfItsRows(t *testing.T) {
	for _, v := range []viewKind{allView, leasesView} {
		t.Run(views[v].title, func(t *testing.T) {
			r := newRig(t)
			r.size(120, 40)
			r.selectKey(v, "TASK-9")
			r.press("1")
			// A lease running out first, of the first class: it goes before
			// TASK-9 in Leases and in All.
			r.prod.Put((&model.Task{ID: "14", Key: "TASK-14", Title: "Drain the old queue", State: model.StateClaimed, RawStatus: "claimed",
				Class: model.ClassExpedite, CreatedAt: model.StampOf(t0.Add(-time.Minute)), EditedAt: model.StampOf(t0.Add(-time.Minute))}).
				WithClaim(model.Claim{Holder: model.HolderAgent, Name: "foxtrot", RunID: "r-30", Token: "tok-30",
					ClaimedAt: model.StampOf(t0.Add(-time.Minute)), HeartbeatAt: model.StampOf(t0), Expires: model.StampOf(t0.Add(time.Minute))}))
			r.poll()
			b := r.m.board
			if b.panes[v].shown != nil || b.panes[allView].members != nil {
				t.Fatalf("off screen, %s kept %d rows and All %d members", views[v].title, len(b.panes[v].shown), len(b.panes[allView].members))
			}
			if tabs := strings.Split(r.screen(), "\n")[0]; !strings.Contains(tabs, "All "+strconv.Itoa(b.snap.Len())) {
				t.Fatalf("All does not count the %d tasks while off screen: %q", b.snap.Len(), tabs)
			}
			r.press(views[v].key)
			p := r.m.pane()
			if got := r.m.selected(); got == nil || got.Key != "TASK-9" {
				t.Fatalf("back on %s, the cursor is on row %d of %v, want TASK-9", views[v].title, p.grid.cursor, rowKeys(p.shown))
			}
			if i := slices.Index(rowKeys(p.shown), "TASK-14"); i < 0 || i > p.grid.cursor {
				t.Fatalf("TASK-14 is at %d, TASK-9 at %d: %v", i, p.grid.cursor, rowKeys(p.shown))
			}
			want := b.snap.Len()
			if v == leasesView {
				want = len(b.panes[leasesView].members)
			}
			if len(p.shown) != want {
				t.Fatalf("back on %s: %d rows, want %d", views[v].title, len(p.shown), want)
			}
		})
	}
}

// The view on screen shows its members themselves when no filter is in
// force, and a derive rebuilds them in place: the cursor stays on its task
// when a new one goes before it.
func TestTheCursorStaysOnItsTaskWhenAPollMovesIt(t *testing.T) {
	r := newRig(t)
	r.size(120, 40)
	r.selectKey(queueView, "S-1")
	before := r.m.pane().grid.cursor
	r.prod.Put(&model.Task{ID: "15", Key: "TASK-15", Title: "Page the DBA", State: model.StateQueued, RawStatus: "queued",
		Class: model.ClassExpedite, Priority: 9, CreatedAt: model.StampOf(t0), EditedAt: model.StampOf(t0)})
	r.poll()
	p := r.m.pane()
	if got := r.m.selected(); got == nil || got.Key != "S-1" || p.grid.cursor != before+1 {
		t.Fatalf("after a poll the cursor is on row %d of %v, want S-1 at %d", p.grid.cursor, rowKeys(p.shown), before+1)
	}
	if rowKeys(p.shown)[0] != "TASK-15" {
		t.Fatalf("the new task is not first: %v", rowKeys(p.shown))
	}
}
