package stats

import (
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/hub"
)

// FuzzTracker feeds the tracker tasks as a backend may return them — any
// state, holder, clock skew or empty name — as a first load and as a
// transition, and checks every report stays within the window's bounds.
func FuzzTracker(f *testing.F) {
	f.Add(uint8(model.StateClaimed), uint8(model.HolderAgent), int64(time.Minute), int64(0), int64(time.Hour), "SANDMAN", "ops")
	f.Add(uint8(model.StateDone), uint8(model.HolderNone), int64(0), int64(-time.Hour), int64(2*time.Hour), "", "")
	f.Add(uint8(200), uint8(9), int64(-5*time.Minute), int64(59*time.Minute), int64(-time.Hour), "HUMAN:alice", "n")
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, state, holder uint8, claimedAgo, editedAgo, createdAgo int64, name, node string) {
		at := func(ago int64) time.Time { return now.Add(-time.Duration(ago)) }
		task := (&model.Task{Source: "src", ID: "1", State: model.State(state), CreatedAt: model.StampOf(at(createdAgo)), EditedAt: model.StampOf(at(editedAgo))}).WithClaim(model.Claim{Holder: model.HolderKind(holder), Name: name, Node: node, ClaimedAt: model.StampOf(at(claimedAgo)), HeartbeatAt: model.StampOf(at(editedAgo))})
		before := (&model.Task{Source: "src", ID: "1", State: model.StateClaimed}).WithClaim(model.Claim{Holder: model.HolderAgent, Name: node, ClaimedAt: model.StampOf(at(createdAgo))})
		tr := New()
		src := []hub.SourceState{{Name: "src", Updated: now, Tasks: hub.TasksOf([]*model.Task{task})}}
		tr.Observe(hub.Snapshot{At: now, Sources: src})
		tr.Observe(hub.Snapshot{At: now, Sources: src, Transitions: []hub.Transition{{At: now, Before: before, After: task}}})
		r := tr.Report(now)
		for _, g := range append([]Group{r.Overall}, append(r.Sources, append(r.Agents, r.Nodes...)...)...) {
			for _, s := range []Series{g.Claims, g.Completions, g.Failures, g.Blocks} {
				if len(s.PerMinute) != Minutes || s.Total < 0 || s.Total > 2 {
					t.Fatalf("series %+v", s)
				}
			}
			for _, q := range []Quantiles{g.QueueWait, g.WorkTime, g.LeaseAge, g.HeartbeatGap} {
				if q.P50 < 0 || q.P95 < q.P50 {
					t.Fatalf("quantiles %+v", q)
				}
			}
		}
	})
}
