package hub

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/sourcetest/memsource"
)

// TestSnapshotCarriesTheMeshAndEnforcement: node health reaches the
// dashboard only through snapshots, classified there with the holders
// mapping; enforcement is handed the same snapshot, and what it reports
// comes back in the next one.
func TestSnapshotCarriesTheMeshAndEnforcement(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		now := time.Now()
		mem := memsource.NewMemory("q")
		mem.Put((&model.Task{ID: "w7", State: model.StateClaimed}).WithClaim(model.Claim{Holder: model.HolderAgent, Name: "worker-7", Token: "tok", ClaimedAt: model.StampOf(now), Expires: model.StampOf(now.Add(time.Hour))}))
		var mu sync.Mutex
		status := model.NodeHealthy
		var enforced []Snapshot
		ctx, cancel := context.WithCancel(context.Background())
		h := New(Config{
			Feeds: []Feed{{Source: mem, Every: time.Hour}},
			Nodes: func() []model.Node {
				mu.Lock()
				defer mu.Unlock()
				return []model.Node{{Name: "ORACLE", Status: status}}
			},
			Holders: map[string]string{"worker-7": "oracle"},
			Enforce: func(_ context.Context, s Snapshot) []Notice {
				enforced = append(enforced, s)
				return []Notice{{At: s.At, Source: "q", Task: "w7", What: "marked stale"}}
			},
			EnforceEvery: time.Minute,
		})
		done := make(chan struct{})
		go func() { h.Run(ctx); close(done) }()
		defer func() { cancel(); <-done }()

		synctest.Wait()
		s := <-h.Snapshots()
		task := find(s, "q", "w7")
		if c := s.Classify(task, time.Now()); c.Stale() || c.Placement.Node != "ORACLE" {
			t.Fatalf("healthy node: %+v, want a running lease placed on ORACLE", c)
		}
		mu.Lock()
		status = model.NodeDown
		mu.Unlock()
		time.Sleep(DefaultNodesEvery)
		synctest.Wait()
		s = <-h.Snapshots()
		if c := s.Classify(task, time.Now()); c.Cause != model.CauseNodeDown || c.Reason != "node ORACLE DOWN" {
			t.Fatalf("after ORACLE went DOWN: %+v, want stale by node DOWN", c)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		s = <-h.Snapshots()
		if len(enforced) != 1 || !enforced[0].Mesh.Down("ORACLE") {
			t.Fatalf("enforcement ran %d times; it must see the snapshot with ORACLE DOWN", len(enforced))
		}
		if len(s.Notices) != 1 || s.Notices[0].What != "marked stale" {
			t.Fatalf("notices in the snapshot after enforcement: %+v", s.Notices)
		}
	})
}

// Activity names what the on-call person must know first: a source that
// stopped answering and when it came back, a node that went DOWN and UP.
func TestActivityRecordsSourceOutagesAndNodesGoingDownAndUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memsource.NewMemory("prod")
		mem.Put(&model.Task{ID: "a", State: model.StateQueued})
		var mu sync.Mutex
		status := model.NodeHealthy
		h := start(t, Config{
			Feeds: []Feed{{Source: mem, Every: 5 * time.Millisecond}}, MaxBackoff: 20 * time.Millisecond,
			Nodes: func() []model.Node {
				mu.Lock()
				defer mu.Unlock()
				return []model.Node{{Name: "ORACLE_LOCAL", Status: status, LastErr: "dial tcp: connection refused"}}
			},
		})
		var seen []string
		activity := func(want string) func(Snapshot) bool {
			return func(s Snapshot) bool {
				for _, n := range s.Notices {
					seen = append(seen, n.By+"|"+n.Source+"|"+n.What)
				}
				return slices.ContainsFunc(seen, func(e string) bool { return strings.HasPrefix(e, want) })
			}
		}
		await(t, h, "the first load", func(s Snapshot) bool { return s.Sources[0].Status == StatusOK })
		mem.FailPolls(errors.New("connection refused"))
		await(t, h, "the outage in Activity", activity("hub|prod|source unreachable: "))
		mem.FailPolls(nil)
		await(t, h, "the recovery in Activity", activity("hub|prod|source reachable again after "))
		mu.Lock()
		status = model.NodeDown
		mu.Unlock()
		await(t, h, "the node DOWN in Activity", activity("mesh||node ORACLE_LOCAL DOWN: dial tcp: connection refused"))
		mu.Lock()
		status = model.NodeHealthy
		mu.Unlock()
		await(t, h, "the node UP in Activity", activity("mesh||node ORACLE_LOCAL UP again"))
		if n := len(slices.DeleteFunc(slices.Clone(seen), func(e string) bool { return !strings.Contains(e, "unreachable") })); n != 1 {
			t.Fatalf("one outage noted %d times: %q", n, seen)
		}
	})
}
