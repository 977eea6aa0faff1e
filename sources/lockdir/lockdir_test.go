package lockdir

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

func TestCreateAppendsToAYAMLTasksFileKeepingItsComments(t *testing.T) {
	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.yaml")
	os.WriteFile(tasks, []byte("# infra queue, edited by hand\n- id: design-vpc-module\n  description: Design and implement VPC Terraform module # keep\n"), 0o644)
	src, err := Open(Config{Name: "x", Path: filepath.Join(dir, "locks"), TasksFile: tasks})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, err := src.Create(context.Background(), sources.NewTask{ID: "write-runbook", Title: "Write runbook", Priority: model.PriorityLow, Class: model.ClassFixedDate}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(tasks)
	if !strings.HasPrefix(string(data), "# infra queue, edited by hand\n- id: design-vpc-module\n  description: Design and implement VPC Terraform module # keep\n- id: write-runbook\n") {
		t.Fatalf("the file was not appended to as it was:\n%s", data)
	}
	got, err := src.Get(context.Background(), "write-runbook")
	if err != nil || got.Class != model.ClassFixedDate || got.Priority != model.PriorityLow || got.Title != "Write runbook" {
		t.Fatalf("created task reads back as %+v, %v", got, err)
	}
	if _, err := src.Create(context.Background(), sources.NewTask{ID: "design-vpc-module"}); model.CodeOf(err) != model.CodeConflict {
		t.Fatalf("creating an existing id: %v, want CONFLICT", err)
	}
}

func TestCreateSplicesIntoAJSONTasksFile(t *testing.T) {
	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.json")
	os.WriteFile(tasks, []byte("[\n  {\"id\": \"a\", \"owner\": \"ops\"}\n]\n"), 0o644)
	src, err := Open(Config{Name: "x", Path: filepath.Join(dir, "locks"), TasksFile: tasks})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, err := src.Create(context.Background(), sources.NewTask{ID: "b", Title: "B"}); err != nil {
		t.Fatal(err)
	}
	var list []map[string]any
	data, _ := os.ReadFile(tasks)
	if err := json.Unmarshal(data, &list); err != nil || len(list) != 2 || list[0]["owner"] != "ops" || list[1]["id"] != "b" {
		t.Fatalf("tasks file after create: %v\n%s", err, data)
	}
}

func TestForceReleaseArchivesTheOldLockWithWhoWhenAndWhy(t *testing.T) {
	src := openTemp(t, time.Hour)
	ctx := context.Background()
	task, _ := src.Create(ctx, sources.NewTask{ID: "stuck", Title: "stuck"})
	held, err := src.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "SANDMAN"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.ForceRelease(ctx, task.ID, sources.Human{Actor: "alice", Reason: "node down", Expect: held.Version}); err != nil {
		t.Fatal(err)
	}
	archived, _ := filepath.Glob(filepath.Join(src.archive, "stuck@*.released"))
	if len(archived) != 1 {
		t.Fatalf("archive holds %v, want one released lock", archived)
	}
	data, _ := os.ReadFile(archived[0])
	var old map[string]any
	if err := json.Unmarshal(data, &old); err != nil {
		t.Fatal(err)
	}
	if old["agent"] != "SANDMAN" || old["lock_token"] != held.Claim().Token || old["archived_by"] != "alice" ||
		old["archived_reason"] != "node down" || old["archived_action"] != "force-release" || old["archived_at"] == "" {
		t.Fatalf("the archived lock lacks who, when or why: %s", data)
	}
	got, _ := src.Get(ctx, task.ID)
	if got.State != model.StateQueued || len(got.More().History) < 2 || got.More().History[len(got.More().History)-1].Actor != "alice" {
		t.Fatalf("after release: %s history %+v", describe(got), got.More().History)
	}
}

func TestAHumanActionOnALockTheSeedRewroteIsConflict(t *testing.T) {
	src := openTemp(t, time.Hour)
	ctx := context.Background()
	task, _ := src.Create(ctx, sources.NewTask{ID: "busy", Title: "busy"})
	held, _ := src.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "SANDMAN"})
	// What the seed's heartbeat does: rewrite the file in place.
	p := filepath.Join(src.dir, "busy.lock")
	data, _ := os.ReadFile(p)
	os.WriteFile(p, []byte(strings.Replace(string(data), `"agent"`, `"heartbeat": "2026-02-06T11:00:00+00:00", "agent"`, 1)), 0o644)
	_, err := src.Takeover(ctx, task.ID, sources.Human{Actor: "alice", Expect: held.Version})
	if model.CodeOf(err) != model.CodeConflict || model.CurrentOf(err) == nil || model.CurrentOf(err).Claim().HeartbeatAt.IsZero() {
		t.Fatalf("takeover on what the human saw before the seed's rewrite: %v", err)
	}
}

func TestWatchHintsOnAFileWrittenByAnotherWriterAndClosesWithItsContext(t *testing.T) {
	src := openTemp(t, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	hints, err := src.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	os.WriteFile(filepath.Join(src.dir, "remote.lock"), []byte(`{"task_id": "remote", "agent": "x"}`), 0o644)
	select {
	case <-hints:
		t.Logf("hint after %v", time.Since(start))
	case <-time.After(5 * time.Second):
		t.Fatal("no hint for a new lock file")
	}
	// Writes to claimdeck's private files alone give no hint.
	os.WriteFile(filepath.Join(src.dir, ".cd-tmp-x"), nil, 0o644)
	select {
	case <-hints:
		t.Fatal("a private temp file gave a hint")
	case <-time.After(5 * debounce):
	}
	cancel()
	for range hints {
	}
}

func TestAnIncrementalPollReturnsOnlyWhatChanged(t *testing.T) {
	src := openTemp(t, time.Hour)
	ctx := context.Background()
	for i := 0; i < 50; i++ {
		src.Create(ctx, sources.NewTask{Title: "bulk"})
	}
	d, err := src.Poll(ctx, "")
	if err != nil || !d.Full || len(d.Tasks) != 50 {
		t.Fatalf("first poll: full %v, %d tasks, %v", d.Full, len(d.Tasks), err)
	}
	idle, _ := src.Poll(ctx, d.Cursor)
	if idle.Full || len(idle.Tasks) != 0 || len(idle.Removed) != 0 {
		t.Fatalf("an idle poll returned full %v, %d tasks, %d removed", idle.Full, len(idle.Tasks), len(idle.Removed))
	}
	added, _ := src.Create(ctx, sources.NewTask{Title: "one more"})
	claimed, _ := src.Claim(ctx, d.Tasks[0].ID, sources.ClaimRequest{Agent: "a"})
	next, _ := src.Poll(ctx, idle.Cursor)
	ids := map[string]bool{}
	for _, task := range next.Tasks {
		ids[task.ID] = true
	}
	if next.Full || len(next.Tasks) != 2 || !ids[added.ID] || !ids[claimed.ID] {
		t.Fatalf("after one create and one claim the poll returned %v", ids)
	}
	// A task known only from a seed lock file disappears with it.
	stray := filepath.Join(src.dir, "stray.lock")
	os.WriteFile(stray, []byte(`{"task_id": "stray", "agent": "seed-agent"}`), 0o644)
	seen, _ := src.Poll(ctx, next.Cursor)
	os.Remove(stray)
	gone, _ := src.Poll(ctx, seen.Cursor)
	if len(seen.Tasks) != 1 || len(gone.Removed) != 1 || gone.Removed[0] != "stray" {
		t.Fatalf("a seed lock appearing and vanishing: %d new, removed %v", len(seen.Tasks), gone.Removed)
	}
	if d, _ := src.Poll(ctx, "someone-else:3"); !d.Full {
		t.Fatal("a cursor from another source instance must give a full snapshot")
	}
}
