package sourcetest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// testReap is ntask 0.5's `reap` as claimdeck applies it: only an agent's
// lease that ended a grace ago goes back to the queue; a live lease and
// one within the grace stay; a claim re-taken after the reap read the
// queue is never overwritten; each reap is journaled and left in the
// task's trail naming the dead holder.
func testReap(t *testing.T, k *kit) {
	ctx := k.ctx(t)
	grace := model.DefaultPolicy().Grace
	journal := filepath.Join(t.TempDir(), "audit.jsonl")
	j, err := sources.OpenJournal(journal)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = j.Close() })
	desk := &sources.Desk{Actor: "reaper", Journal: j, Now: k.now}
	read := func() []*model.Task {
		t.Helper()
		d, err := k.src.Poll(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		return d.Tasks
	}

	dead := k.create(t, sources.NewTask{Title: "its agent died"})
	k.claim(t, dead.ID, "SANDMAN")
	raced := k.create(t, sources.NewTask{Title: "its agent died, and another will take it"})
	k.claim(t, raced.ID, "MORPHEUS")
	k.advance(t, dead.ID, 20*time.Minute+grace/2)
	if k.clock == nil {
		k.advance(t, raced.ID, 20*time.Minute+grace/2)
	}
	live := k.create(t, sources.NewTask{Title: "its agent is working"})
	k.claim(t, live.ID, "ORACLE")

	if got := desk.Reap(ctx, k.src, read(), grace, false); len(got) != 0 {
		t.Fatalf("within the grace the reap took %d tasks, want none: %+v", len(got), got)
	}
	k.advance(t, dead.ID, grace)
	if k.clock == nil {
		k.advance(t, raced.ID, grace)
	}

	seen := read()
	if dry := desk.Reap(ctx, k.src, seen, grace, true); len(dry) != 2 || dry[0].Applied || dry[1].Applied {
		t.Fatalf("a dry run past the grace = %+v, want the two dead claims listed and none applied", dry)
	}
	if got := k.get(t, dead.ID); got.State != model.StateClaimed || got.Claim().Name != "SANDMAN" {
		t.Fatalf("a dry run changed the task: %s", describe(got))
	}

	// The race, injected between the reap's read and its write: another
	// agent takes the dead holder's task, as `claim` may a grace after.
	retaken := k.claim(t, raced.ID, "HYPNOS")
	got := desk.Reap(ctx, k.src, seen, grace, false)
	byID := map[string]sources.Reaping{}
	for _, r := range got {
		byID[r.Task.ID] = r
	}
	if len(got) != 2 || !byID[dead.ID].Applied {
		t.Fatalf("the reap past the grace = %+v, want the dead claim reaped", got)
	}
	wantCode(t, "a reap of a claim re-taken after its read", byID[raced.ID].Err, model.CodeConflict)
	if now := k.get(t, raced.ID); now.Claim().Name != "HYPNOS" || now.Claim().Token != retaken.Claim().Token || now.State != model.StateClaimed {
		t.Fatalf("the reap overwrote a claim re-taken after its read: %s", describe(now))
	}
	if now := k.get(t, live.ID); now.State != model.StateClaimed || now.Claim().Name != "ORACLE" {
		t.Fatalf("the reap touched a live lease: %s", describe(now))
	}
	after := k.get(t, dead.ID)
	if after.State != model.StateQueued || after.Held() || after.Claim().Token != "" {
		t.Fatalf("a reaped task is %s token %q, want back in the queue and free", describe(after), after.Claim().Token)
	}
	if !model.Reaped(byID[dead.ID].Task, after, k.now()) {
		t.Fatalf("the model does not read the reap as one: before %s, after %s", describe(byID[dead.ID].Task), describe(after))
	}
	if !slices.ContainsFunc(after.More().History, func(e model.Event) bool {
		return e.Actor == "reaper" && strings.HasPrefix(e.Reason, "reap: the lease of SANDMAN ended")
	}) {
		t.Fatalf("the trail has no reap naming the dead holder: %+v", after.More().History)
	}
	log, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), `"action":"reap"`) || !strings.Contains(string(log), `"result":"applied"`) ||
		!strings.Contains(string(log), `"result":"CONFLICT"`) {
		t.Fatalf("the audit log lacks the reap and its refusal:\n%s", log)
	}
}
