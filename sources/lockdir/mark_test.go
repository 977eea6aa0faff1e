package lockdir

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// An agent on a node that went DOWN holds a live lease: the sweep marks it
// stale in the lock file, its lease ends, another node's agent claims it,
// and the dead agent's token is fenced out.
func TestMarkEscalationEndsTheLeaseOfADownNodesClaim(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clock := time.Now()
	src, err := Open(Config{Name: "locks", Path: dir, Lease: time.Hour, Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, err := src.Create(ctx, sources.NewTask{ID: "apply-prod", Title: "Apply prod"}); err != nil {
		t.Fatal(err)
	}
	held, err := src.Claim(ctx, "apply-prod", sources.ClaimRequest{Agent: "alpha-1", Node: "ALPHA"})
	if err != nil {
		t.Fatal(err)
	}
	lockPath := filepath.Join(dir, "apply-prod.lock")
	before, _ := os.ReadFile(lockPath)
	if err := src.MarkEscalation(ctx, "apply-prod", "not-the-token", model.LevelStale); !errors.Is(err, model.ErrLostLock) {
		t.Fatalf("wrong token: %v, want LOST_LOCK", err)
	}
	if after, _ := os.ReadFile(lockPath); string(after) != string(before) {
		t.Fatal("a refused mark rewrote the lock file")
	}
	if err := src.MarkEscalation(ctx, "apply-prod", held.Claim().Token, model.LevelStale); err != nil {
		t.Fatal(err)
	}
	got, err := src.Get(ctx, "apply-prod")
	if err != nil {
		t.Fatal(err)
	}
	if got.Escalated != model.LevelStale || got.State != model.StateClaimed || got.Claim().Expires.Time().After(time.Now()) {
		t.Fatalf("after the mark: level %s, state %s, lease until %s", got.Escalated, got.State, got.Claim().Expires)
	}
	if h := got.More().History[len(got.More().History)-1]; h.Action != "escalate" || h.Detail != "level stale" {
		t.Errorf("last history entry %+v", h)
	}
	data, _ := os.ReadFile(lockPath)
	for _, field := range []string{`"task_id": "apply-prod"`, `"agent": "alpha-1"`, `"claimed_at"`, `"escalation": "stale"`, `"node": "ALPHA"`} {
		if !strings.Contains(string(data), field) {
			t.Errorf("the marked lock file lacks %s:\n%s", field, data)
		}
	}

	// Marking again, or lower, changes nothing.
	if err := src.MarkEscalation(ctx, "apply-prod", held.Claim().Token, model.LevelUrgent); err != nil {
		t.Fatal(err)
	}
	urgent, _ := os.ReadFile(lockPath)
	if err := src.MarkEscalation(ctx, "apply-prod", held.Claim().Token, model.LevelStale); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(lockPath); string(again) != string(urgent) {
		t.Error("a lower mark rewrote the lock file")
	}

	if _, err := src.Claim(ctx, "apply-prod", sources.ClaimRequest{Agent: "charlie-1", Node: "CHARLIE"}); !errors.Is(err, model.ErrConflict) {
		t.Fatalf("a claim within the grace after the mark = %v, want CONFLICT", err)
	}
	clock = clock.Add(model.DefaultPolicy().Grace)
	taken, err := src.Claim(ctx, "apply-prod", sources.ClaimRequest{Agent: "charlie-1", Node: "CHARLIE"})
	if err != nil {
		t.Fatalf("the marked claim is not claimable a grace after the mark: %v", err)
	}
	if taken.Escalated != model.LevelNone {
		t.Errorf("the new claim inherits level %s", taken.Escalated)
	}
	if _, err := src.Heartbeat(ctx, "apply-prod", held.Claim().Token, time.Hour); !errors.Is(err, model.ErrLostLock) {
		t.Errorf("the dead agent's heartbeat: %v, want LOST_LOCK", err)
	}
	if err := src.MarkEscalation(ctx, "apply-prod", held.Claim().Token, model.LevelNotify); !errors.Is(err, model.ErrLostLock) {
		t.Errorf("mark with the old token: %v, want LOST_LOCK", err)
	}

	human, err := src.Takeover(ctx, "apply-prod", sources.Human{Actor: "alice", Expect: taken.Version})
	if err != nil {
		t.Fatal(err)
	}
	if err := src.MarkEscalation(ctx, "apply-prod", human.Claim().Token, model.LevelStale); !errors.Is(err, model.ErrLostLock) {
		t.Errorf("marking a HUMAN claim: %v, want LOST_LOCK", err)
	}
	for _, bad := range []string{"../apply-prod", "a/b", ""} {
		if err := src.MarkEscalation(ctx, bad, "tok", model.LevelStale); err == nil {
			t.Errorf("id %q accepted", bad)
		}
	}
	if err := src.MarkEscalation(ctx, "apply-prod", human.Claim().Token, model.Level(9)); model.CodeOf(err) != model.CodeMisconfigured {
		t.Errorf("level 9: %v", err)
	}
}
