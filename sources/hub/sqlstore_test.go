package hub

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
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
	h := start(t, Config{Feeds: []Feed{{Source: store, Every: 20 * time.Millisecond}}, Desk: &sources.Desk{Actor: "alice", Journal: journal}})
	task := func(s Snapshot) *model.Task { return find(s, "local", "t1") }
	await(t, h, "the first load", func(s Snapshot) bool { return task(s) != nil })

	if _, err := store.Claim(ctx, "t1", sources.ClaimRequest{Agent: "SANDMAN", RunID: "r1"}); err != nil {
		t.Fatal(err)
	}
	s := await(t, h, "the agent's claim", func(s Snapshot) bool { t := task(s); return t != nil && t.Claim().Name == "SANDMAN" })
	seen := task(s)

	if _, err := store.Heartbeat(ctx, "t1", seen.Claim().Token, time.Hour); err != nil {
		t.Fatal(err)
	}
	// A heartbeat renews the lease the person saw ending: the takeover
	// decided on it refuses; decided on the renewed lease, it applies.
	if _, err := h.Apply(ctx, sources.Request{Action: model.ActionTakeover, Seen: seen}); model.CodeOf(err) != model.CodeConflict || !strings.Contains(err.Error(), "renewed since you looked") {
		t.Fatalf("takeover after the holder heartbeated: %v; want CONFLICT, renewed since you looked", err)
	}
	renewed, err := store.Get(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	after, err := h.Apply(ctx, sources.Request{Action: model.ActionTakeover, Seen: renewed})
	if err != nil || after.Claim().Holder != model.HolderHuman {
		t.Fatalf("takeover of the lease as now shown: %v %+v", err, after)
	}
	// The agent's claim is no longer what the screen shows: a release refuses.
	_, err = h.Apply(ctx, sources.Request{Action: model.ActionForceRelease, Seen: seen, Reason: "wedged"})
	if model.CodeOf(err) != model.CodeConflict || !strings.Contains(err.Error(), "holder AGENT SANDMAN → HUMAN HUMAN:alice") {
		t.Fatalf("release on a stale view: %v; want CONFLICT naming the new holder", err)
	}
	await(t, h, "the takeover", func(s Snapshot) bool { t := task(s); return t != nil && t.Claim().Holder == model.HolderHuman })
}
