package tui

// What the dashboard says when something is wrong: a degraded or
// unreachable source, the top bar's alarm, no mesh, broken tasks.

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/hub"
)

func TestDegradedSourceBannerNeverCoversTheTable(t *testing.T) {
	r := newRig(t)
	healthy := r.screen()
	s := r.m.board.snap
	s.Sources = slices.Clone(s.Sources)
	s.Sources[1].Status, s.Sources[1].Err, s.Sources[1].Since = hub.StatusDegraded, "dial tcp: connection refused", t0.Add(-2*time.Minute)
	r.m.Update(snapshotMsg(s))
	screen := r.screen()
	hl, sl := strings.Split(healthy, "\n"), strings.Split(screen, "\n")
	if len(hl) != len(sl) {
		t.Fatalf("the banner changed the screen's height: %d → %d lines", len(hl), len(sl))
	}
	// Line 0 carries the alarm; staging's rows are marked as old data, and
	// every row stays on its line.
	for i := 3; i < len(hl)-3; i++ {
		f := strings.Fields(hl[i])
		if len(f) < 2 {
			continue
		}
		if !strings.Contains(sl[i], " "+f[1]+" ") {
			t.Fatalf("line %d lost its row under the banner:\n%q\n%q", i, hl[i], sl[i])
		}
		if strings.Contains(hl[i], "staging") != strings.Contains(sl[i], "⚠") {
			t.Fatalf("line %d: only the degraded source's rows are marked:\n%q", i, sl[i])
		}
	}
	if !strings.Contains(screen, "staging unreachable for 2m: dial tcp: connection refused") {
		t.Fatalf("no banner:\n%s", screen)
	}
	if top := topLines(screen); !strings.Contains(top, "STAGING UNREACHABLE") {
		t.Fatalf("the top bar does not name the unreachable source: %q", top)
	}
	if !strings.Contains(screen, "staging unreachable") {
		t.Fatalf("the status bar does not say staging is unreachable:\n%s", screen)
	}
}

// sick makes every source fail its polls, as the hub reports it.
func (r *rig) sick(code model.Code, err string) {
	s := r.m.board.snap
	s.Sources = slices.Clone(s.Sources)
	for i := range s.Sources {
		s.Sources[i].Status, s.Sources[i].Err, s.Sources[i].Since = hub.StatusDegraded, err, t0.Add(-7*time.Minute)
		s.Sources[i].Failures, s.Sources[i].Tasks = 4, hub.Tasks{}
		s.Sources[i].Health = hub.SourceHealth{Code: code, Retry: t0.Add(16 * time.Second)}
	}
	r.m.Update(snapshotMsg(s))
}

func TestAnUnreachableSourceFillsItsViewsWithWhatIsWrong(t *testing.T) {
	for _, c := range []struct {
		code model.Code
		word string
	}{{model.CodeAPIError, "UNREACHABLE"}, {model.CodeMisconfigured, "MISCONFIGURED"}} {
		r := newRig(t)
		r.sick(c.code, "dial tcp 10.0.0.5:5432: connect: connection refused")
		for _, view := range []string{"1", "2", "3", "6", "7"} {
			r.press(view)
			screen := r.screen()
			for _, want := range []string{"prod " + c.word + " since 02:53:00 (7m ago), 4 failed polls", "last error: dial tcp 10.0.0.5:5432", "next retry in 16s", "staging " + c.word} {
				if !strings.Contains(screen, want) {
					t.Fatalf("view %s lacks %q:\n%s", view, want, screen)
				}
			}
			for _, v := range views {
				quiet := v.empty
				if strings.Contains(screen, quiet) {
					t.Fatalf("view %s says %q while its sources are down:\n%s", view, quiet, screen)
				}
			}
		}
	}
}

func TestTheTopBarNamesTheWorstThingFromAnyView(t *testing.T) {
	r := newRig(t)
	r.size(120, 40)
	for k := range viewCount {
		r.press(fmt.Sprint(int(k) + 1))
		top := topLines(r.screen())
		if !strings.Contains(top, "N3 DOWN · 1 ESCALATED · 1 URGENT · 1 STALE") {
			t.Fatalf("view %s: the top bar does not carry the alarm: %q", views[k].title, top)
		}
	}
	r.size(80, 24)
	if top := topLines(r.screen()); !strings.Contains(top, "N3 DOWN · 1 ESCALATED · 1 URGENT · 1 STALE") {
		t.Fatalf("at 80 columns the whole alarm must stay, the tabs shortened: %q", top)
	}
	r.nodes = nil
	r.m.Update(tickMsg{})
	r.prod.Remove("5")
	r.prod.Remove("s2")
	r.staging.Remove("s2")
	r.poll()
	if top := topLines(r.screen()); strings.Contains(top, "ESCALATED") || strings.Contains(top, "DOWN") {
		t.Fatalf("the alarm stays after its cause is gone: %q", top)
	}
}

func TestObservedTransitionsShowInActivity(t *testing.T) {
	r := newRig(t)
	before := r.get("1")
	after := *before
	after.State = model.StateClaimed
	after.SetClaim(model.Claim{Holder: model.HolderAgent, Name: "alpha"})
	s := r.m.board.snap
	s.Transitions = []hub.Transition{{At: t0, Before: before, After: &after}}
	r.m.Update(snapshotMsg(s))
	r.press("5")
	if row := rowOf(t, r, "TASK-1"); !strings.Contains(row, "queued → claimed by AGENT alpha") {
		t.Fatalf("activity row: %q", row)
	}
}

func TestNoMeshSaysSoPlainly(t *testing.T) {
	r := newRig(t)
	r.nodes = nil
	r.poll()
	r.press("4")
	if !strings.Contains(r.screen(), "No mesh is configured") {
		t.Fatalf("nodes view without a mesh:\n%s", r.screen())
	}
}

func TestBrokenTasksAreShownButNeverActedOn(t *testing.T) {
	r := newRig(t)
	r.prod.Put(((&model.Task{ID: "bad", Key: "BAD-1", State: model.StateClaimed}).WithClaim(model.Claim{Holder: model.HolderAgent, Name: "x"})).WithMore(model.More{Problem: "truncated lock file"}))
	r.poll()
	r.selectKey(staleView, "BAD-1")
	if row := rowOf(t, r, "BAD-1"); !strings.Contains(row, "BROKEN") || !strings.Contains(row, "truncated lock") {
		t.Fatalf("broken row: %q", row)
	}
	r.press("r")
	if len(r.m.dialogs) != 0 || !strings.Contains(r.screen(), "cannot act on BAD-1") {
		t.Fatalf("an action on a broken task was offered:\n%s", r.screen())
	}
}
