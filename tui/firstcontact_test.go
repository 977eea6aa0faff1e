package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// Keys typed faster than a frame arrive as one message of several runes
// (Bubble Tea v1); outside text inputs each is a key of its own, in order.
func TestABurstOfKeysIsHandledKeyByKey(t *testing.T) {
	r := newRig(t)
	r.press("7", "jjj")
	if got := r.m.pane().grid.cursor; got != 3 {
		t.Fatalf("jjj moved the cursor to row %d, want 3", got)
	}
	r.press("23")
	if r.m.board.active != staleView {
		t.Fatalf("23 left the view at %s, want Stale", views[r.m.board.active].title)
	}
	r.press("1?")
	if _, ok := r.m.dialogs[len(r.m.dialogs)-1].(*helpDialog); r.m.board.active != queueView || !ok {
		t.Fatal("1? must show the Queue, then help")
	}
	r.press("esc", "5?")
	if r.m.board.active != activityView || len(r.m.dialogs) != 1 {
		t.Fatal("5? must show Activity, then help")
	}
	r.press("esc", "7/sta")
	if r.m.board.active != allView || !r.m.input.filtering || r.m.input.filter.Value() != "sta" {
		t.Fatalf("7/sta: view %s, filtering %v, filter %q; want All, filtering, \"sta\"",
			views[r.m.board.active].title, r.m.input.filtering, r.m.input.filter.Value())
	}
}

func TestHelpScrollsAndClosesOnlyOnEscQuestionOrQ(t *testing.T) {
	r := newRig(t) // 80×24: the help is longer than the screen
	r.press("?")
	if !strings.Contains(r.screen(), "more lines") {
		t.Fatalf("the help does not say it goes on:\n%s", r.screen())
	}
	first := r.screen()
	for _, k := range []string{"j", "down", "pgdown", "x", "enter", "space", "end"} {
		r.press(k)
		if len(r.m.dialogs) != 1 {
			t.Fatalf("%s closed the help", k)
		}
	}
	if r.screen() == first || !strings.Contains(r.screen(), "Mouse: click selects") {
		t.Fatalf("the help did not scroll to its end:\n%s", r.screen())
	}
	for _, k := range []string{"esc", "?", "q"} {
		r.press("?", k)
		if len(r.m.dialogs) != 0 || r.m.screen.quitting {
			t.Fatalf("%s must close the help, and only the help", k)
		}
	}
}

// The worst thing is named from every view at every width from 60
// columns; tabs shorten, never to bare digits; help and quit stay in the
// footer at 80.
func TestTheWorstThingIsNamedAtEveryWidth(t *testing.T) {
	r := newRig(t)
	for _, w := range []int{60, 70, 80, 100, 120} {
		r.size(w, 24)
		for k := range viewCount {
			r.press(string(views[k].key))
			lines := strings.Split(r.screen(), "\n")
			top := topLines(r.screen())
			if !strings.Contains(top, "N3 DOWN") || strings.Contains(top, "+") {
				t.Fatalf("%d columns, %s: the DOWN node is not named: %q", w, views[k].title, top)
			}
			for i := range viewCount {
				if i != k && strings.Contains(top, "  "+string(views[i].key)+"  ") {
					t.Fatalf("%d columns: a bare digit for a tab: %q", w, top)
				}
			}
			if w >= 80 && len(r.m.dialogs) == 0 && k != nodesView && k != activityView && k != statsView {
				if help := lines[len(lines)-1]; !strings.Contains(help, "? help") || !strings.Contains(help, "q quit") {
					t.Fatalf("%d columns, %s: the footer lacks ? help and q quit: %q", w, views[k].title, help)
				}
			}
		}
	}
}

// A detail's footer offers only the actions that can apply, by the keys
// they are bound to now.
func TestTheDetailOffersWhatCanApplyByItsKeys(t *testing.T) {
	r := newRig(t, func(o *Options) { o.Keys = map[string][]string{"claim": {"t"}} })
	r.size(120, 40)
	r.selectKey(leasesView, "TASK-4")
	r.press("enter")
	if hint := lastLine(r.screen()); !strings.Contains(hint, "t claim") || strings.Contains(hint, "c claim") {
		t.Fatalf("the detail's footer does not follow the rebinding: %q", hint)
	}
	r.press("esc")
	r.selectKey(allView, "TASK-8") // done
	if footer := lastLine(r.screen()); strings.Contains(footer, "claim") || strings.Contains(footer, "release") {
		t.Fatalf("a done task's row offers actions: %q", footer)
	}
	r.press("t")
	if len(r.m.dialogs) != 0 || !strings.Contains(r.screen(), "already done") {
		t.Fatalf("t (claim) on a done task must say why nothing opens:\n%s", r.screen())
	}
	r.press("enter")
	hint := lastLine(r.screen())
	for _, offer := range []string{"claim", "release", "cancel", "hand off"} {
		if strings.Contains(hint, offer) {
			t.Fatalf("a done task's detail offers %s: %q", offer, hint)
		}
	}
	r.press("esc", ":")
	r.typeText("handoff")
	r.press("enter")
	if len(r.m.dialogs) != 0 || !strings.Contains(r.screen(), "already done") {
		t.Fatalf(":handoff on a done task must be refused before any dialog:\n%s", r.screen())
	}
}

func TestARejectedFilterIsShownRejectedBesideTheOneInForce(t *testing.T) {
	r := newRig(t)
	r.size(120, 40)
	r.press("/")
	r.typeText("source:prod")
	r.press("enter", "/")
	r.typeText(" prio>=hgh")
	r.press("enter")
	line := strings.Split(r.screen(), "\n")[1]
	if !strings.Contains(line, "rejected source:prod prio>=hgh") || !strings.Contains(line, "in force: source:prod") {
		t.Fatalf("the filter line does not say the typed filter was rejected and which one holds: %q", line)
	}
	r.press("esc")
	if r.m.input.rejected != "" || len(r.m.board.flt.Terms) != 0 {
		t.Fatal("esc must clear the rejected filter and the one in force")
	}
}

// Bulk cancel asks the reason first, then previews with it.
func TestBulkCancelAsksTheReasonThenPreviewsWithIt(t *testing.T) {
	r := newRig(t)
	r.size(120, 40)
	r.press("1", "space", "space", "space")
	r.press("x")
	if strings.Contains(r.screen(), "a reason is required") || strings.Contains(r.screen(), "apply to") {
		t.Fatalf("the preview was judged before the reason:\n%s", r.screen())
	}
	r.typeText("duplicate")
	r.press("enter")
	if !strings.Contains(r.screen(), "Apply to 3 tasks") {
		t.Fatalf("the preview with the reason does not apply to the three:\n%s", r.screen())
	}
	r.press("y")
	canceled := 0
	for _, id := range []string{"1", "2", "3"} {
		if r.get(id).State == model.StateCanceled {
			canceled++
		}
	}
	if s1, _ := r.staging.Get(t.Context(), "s1"); s1.State == model.StateCanceled {
		canceled++
	}
	if canceled != 3 {
		t.Fatalf("%d of the 3 marked tasks canceled:\n%s", canceled, r.screen())
	}
}

// A CONFLICT's dialog offers one key to look at the task as it is now.
func TestAConflictOffersToLookAgain(t *testing.T) {
	r := newRig(t)
	r.size(120, 40)
	r.selectKey(leasesView, "TASK-4")
	r.press("r", "enter")
	seen := r.get("4")
	if _, err := r.prod.ForceRelease(t.Context(), "4", sources.Human{Actor: "carol", Expect: seen.Version}); err != nil {
		t.Fatal(err)
	}
	r.press("y")
	if !strings.Contains(lastLine(r.screen()), "a look again") {
		t.Fatalf("the refusal offers no key to look again: %q", lastLine(r.screen()))
	}
	r.poll()
	r.press("a")
	if d, ok := r.m.dialogs[len(r.m.dialogs)-1].(*taskDialog); !ok || d.id != "4" || d.task(r.m.env()).Held() {
		t.Fatal("a must open the task as it is now: released by carol")
	}
}

func lastLine(s string) string {
	lines := strings.Split(s, "\n")
	return lines[len(lines)-1]
}

// Backspace after narrowing keystrokes puts back exactly the rows the
// wider filter shows when judged afresh, cursor on the first.
func TestBackspaceShowsWhatTheWiderFilterShows(t *testing.T) {
	r := newRig(t)
	r.press("7", "/")
	r.typeText("re")
	want := rowKeys(r.m.pane().shown)
	r.typeText("n")
	if got := rowKeys(r.m.pane().shown); len(got) >= len(want) || len(r.m.board.undo) == 0 {
		t.Fatalf("typing n did not narrow through the rows shown: %v from %v", got, want)
	}
	r.press("backspace")
	if got := rowKeys(r.m.pane().shown); strings.Join(got, " ") != strings.Join(want, " ") || r.m.pane().grid.cursor != 0 {
		t.Fatalf("backspace shows %v, want %v", got, want)
	}
	r.press("backspace", "backspace")
	r.m.refilter()
	all := rowKeys(r.m.pane().shown)
	r.typeText("re")
	r.m.pane().unfiltered = true // judged afresh over every member
	r.m.refilter()
	if fresh := rowKeys(r.m.pane().shown); strings.Join(fresh, " ") != strings.Join(want, " ") || len(all) <= len(want) {
		t.Fatalf("judged afresh %v, put back %v", fresh, want)
	}
}

// Columns by meaning: in the Stale view WHY and NODE outrank the title; a
// key is not cut while the title has room to give.
func TestColumnsGiveWayByMeaning(t *testing.T) {
	r := newRig(t)
	r.prod.Put(&model.Task{ID: "20", Key: "index-rebuild-42", Title: "Rebuild the index", State: model.StateQueued, CreatedAt: model.StampOf(t0)})
	r.poll()
	r.size(120, 40)
	r.press("1")
	if !strings.Contains(r.screen(), "index-rebuild-42") {
		t.Fatalf("the key is cut while the title has room:\n%s", r.screen())
	}
	for _, w := range []int{60, 80} {
		r.size(w, 24)
		r.press("3")
		row := rowOf(t, r, "TASK-7")
		if !strings.Contains(row, "n3") || !strings.Contains(row, "node n3 DOWN") {
			t.Fatalf("%d columns: the Stale row lacks its node or why: %q", w, row)
		}
	}
}

// A sped-up clock (the demo's) is named in the top bar, and every time on
// screen is in the tasks' time: no wall-clock time beside it.
func TestASpedUpClockIsNamedAndShowsOneKindOfTime(t *testing.T) {
	r := newRig(t, func(o *Options) { o.Speed = 60 })
	r.size(160, 40)
	if top := topLines(r.screen()); !strings.Contains(top, "clock ×60") {
		t.Fatalf("the top bar does not say the clock runs 60×: %q", top)
	}
	r.press("5")
	if s := r.screen(); !strings.Contains(s, " ago ") || strings.Contains(s, "02:10:00") {
		t.Fatalf("Activity shows wall-clock times under a sped-up clock:\n%s", s)
	}
	r.selectKey(leasesView, "TASK-4")
	r.press("enter", "G")
	if s := r.screen(); strings.Contains(s, "2026-11-21") || strings.Contains(s, "11-21 ") {
		t.Fatalf("the detail shows wall-clock dates under a sped-up clock:\n%s", s)
	}
}

// The dialog's lease line follows the lease as polls bring it: a
// heartbeat while the person reads moves it; who holds the task stays as
// they saw it.
func TestTheDialogsLeaseLineStaysLive(t *testing.T) {
	r := newRig(t)
	r.size(120, 40)
	r.selectKey(leasesView, "TASK-4")
	r.press("r", "enter")
	if !strings.Contains(r.screen(), "lease    12:00 left") {
		t.Fatalf("the lease as seen:\n%s", r.screen())
	}
	seen := r.get("4")
	if _, err := r.prod.Heartbeat(t.Context(), "4", seen.Claim().Token, 30*time.Minute); err != nil {
		t.Fatal(err)
	}
	r.poll()
	if s := r.screen(); !strings.Contains(s, "lease    30:00 left") || !strings.Contains(s, "AGENT alpha") {
		t.Fatalf("the lease line did not follow the heartbeat:\n%s", s)
	}
}

// Sources unreachable from the start reach the top bar by name at 60 and
// 80 columns, each state in one word everywhere.
func TestUnreachableSourcesAreNamedInANarrowTopBar(t *testing.T) {
	r := newRig(t)
	r.sick(model.CodeAPIError, "dial tcp: connection refused")
	for _, w := range []int{60, 80} {
		r.size(w, 24)
		top := topLines(r.screen())
		if !strings.Contains(top, "PROD, STAGING, ARCHIVE UNREACHABLE") || !strings.Contains(top, "N3 DOWN") {
			t.Fatalf("%d columns: the unreachable sources and the DOWN node are not all named: %q", w, top)
		}
	}
	if s := r.screen(); !strings.Contains(s, "prod unreachable") || strings.Contains(s, "degraded") {
		t.Fatalf("one word for an unreachable source everywhere:\n%s", s)
	}
}
