package hub_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/sqlstore"
)

// The hub over a real SQLite queue: changes written by agents show up in
// snapshots, and human actions go through the desk to the database.
func TestHubOverSQLite(t *testing.T) {
	ctx := context.Background()
	store, err := sqlstore.Open(ctx, sqlstore.Config{Name: "local", Driver: "sqlite", Path: filepath.Join(t.TempDir(), "q.db"), Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	if _, err := store.Create(ctx, sources.NewTask{ID: "t1", Title: "index the logs"}); err != nil {
		t.Fatal(err)
	}
	journal, err := sources.OpenJournal(filepath.Join(t.TempDir(), "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = journal.Close() })
	h := hub.New(hub.Config{Feeds: []hub.Feed{{Source: store, Every: 20 * time.Millisecond}}, Desk: &sources.Desk{Actor: "alice", Journal: journal}})
	hctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { h.Run(hctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	task := func(s hub.Snapshot) *model.Task {
		for _, t := range s.Sources[0].Tasks {
			if t.ID == "t1" {
				return t
			}
		}
		return nil
	}
	await := func(what string, ok func(hub.Snapshot) bool) hub.Snapshot {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case s := <-h.Snapshots():
				if ok(s) {
					return s
				}
			case <-deadline:
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	await("the first load", func(s hub.Snapshot) bool { return task(s) != nil })

	if _, err := store.Claim(ctx, "t1", sources.ClaimRequest{Agent: "SANDMAN", RunID: "r1"}); err != nil {
		t.Fatal(err)
	}
	s := await("the agent's claim", func(s hub.Snapshot) bool { t := task(s); return t != nil && t.Claim.Name == "SANDMAN" })
	seen := task(s)

	if _, err := store.Heartbeat(ctx, "t1", seen.Claim.Token, time.Hour); err != nil {
		t.Fatal(err)
	}
	_, err = h.Apply(ctx, sources.Request{Action: model.ActionForceRelease, Seen: seen})
	if model.CodeOf(err) != model.CodeConflict || !strings.Contains(err.Error(), "heartbeat") {
		t.Fatalf("release on a stale view: %v; want CONFLICT saying the lease was extended", err)
	}
	s = await("the heartbeat", func(s hub.Snapshot) bool { t := task(s); return t != nil && t.Version != seen.Version })
	after, err := h.Apply(ctx, sources.Request{Action: model.ActionTakeover, Seen: task(s)})
	if err != nil || after.Claim.Holder != model.HolderHuman {
		t.Fatalf("takeover: %v %+v", err, after)
	}
	await("the takeover", func(s hub.Snapshot) bool { t := task(s); return t != nil && t.Claim.Holder == model.HolderHuman })
}
