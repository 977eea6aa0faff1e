package mesh

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/notion"
	"github.com/claimdeck/claimdeck/sources/notion/notionemu"
)

// ntaskSource is a seed 002 (ntask) Notion database on the strict emulator,
// over real HTTP.
func ntaskSource(t *testing.T) *notion.Source {
	t.Helper()
	emu := notionemu.New(notionemu.Options{RateLimit: &notionemu.RateLimit{}})
	srv := httptest.NewServer(emu)
	t.Cleanup(srv.Close)
	const token = "secret_rescue_test_token_0123456789abcdef"
	emu.AddToken(token)
	db, err := emu.CreateDatabase(notionemu.PresetNtask(), token)
	if err != nil {
		t.Fatal(err)
	}
	src, err := notion.Open(context.Background(), notion.Config{Name: "team", Token: token, DatabaseID: db, Preset: notion.PresetNtask,
		BaseURL: srv.URL, Rate: -1, Settle: 10 * time.Millisecond, RetryBase: 5 * time.Millisecond, RetryMax: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	return src
}

// Seed 002 keeps a task under an expired claim IN_PROGRESS, so `next`
// never hands it out: the sweep puts it back, a grace after the lease
// ended, audited with the dead holder's name.
func TestSweepPutsBackADeadHoldersNotionTask(t *testing.T) {
	ctx := context.Background()
	src := ntaskSource(t)
	task, err := src.Create(ctx, sources.NewTask{Title: "Write the release notes"})
	if err != nil {
		t.Fatal(err)
	}
	held, err := src.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "SANDMAN", RunID: "run-1"})
	if err != nil {
		t.Fatal(err)
	}
	grace := model.DefaultPolicy().Grace
	at := func(d time.Duration) func() time.Time {
		return func() time.Time { return held.Claim().Expires.Time().Add(d) }
	}
	sweep := func(now func() time.Time, dry bool) SweepReport {
		sw := &Sweeper{Policy: model.DefaultPolicy(), Now: now, DryRun: dry}
		rep := sw.Sweep(ctx, src)
		if len(rep.Errors) > 0 {
			t.Fatal(rep.Errors)
		}
		return rep
	}

	if rep := sweep(at(grace/2), false); len(rep.Rescues) != 0 {
		t.Fatalf("within the grace the sweep rescued %+v", rep.Rescues)
	}
	if rep := sweep(at(grace), true); len(rep.Rescues) != 1 || rep.Rescues[0].Applied || rep.Rescues[0].Holder != "SANDMAN" {
		t.Fatalf("a dry run a grace after the lease: %+v, want one rescue of SANDMAN's task, not applied", rep.Rescues)
	}
	if got, _ := src.Get(ctx, task.ID); got.State != model.StateClaimed || got.Claim().Token != held.Claim().Token {
		t.Fatalf("the dry run changed the task: %s held by %s", got.State, got.Claim().Name)
	}

	rep := sweep(at(grace), false)
	if len(rep.Rescues) != 1 || !rep.Rescues[0].Applied || rep.Rescues[0].Err != nil {
		t.Fatalf("a grace after the lease the sweep rescued %+v, want SANDMAN's task put back", rep.Rescues)
	}
	if len(rep.Marks) != 0 {
		t.Errorf("the ladder also marked the rescued task: %+v", rep.Marks)
	}
	got, err := src.Get(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != model.StateQueued || got.Held() {
		t.Fatalf("after the rescue the task is %s held by %q, want queued and free", got.State, got.Claim().Name)
	}
	if !slices.ContainsFunc(got.More().History, func(e model.Event) bool {
		return e.Actor == rescuer && strings.Contains(e.Reason, "SANDMAN")
	}) {
		t.Fatalf("the trail has no rescue by the sweep naming SANDMAN: %+v", got.More().History)
	}
	if next, err := src.Next(ctx, "ORACLE"); err != nil || next == nil || next.ID != task.ID {
		t.Fatalf("next after the rescue = %v, %v; want the task", next, err)
	}
	if _, err := src.Heartbeat(ctx, task.ID, held.Claim().Token, 0); model.CodeOf(err) != model.CodeLostLock {
		t.Fatalf("the dead holder's heartbeat after the rescue: %v, want LOST_LOCK", err)
	}
}
