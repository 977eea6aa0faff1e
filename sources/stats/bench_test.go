package stats

import (
	"strconv"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/hub"
)

// fleet100k is a snapshot of 100,000 tasks: 10,000 claimed by 50 agents on
// 5 nodes, 20,000 finished within the hour, the rest queued.
func fleet100k(now time.Time) hub.Snapshot {
	tasks := make([]*model.Task, 100_000)
	for i := range tasks {
		t := &model.Task{Source: "prod", ID: strconv.Itoa(i), State: model.StateQueued, CreatedAt: model.StampOf(now.Add(-2 * time.Hour))}
		switch {
		case i%10 == 0:
			t.State = model.StateClaimed
			t.SetClaim(model.Claim{Holder: model.HolderAgent, Name: "agent-" + strconv.Itoa(i%50), Node: "node-" + strconv.Itoa(i%5),
				ClaimedAt: model.StampOf(now.Add(-time.Duration(i%3600) * time.Second)), HeartbeatAt: model.StampOf(now.Add(-time.Duration(i%300) * time.Second))})
		case i%5 == 1:
			t.State, t.EditedAt = model.StateDone, model.StampOf(now.Add(-time.Duration(i%3600)*time.Second))
		}
		tasks[i] = t
	}
	return hub.Snapshot{At: now, Sources: []hub.SourceState{{Name: "prod", Status: hub.StatusOK, Updated: now, Tasks: hub.TasksOf(tasks)}}}
}

// BenchmarkReport100k is one report (the Stats view's second, a scrape,
// `claimdeck stats`) over 100,000 tasks and the hour's 30,000 events.
func BenchmarkReport100k(b *testing.B) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	tr := New()
	tr.Observe(fleet100k(now))
	b.ReportAllocs()
	for b.Loop() {
		tr.Report(now)
	}
}

// BenchmarkCountStates100k is the baseline: the least any report does,
// one pass counting the tasks by state.
func BenchmarkCountStates100k(b *testing.B) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	s := fleet100k(now)
	b.ReportAllocs()
	for b.Loop() {
		var n [model.StateCanceled + 1]int
		for t := range s.Sources[0].Tasks.All() {
			n[t.State]++
		}
	}
}

// BenchmarkObservePoll is what the hub pays, under its lock, to show the
// tracker a poll of 1,000 transitions with 30,000 events already held.
func BenchmarkObservePoll(b *testing.B) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	tr := New()
	s := fleet100k(now)
	tr.Observe(s)
	trs := make([]hub.Transition, 1000)
	for i := range trs {
		before := s.Sources[0].Tasks.At(i * 10)
		after := *before
		after.State = model.StateDone
		trs[i] = hub.Transition{At: now, Before: before, After: &after}
	}
	s.Transitions = trs
	b.ReportAllocs()
	for b.Loop() {
		tr.Observe(s)
	}
}
