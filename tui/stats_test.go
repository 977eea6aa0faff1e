package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/hub"
)

func TestTheStatsViewShowsACompletionTheHubSawWhenItIsOpened(t *testing.T) {
	r := newRig(t)
	r.press("8")
	all := r.m.board.panes[statsView].stats[0]
	if all.kind != "all" || all.g.Completions.Total != 0 {
		t.Fatalf("first row %s with %d completions, want everything with none", all.kind, all.g.Completions.Total)
	}
	claimed := (&model.Task{Source: "prod", ID: "9", State: model.StateClaimed}).WithClaim(model.Claim{Holder: model.HolderAgent, Name: "alpha", Node: "n1", ClaimedAt: model.StampOf(r.now.Add(-7 * time.Minute))})
	done := &model.Task{Source: "prod", ID: "9", State: model.StateDone}
	s := r.m.board.snap
	s.At, s.Transitions = r.now, []hub.Transition{{At: r.now, Before: claimed, After: done}}
	r.tracker.Observe(s)
	r.press("1", "8")
	all = r.m.board.panes[statsView].stats[0]
	if all.g.Completions.Total != 1 || all.g.WorkTime.P50 != 420 {
		t.Fatalf("after alpha's completion: %d completions, work p50 %v s, want 1 and 420", all.g.Completions.Total, all.g.WorkTime.P50)
	}
	line := strings.Split(r.screen(), "\n")[3]
	if !strings.Contains(line, "every source") || !strings.Contains(line, "█    1") {
		t.Errorf("the first row does not show the completion: %q", line)
	}
}
