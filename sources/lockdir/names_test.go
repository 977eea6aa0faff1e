package lockdir

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// A lock an older claimdeck wrote for an agent that named itself
// HUMAN:alice (holder_kind AGENT, a run, a 20 minute lease) is the agent's
// claim: it expires and is rescued like any other. A person's takeover is
// still a person's, and so is a hand-written lock naming HUMAN:bob with no
// run and no lease.
func TestAnAgentNamedHumanIsReadAsTheAgentItIs(t *testing.T) {
	src := openTemp(t, 20*time.Minute)
	dir := src.cfg.Path
	ctx := context.Background()
	then := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	write := func(id, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, id+".lock"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stamp := func(at time.Time) string { return at.Format(time.RFC3339) }
	write("old-binary", `{"task_id":"old-binary","agent":"HUMAN:alice","holder_kind":"AGENT","run_id":"r-1","lock_token":"5b0f4c8e-1111-4a2b-9c3d-222233334444","claimed_at":"`+
		stamp(then)+`","expires_at":"`+stamp(then.Add(20*time.Minute))+`"}`)
	write("by-hand", `{"task_id":"by-hand","agent":"HUMAN:bob","claimed_at":"`+stamp(then)+`"}`)

	got, err := src.Get(ctx, "old-binary")
	if err != nil {
		t.Fatal(err)
	}
	if got.Claim().Holder != model.HolderAgent || got.Claim().Expires.IsZero() {
		t.Fatalf("an agent's lock naming HUMAN:alice reads as %s holder, expiring %v: want the agent's, with its lease", got.Claim().Holder, got.Claim().Expires)
	}
	if !model.Rescuable(got, time.Now(), time.Minute) {
		t.Fatalf("the agent's dead lease must be rescuable: %+v", got.Claim())
	}
	if _, err := src.Claim(ctx, "old-binary", sources.ClaimRequest{Agent: "ORACLE"}); err != nil {
		t.Fatalf("rescue of the dead agent's claim: %v", err)
	}
	if hand, err := src.Get(ctx, "by-hand"); err != nil || hand.Claim().Holder != model.HolderHuman {
		t.Fatalf("a hand-written HUMAN:bob lock with no run or lease: %+v, %v", hand.Claim(), err)
	}
}

// A task's file paths are what filepath.Join makes of them, whatever the
// id: the one-allocation path for plain ids, Join itself for the rest.
func TestTaskPathsAreFilepathJoin(t *testing.T) {
	for _, dir := range []string{"/", "/srv/project/.locks", "locks", ""} {
		s := &Source{dir: dir, archive: filepath.Join(dir, "archive")}
		for _, id := range []string{"design-vpc-module", "", "a.b", "..", "../x", "a/../../b", `a\b`, "a//b", "é"} {
			for k := kindLock; k < numKinds; k++ {
				want := filepath.Join(dir, id+k.suffix())
				if k == kindArchivedDone || k == kindArchivedFailed {
					want = filepath.Join(dir, "archive", id+k.suffix())
				}
				if got := s.path(id, k); got != want {
					t.Errorf("path(%q, %s) in %q = %q, want %q", id, kindNames[k], dir, got, want)
				}
				if got, want := s.heldPath(id, k), filepath.Join(dir, heldPrefix+id+k.suffix()); got != want {
					t.Errorf("heldPath(%q, %s) in %q = %q, want %q", id, kindNames[k], dir, got, want)
				}
			}
		}
	}
}
