package sources_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/lockdir"
)

// TestBulkReleaseOfADeadNodesClaims is the runbook's case on a real SQLite
// queue and a real lock directory: every claim of ORACLE_LOCAL is
// previewed with a person's claim among them, one is heartbeated by its agent after the preview, and the
// bulk force-release applies the others, refuses that one by name with
// what changed, and leaves the human's claim and the other node's alone.
func TestBulkReleaseOfADeadNodesClaims(t *testing.T) {
	ctx := context.Background()
	q := openQueue(t)
	locks, err := lockdir.Open(lockdir.Config{Name: "locks", Path: filepath.Join(t.TempDir(), ".locks")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { locks.Close() })
	byName := map[string]sources.Source{"q": q, "locks": locks}
	claim := func(src sources.Source, title, agent, node string) *model.Task {
		t.Helper()
		task, err := src.Create(ctx, sources.NewTask{Title: title})
		if err != nil {
			t.Fatal(err)
		}
		held, err := src.Claim(ctx, task.ID, sources.ClaimRequest{Agent: agent, Node: node, Lease: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		return held
	}
	a := claim(q, "index shard 1", "worker-7", "ORACLE_LOCAL")
	b := claim(locks, "index shard 2", "worker-9", "ORACLE_LOCAL")
	c := claim(locks, "index shard 3", "worker-7", "ORACLE_LOCAL")
	other := claim(q, "index shard 4", "worker-8", "SANDMAN")
	person := claim(q, "index shard 5", "worker-7", "ORACLE_LOCAL")
	journal, err := sources.OpenJournal(filepath.Join(t.TempDir(), "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	desk := &sources.Desk{Actor: "alice", Journal: journal}
	if person, err = desk.Apply(ctx, q, sources.Request{Action: model.ActionTakeover, Seen: person}); err != nil {
		t.Fatal(err)
	}

	var seen []*model.Task
	for _, src := range byName {
		d, err := src.Poll(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, d.Tasks...)
	}
	f, err := model.ParseFilter("index !node:sandman") // a takeover drops the node: the human's claim is matched by its title
	if err != nil {
		t.Fatal(err)
	}
	selected := f.Select(seen, func(*model.Task) model.Classification { return model.Classification{} }, time.Now())
	req := sources.Request{Action: model.ActionForceRelease, Reason: "node lost"}
	preview := desk.PreviewBulk(req, selected)
	if preview.Count != 4 || preview.Sources["q"] != 2 || preview.Sources["locks"] != 2 || len(preview.Apply) != 3 || len(preview.Refused) != 1 {
		t.Fatalf("preview: %+v", preview)
	}
	if r := preview.Refused[0]; r.Task != person.ID || r.Code != model.CodeConflict || !strings.Contains(r.Reason, "held by HUMAN:alice") {
		t.Fatalf("the human's claim is not refused as held by a person: %+v", preview.Refused)
	}

	// After the operator saw the preview, worker-7 heartbeats (its lease is
	// renewed: the decision no longer stands) and worker-9's task is
	// released and claimed by worker-10 (a new claim: neither does it).
	if _, err := locks.Heartbeat(ctx, c.ID, c.Claim().Token, time.Hour); err != nil {
		t.Fatal(err)
	}
	bNow, err := locks.Get(ctx, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := desk.Apply(ctx, locks, sources.Request{Action: model.ActionForceRelease, Seen: bNow, Reason: "stuck"}); err != nil {
		t.Fatal(err)
	}
	if _, err := locks.Claim(ctx, b.ID, sources.ClaimRequest{Agent: "worker-10", Node: "SANDMAN", Lease: time.Hour}); err != nil {
		t.Fatal(err)
	}
	var progress []int
	sum := desk.ApplyBulk(ctx, func(name string) sources.Source { return byName[name] }, preview, req, func(done, total int) { progress = append(progress, done*10+total) })
	if len(sum.Applied) != 1 || len(sum.Refused) != 3 || len(sum.Failed) != 0 || len(sum.Stopped) != 0 || sum.Refused[0].Task != person.ID {
		t.Fatalf("summary: %+v, want 1 applied and the person's claim, the renewed lease and the changed task refused", sum)
	}
	refusedFor := map[string]string{}
	for _, r := range sum.Refused[1:] {
		if r.Source != "locks" || r.Code != model.CodeConflict {
			t.Fatalf("a task changed midway is not refused as CONFLICT: %+v", r)
		}
		refusedFor[r.Task] = r.Reason
	}
	if !strings.Contains(refusedFor[c.ID], "renewed since you looked") || !strings.Contains(refusedFor[b.ID], "changed since you looked") {
		t.Fatalf("the renewed lease and the new claim are not refused by what changed: %+v", sum.Refused)
	}
	if len(progress) != 3 || progress[2] != 33 {
		t.Fatalf("progress: %v, want 1/3 2/3 3/3", progress)
	}
	for _, want := range []struct {
		src  sources.Source
		id   string
		held bool
	}{{q, a.ID, false}, {locks, c.ID, true}, {locks, b.ID, true}, {q, other.ID, true}, {q, person.ID, true}} {
		now, err := want.src.Get(ctx, want.id)
		if err != nil {
			t.Fatal(err)
		}
		if now.Held() != want.held {
			t.Errorf("%s/%s held=%v after the bulk release, want %v", want.src.Name(), now.Title, now.Held(), want.held)
		}
	}
	if err := sum.Err(); model.CodeOf(err) != model.CodeConflict {
		t.Fatalf("a summary with a refusal: %v, want CONFLICT", err)
	}
}

// TestBulkStopsBetweenTasks: stopped midway, what was not tried is listed
// as stopped and left as it was.
func TestBulkStopsBetweenTasks(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q := openQueue(t)
	var tasks []*model.Task
	for _, title := range []string{"one", "two", "three"} {
		task, _ := q.Create(ctx, sources.NewTask{Title: title})
		held, err := q.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "worker-7"})
		if err != nil {
			t.Fatal(err)
		}
		tasks = append(tasks, held)
	}
	desk := &sources.Desk{Actor: "alice"}
	req := sources.Request{Action: model.ActionForceRelease, Reason: "node lost"}
	preview := desk.PreviewBulk(req, tasks)
	sum := desk.ApplyBulk(ctx, func(string) sources.Source { return q }, preview, req, func(done, _ int) {
		if done == 1 {
			cancel()
		}
	})
	if len(sum.Applied) != 1 || len(sum.Stopped) != 2 || sum.Stopped[0].Task != tasks[1].ID {
		t.Fatalf("summary after a stop: %+v", sum)
	}
	if now, _ := q.Get(context.Background(), tasks[2].ID); !now.Held() {
		t.Fatal("a stopped bulk action changed a task it did not reach")
	}
}

// TestBulkRefusesOnAReadOnlySource: the desk's read-only refusal is the
// preview's, so nothing is tried.
func TestBulkRefusesOnAReadOnlySource(t *testing.T) {
	ctx := context.Background()
	q := openQueue(t)
	task, _ := q.Create(ctx, sources.NewTask{Title: "stuck"})
	held, _ := q.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "worker-7"})
	desk := &sources.Desk{Actor: "alice", ReadOnly: func(string) bool { return true }}
	p := desk.PreviewBulk(sources.Request{Action: model.ActionForceRelease}, []*model.Task{held})
	if len(p.Apply) != 0 || len(p.Refused) != 1 || !strings.Contains(p.Refused[0].Reason, "read-only") || p.Refused[0].Code != model.CodeMisconfigured {
		t.Fatalf("preview on a read-only source: %+v", p)
	}
}
