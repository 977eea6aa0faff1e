package hub

import (
	"context"
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
		mem.Put(&model.Task{ID: "w7", State: model.StateClaimed,
			Claim: model.Claim{Holder: model.HolderAgent, Name: "worker-7", Token: "tok", ClaimedAt: now, Expires: now.Add(time.Hour)}})
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
