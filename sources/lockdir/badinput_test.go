package lockdir

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

func TestBrokenFilesShowUpWithTheirReasonAndAreNeverDeleted(t *testing.T) {
	src := openTemp(t, time.Hour)
	ctx := context.Background()
	dir := src.dir
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("empty.lock", "")
	write("truncated.lock", `{"task_id": "truncated", "agent": "terraform-eng`)
	write("not-json.lock", "LOCK_ACQUIRED: task=x agent=y\n")
	write("types.lock", `{"task_id": "types", "agent": 42, "claimed_at": true, "history": "none"}`)
	write("list.done", `[1, 2, 3]`)
	write("bad-time.lock", `{"task_id": "bad-time", "agent": "a", "claimed_at": "yesterday"}`)
	write("renamed.lock", `{"task_id": "other-task", "agent": "a", "claimed_at": "2026-02-06T10:30:00Z"}`)
	write("odd-status.done", `{"task_id": "odd-status", "agent": "a", "status": "half-done"}`)
	write("huge.lock", `{"task_id": "huge", "description": "`+strings.Repeat("x", maxFile)+`"}`)
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "link.lock")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "dir.lock"), 0o755); err != nil {
		t.Fatal(err)
	}
	write("unreadable.lock", `{"task_id": "unreadable", "agent": "a"}`)
	if err := os.Chmod(filepath.Join(dir, "unreadable.lock"), 0); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"empty":      "empty file",
		"truncated":  "not valid JSON",
		"not-json":   "not valid JSON",
		"types":      "agent: want a string, got a number",
		"list":       "not a JSON object",
		"bad-time":   `claimed_at: "yesterday" is not a time`,
		"renamed":    `task_id "other-task" does not match`,
		"odd-status": `status "half-done"`,
		"huge":       "over the 1 MiB limit",
		"link":       "symbolic link",
		"dir":        "a directory",
	}
	if os.Geteuid() != 0 { // root reads a mode-000 file anyway
		want["unreadable"] = "permission denied"
	}
	before := listDir(t, dir)
	d, err := src.Poll(ctx, "")
	if err != nil {
		t.Fatalf("poll over broken files: %v", err)
	}
	got := map[string]*model.Task{}
	for _, task := range d.Tasks {
		got[task.ID] = task
	}
	for id, reason := range want {
		task := got[id]
		if task == nil {
			t.Errorf("%s: missing from the snapshot", id)
			continue
		}
		if !strings.Contains(task.More().Problem, reason) {
			t.Errorf("%s: problem %q, want it to say %q", id, task.More().Problem, reason)
		}
		if !strings.HasPrefix(task.More().Problem, filepath.Join(dir, id)) {
			t.Errorf("%s: problem %q does not name the file to repair", id, task.More().Problem)
		}
		if model.Eligible(task, time.Now()) {
			t.Errorf("%s: a broken task is eligible", id)
		}
		// Nothing of our making: a file that gives no expiry, heartbeat,
		// holder or status has none.
		if strings.HasSuffix(task.More().Problem, "empty file") || strings.Contains(task.More().Problem, "not valid JSON") {
			if c := task.Claim(); !c.Expires.IsZero() || !c.HeartbeatAt.IsZero() || c.Held() || task.RawStatus != "" {
				t.Errorf("%s: invented lease data: expires %v, heartbeat %v, holder %v, status %q", id, c.Expires, c.HeartbeatAt, c.Holder, task.RawStatus)
			}
		}
		if _, err := src.Claim(ctx, id, sources.ClaimRequest{Agent: "ORACLE"}); model.CodeOf(err) != model.CodeConflict {
			t.Errorf("%s: claim of a broken task: %v, want CONFLICT", id, err)
		}
		if _, err := src.ForceRelease(ctx, id, sources.Human{Actor: "alice", Expect: task.Version}); model.CodeOf(err) != model.CodeConflict {
			t.Errorf("%s: force-release of a broken task: %v, want CONFLICT", id, err)
		}
	}
	if next, err := src.ClaimNext(ctx, sources.ClaimRequest{Agent: "ORACLE"}); err != nil || next != nil {
		t.Fatalf("claim-next over broken files = %s, %v", describe(next), err)
	}
	if after := listDir(t, dir); after != before {
		t.Fatalf("the directory changed:\nbefore %s\nafter  %s", before, after)
	}
}

func listDir(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	return strings.Join(names, " ")
}

func TestIDsThatCouldEscapeTheDirectoryAreRefused(t *testing.T) {
	src := openTemp(t, time.Hour)
	ctx := context.Background()
	for _, id := range []string{"../escape", "a/b", "a\x00b", "..", ".hidden", "", strings.Repeat("x", 300)} {
		if _, err := src.Create(ctx, sources.NewTask{ID: id, Title: "x"}); id != "" && model.CodeOf(err) != model.CodeMisconfigured {
			t.Errorf("create %q: %v, want MISCONFIGURED", id, err)
		}
		if _, err := src.Claim(ctx, id, sources.ClaimRequest{Agent: "a"}); model.CodeOf(err) != model.CodeMisconfigured {
			t.Errorf("claim %q: %v, want MISCONFIGURED", id, err)
		}
		if _, err := src.Get(ctx, id); model.CodeOf(err) != model.CodeMisconfigured {
			t.Errorf("get %q: %v, want MISCONFIGURED", id, err)
		}
		if _, err := src.Heartbeat(ctx, id, "t", 0); model.CodeOf(err) != model.CodeMisconfigured {
			t.Errorf("heartbeat %q: %v, want MISCONFIGURED", id, err)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(src.dir), "escape.lock")); err == nil {
		t.Fatal("a lock was written outside the directory")
	}
}

func TestBadEntriesInTheTasksFileAreShownNotDropped(t *testing.T) {
	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.yaml")
	os.WriteFile(tasks, []byte(`
- id: fine
  priority: critical
- id: ../etc/passwd
- id: fine
- title: no id
- id: odd
  class: SOMEDAY
  priority: [1]
`), 0o644)
	src, err := Open(Config{Name: "x", Path: filepath.Join(dir, "locks"), TasksFile: tasks})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	d, err := src.Poll(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	problems := map[string]string{}
	for _, task := range d.Tasks {
		problems[task.ID] = task.More().Problem
	}
	for id, want := range map[string]string{"fine": "", "../etc/passwd": "contains", "#4": "no id", "odd": "unknown class"} {
		if got, ok := problems[id]; !ok || !strings.Contains(got, want) || (want == "" && got != "") {
			t.Errorf("entry %q: problem %q (present %v), want %q", id, got, ok, want)
		}
	}
}

func TestABrokenTasksFileIsMisconfigured(t *testing.T) {
	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.yaml")
	os.WriteFile(tasks, []byte("id: not-a-list\n"), 0o644)
	if _, err := Open(Config{Name: "x", Path: filepath.Join(dir, "locks"), TasksFile: tasks}); model.CodeOf(err) != model.CodeMisconfigured {
		t.Fatalf("open with a tasks file that is not a list: %v, want MISCONFIGURED", err)
	}
}

// Files appearing, being rewritten in place (the seed's `cat >`) and
// vanishing while claimdeck reads them: every poll succeeds, and a task is
// either read whole or flagged, never half-parsed.
func TestFilesChangingAndVanishingMidReadNeverBreakAPoll(t *testing.T) {
	src := openTemp(t, time.Hour)
	ctx := context.Background()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		body := []byte(`{"task_id": "flicker", "agent": "seed-agent", "claimed_at": "2026-02-06T10:30:00Z", "description": "` + strings.Repeat("y", 4096) + `"}`)
		p := filepath.Join(src.dir, "flicker.lock")
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if i%2 == 0 {
				f, err := os.Create(p)
				if err == nil {
					f.Write(body[:len(body)/2])
					f.Write(body[len(body)/2:])
					f.Close()
				}
			} else {
				os.Remove(p)
			}
		}
	}()
	deadline := time.Now().Add(500 * time.Millisecond)
	var cursor sources.Cursor
	for polls := 0; time.Now().Before(deadline); polls++ {
		d, err := src.Poll(ctx, cursor)
		if err != nil {
			t.Fatalf("poll %d: %v", polls, err)
		}
		cursor = d.Cursor
		for _, task := range d.Tasks {
			if task.ID == "flicker" && task.More().Problem == "" && task.Claim().Name != "seed-agent" {
				t.Fatalf("a half-read lock parsed as valid: %+v", task.Claim())
			}
		}
		if _, err := src.Get(ctx, "flicker"); err != nil && !errors.Is(err, model.ErrNoSuchTask) && model.CodeOf(err) != model.CodeAPIError {
			t.Fatalf("get: %v", err)
		}
	}
	close(stop)
	wg.Wait()
}
