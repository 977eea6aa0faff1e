package lockdir

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// trusted opens a source on dir and skips the test where the kernel's word
// is not available (another filesystem, no inotify instance left).
func trusted(t *testing.T, dir string) *Source {
	t.Helper()
	src := openDir(t, dir)
	if src.notifier().fd < 0 {
		t.Skipf("no inotify word on %s: every poll lists", dir)
	}
	return src
}

// pollFor polls from cursor and returns the tasks it holds by id.
func pollFor(t *testing.T, src *Source, cursor *sources.Cursor) map[string]*model.Task {
	t.Helper()
	d, err := src.Poll(context.Background(), *cursor)
	if err != nil {
		t.Fatal(err)
	}
	*cursor = d.Cursor
	return byID(d.Tasks)
}

func TestAnIdlePollLooksAtNoFileAndAHeartbeatAtOneName(t *testing.T) {
	dir := t.TempDir()
	seedLocks(t, dir, "job-", 50)
	src := trusted(t, dir)
	var cursor sources.Cursor
	if got := pollFor(t, src, &cursor); len(got) != 50 {
		t.Fatalf("first poll: %d tasks", len(got))
	}
	disk := countDisk(t)
	if got := pollFor(t, src, &cursor); len(got) != 0 {
		t.Fatalf("idle poll returned %d tasks", len(got))
	}
	if n := disk.count("", dir); n != 0 {
		t.Fatalf("an idle poll listed, lstat'ed or opened %d times: %v", n, disk.first(3))
	}
	// The seed's heartbeat rewrites the lock in place: no directory entry
	// changes, and only that name is looked at again.
	writeSeedLock(t, dir, "job-7", "seed-agent-after-heartbeat")
	got := pollFor(t, src, &cursor)
	if len(got) != 1 || got["job-7"] == nil || got["job-7"].Claim().Name != "seed-agent-after-heartbeat" {
		t.Fatalf("after one heartbeat the poll returned %v", slices.Sorted(maps.Keys(got)))
	}
	if n := disk.count("lstat", dir); n != 1 || disk.count("list", dir) != 0 {
		t.Fatalf("one rewritten lock cost %d lstats and %d listings: %v", n, disk.count("list", dir), disk.first(3))
	}
}

func TestARewriteWithinOneClockTickIsReadAgain(t *testing.T) {
	dir := t.TempDir()
	writeSeedLock(t, dir, "vpc", "agent-a")
	src := trusted(t, dir)
	var cursor sources.Cursor
	pollFor(t, src, &cursor)
	// Same inode, same size, and the mtime put back: the signature a
	// listing compares is unchanged, as after a rewrite within one tick
	// of a coarse clock.
	p := filepath.Join(dir, "vpc.lock")
	fi, _ := os.Lstat(p)
	data, _ := os.ReadFile(p)
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(strings.Replace(string(data), "agent-a", "agent-b", 1)), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	os.Chtimes(p, fi.ModTime(), fi.ModTime())
	if again, _ := os.Lstat(p); sigOf(again) != sigOf(fi) {
		t.Fatalf("the test could not keep the signature: %+v, %+v", sigOf(again), sigOf(fi))
	}
	got := pollFor(t, src, &cursor)
	if got["vpc"] == nil || got["vpc"].Claim().Name != "agent-b" {
		t.Fatalf("a rewrite that kept size and mtime was not read: %v", got)
	}
}

func TestAFileWithASecondLinkIsLookedAtEveryPoll(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	writeSeedLock(t, dir, "vpc", "agent-a")
	other := filepath.Join(elsewhere, "vpc.lock")
	if err := os.Link(filepath.Join(dir, "vpc.lock"), other); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	src := trusted(t, dir)
	var cursor sources.Cursor
	pollFor(t, src, &cursor)
	// A write through the other link raises no event in this directory.
	if err := os.WriteFile(other, []byte(`{"task_id": "vpc", "agent": "agent-through-the-other-link"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	got := pollFor(t, src, &cursor)
	if got["vpc"] == nil || got["vpc"].Claim().Name != "agent-through-the-other-link" {
		t.Fatalf("a write through another link was not seen: %v", got)
	}
}

func TestAnArchiveCreatedReplacedOrRemovedAfterOpenIsFollowed(t *testing.T) {
	dir := t.TempDir()
	writeTasksFile(t, dir, []string{"a", "b"})
	src := trusted(t, dir)
	var cursor sources.Cursor
	if got := pollFor(t, src, &cursor); len(got) != 2 {
		t.Fatalf("first poll: %v", got)
	}
	state := func(what, id string, want model.State) {
		t.Helper()
		got := pollFor(t, src, &cursor)
		if got[id] == nil || got[id].State != want {
			t.Fatalf("%s: the poll returned %v, want %s %s", what, got, id, want)
		}
	}
	// The seed's cleanup: mkdir -p archive; mv *.done archive/.
	os.WriteFile(filepath.Join(dir, "a.done"), []byte(`{"task_id": "a", "agent": "x", "status": "completed"}`), 0o644)
	state("a done marker", "a", model.StateDone)
	os.Mkdir(filepath.Join(dir, "archive"), 0o755)
	if err := os.Rename(filepath.Join(dir, "a.done"), filepath.Join(dir, "archive", "a.done")); err != nil {
		t.Fatal(err)
	}
	state("archived by the seed's cleanup", "a", model.StateDone)
	// archive/ swapped for another directory holding b's failure.
	spare := filepath.Join(dir, "spare")
	os.Mkdir(spare, 0o755)
	os.WriteFile(filepath.Join(spare, "b.failed"), []byte(`{"task_id": "b", "agent": "x", "status": "failed"}`), 0o644)
	if err := os.Rename(filepath.Join(dir, "archive"), filepath.Join(dir, "archive-old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(spare, filepath.Join(dir, "archive")); err != nil {
		t.Fatal(err)
	}
	got := pollFor(t, src, &cursor)
	if got["a"] == nil || got["a"].State != model.StateQueued || got["b"] == nil || got["b"].State != model.StateFailed {
		t.Fatalf("after archive/ was replaced: %v", got)
	}
	// A change in the old archive/ is no longer this directory's, and the
	// new archive/ is watched: nothing is listed again.
	disk := countDisk(t)
	os.WriteFile(filepath.Join(dir, "archive-old", "b.done"), []byte(`{"task_id": "b"}`), 0o644)
	if got := pollFor(t, src, &cursor); len(got) != 0 || disk.count("", dir) != 0 {
		t.Fatalf("a file in the archive that was moved away changed %v, after %v", got, disk.first(3))
	}
	// And one in the new archive/ is.
	os.WriteFile(filepath.Join(dir, "archive", "a.failed"), []byte(`{"task_id": "a", "status": "failed"}`), 0o644)
	state("a failure archived into the new archive/", "a", model.StateFailed)
	os.RemoveAll(filepath.Join(dir, "archive"))
	state("archive/ removed", "b", model.StateQueued)
}

func TestAnOldCursorSeesEveryChangeAfterTheChangeLogIsCompacted(t *testing.T) {
	dir := t.TempDir()
	seedLocks(t, dir, "job-", 3)
	src := openDir(t, dir)
	ctx := context.Background()
	var first sources.Cursor
	pollFor(t, src, &first)
	os.Remove(filepath.Join(dir, "job-1.lock"))
	second := first
	pollFor(t, src, &second)
	last := second
	for i := 0; i < 1500; i++ { // past the log's compaction threshold
		writeSeedLock(t, dir, "job-0", "agent-"+strconv.Itoa(i))
		pollFor(t, src, &last)
	}
	if n := len(src.view.changes); n > 1024 {
		t.Fatalf("the change log holds %d changes of 3 tasks", n)
	}
	for _, c := range []struct {
		from        sources.Cursor
		tasks, gone string
	}{{first, "[job-0]", "[job-1]"}, {second, "[job-0]", "[]"}, {last, "[]", "[]"}} {
		d, err := src.Poll(ctx, c.from)
		if err != nil || d.Full || fmt.Sprint(ids(d.Tasks)) != c.tasks || fmt.Sprint(d.Removed) != c.gone {
			t.Fatalf("from %s: %v, removed %v (%v); want %s, removed %s", c.from, ids(d.Tasks), d.Removed, err, c.tasks, c.gone)
		}
	}
}
