package lockdir

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// diskOps counts the listings, lstats and opens reads make (onDisk).
type diskOps struct {
	mu  sync.Mutex
	ops []string // "op path"
}

func countDisk(t *testing.T) *diskOps {
	c := &diskOps{}
	prev := onDisk
	onDisk = func(op, path string) {
		c.mu.Lock()
		c.ops = append(c.ops, op+" "+path)
		c.mu.Unlock()
	}
	t.Cleanup(func() { onDisk = prev })
	return c
}

// count is how many of op (any op when "") touched a path under dir.
func (c *diskOps) count(op, dir string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, o := range c.ops {
		gotOp, path, _ := strings.Cut(o, " ")
		if (op == "" || gotOp == op) && (path == dir || strings.HasPrefix(path, dir+string(os.PathSeparator))) {
			n++
		}
	}
	return n
}

// first is the first n operations, for a failure message.
func (c *diskOps) first(n int) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.ops[:min(n, len(c.ops))])
}

func (c *diskOps) reset() {
	c.mu.Lock()
	c.ops = nil
	c.mu.Unlock()
}

// seedLocks writes n live seed locks.
func seedLocks(t *testing.T, dir, prefix string, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s%d", prefix, i)
		writeSeedLock(t, dir, ids[i], "seed-agent")
	}
	return ids
}

func writeSeedLock(t *testing.T, dir, id, agent string) {
	t.Helper()
	now := time.Now().UTC()
	body := fmt.Sprintf(`{"task_id": %q, "agent": %q, "claimed_at": %q, "expires_at": %q}`,
		id, agent, now.Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339))
	if err := os.WriteFile(filepath.Join(dir, id+".lock"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeTasksFile lists ids in the directory's tasks.json.
func writeTasksFile(t *testing.T, dir string, ids []string) {
	t.Helper()
	entries := make([]wireEntry, len(ids))
	for i, id := range ids {
		entries[i] = wireEntry{ID: id, Title: "Task " + id}
	}
	data, _ := json.Marshal(entries)
	if err := os.WriteFile(filepath.Join(dir, "tasks.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func openDir(t *testing.T, dir string) *Source {
	t.Helper()
	src, err := Open(Config{Name: "locks", Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

func byID(tasks []*model.Task) map[string]*model.Task {
	m := make(map[string]*model.Task, len(tasks))
	for _, t := range tasks {
		m[t.ID] = t
	}
	return m
}

func TestAPollReadsOnlyTheArchiveInsideItsWindowAndAnIdlePollLooksAtNothing(t *testing.T) {
	dir := t.TempDir()
	seedLocks(t, dir, "live-", 3)
	archivedOf(t, dir, "old-", 200, 48*time.Hour)
	archivedOf(t, dir, "recent-", 2, time.Hour)
	src := openDir(t, dir)
	ctx := context.Background()
	window := sources.PollOption{FinishedAfter: time.Now().Add(-24 * time.Hour)}
	disk := countDisk(t)
	archive := filepath.Join(dir, "archive")

	d, err := src.Poll(ctx, "", window)
	if err != nil {
		t.Fatal(err)
	}
	if opened := disk.count("open", archive); opened != 2 {
		t.Errorf("the first poll opened %d archived files; want only the 2 finished inside the window", opened)
	}
	got := byID(d.Tasks)
	if len(got) != 5 || got["live-0"] == nil || got["recent-1"] == nil || got["recent-1"].State != model.StateDone || d.Archived != 200 {
		t.Fatalf("first poll: %d tasks (%v), %d archived; want 3 live and 2 recent, 200 counted", len(got), slices.Sorted(maps.Keys(got)), d.Archived)
	}

	// The next poll reads the 200 in the background (one batch), finds them
	// all final and shows nothing new; after that there is nothing to read.
	disk.reset()
	classifying, err := src.Poll(ctx, d.Cursor, window)
	if err != nil || len(classifying.Tasks) != 0 || len(classifying.Removed) != 0 {
		t.Fatalf("classifying poll: %d tasks, %v removed, %v", len(classifying.Tasks), classifying.Removed, err)
	}
	if opened := disk.count("open", archive); opened != 200 {
		t.Errorf("the second poll opened %d archived files; want the 200 old ones, once", opened)
	}

	disk.reset()
	idle, err := src.Poll(ctx, classifying.Cursor, window)
	if err != nil || len(idle.Tasks) != 0 || len(idle.Removed) != 0 {
		t.Fatalf("idle poll: %d tasks, %v removed, %v", len(idle.Tasks), idle.Removed, err)
	}
	if n := disk.count("open", archive); n != 0 {
		t.Errorf("an idle poll opened %d archived files", n)
	}
	if src.notifier().fd < 0 {
		t.Skipf("no inotify on %s: every poll lists (checked above: it reads nothing)", dir)
	}
	if n := disk.count("", dir); n != 0 {
		t.Errorf("an idle poll listed or lstat'ed %d times; nothing changed, the kernel said so: %v", n, disk.first(3))
	}
}

func TestArchivedFilesChangedOrAddedLaterShowUpAndCountsStayRight(t *testing.T) {
	dir := t.TempDir()
	old := archivedOf(t, dir, "old-", 40, 48*time.Hour)
	writeTasksFile(t, dir, append(slices.Clone(old[:10]), "fresh"))
	src := openDir(t, dir)
	ctx := context.Background()
	horizon := time.Now().Add(-24 * time.Hour)
	window := sources.PollOption{FinishedAfter: horizon}
	d, err := src.Poll(ctx, "", window)
	if err != nil || len(d.Tasks) != 1 || d.Tasks[0].ID != "fresh" || d.Archived != 40 {
		t.Fatalf("first poll: %v, %d archived, %v", ids(d.Tasks), d.Archived, err)
	}
	if next, err := src.Next(ctx, "agent"); err != nil || next == nil || next.ID != "fresh" {
		t.Fatalf("next offered %v (%v); an archived task of the tasks file is never queued again", next, err)
	}
	cursor := d.Cursor
	step := func(what string, change func(), want map[string]model.State) {
		t.Helper()
		change()
		d, err := src.Poll(ctx, cursor, window)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		cursor = d.Cursor
		got := map[string]model.State{}
		for _, task := range d.Tasks {
			got[task.ID] = task.State
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: the poll returned %v, want %v", what, got, want)
		}
	}
	archived := func(id string) string { return filepath.Join(dir, "archive", id+".done") }
	step("a task the seed's cleanup archives now", func() {
		archivedOf(t, dir, "late-", 1, time.Minute)
	}, map[string]model.State{"late-0": model.StateDone})
	step("a task archived long after it finished", func() {
		archivedOf(t, dir, "aged-", 1, 72*time.Hour)
	}, map[string]model.State{})
	step("an archived file rewritten in place (now inside the window)", func() {
		if err := os.WriteFile(archived("old-1"), []byte(`{"task_id": "old-1", "agent": "x", "status": "review"}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}, map[string]model.State{"old-1": model.StateReview})
	step("an archived file of a listed task removed", func() {
		os.Remove(archived("old-2"))
	}, map[string]model.State{"old-2": model.StateQueued})
	step("a seed agent claims an archived task (its claim looks at the top directory only)", func() {
		writeSeedLock(t, dir, "old-3", "seed-agent")
	}, map[string]model.State{"old-3": model.StateClaimed})
	step("an archived file touched back before the window", func() {
		old := time.Now().Add(-50 * time.Hour)
		if err := os.Chtimes(archived("late-0"), old, old); err != nil {
			t.Fatal(err)
		}
	}, map[string]model.State{"late-0": model.StateDone})

	// The lazy source and one that reads everything agree on what a
	// windowed poll holds and counts, and on the archive.
	eager := openDir(t, dir)
	all, err := eager.Poll(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	wantLive, wantCount := sources.Window(all.Tasks, []sources.PollOption{window})
	full, err := src.Poll(ctx, "", window)
	if err != nil {
		t.Fatal(err)
	}
	// late-0 was read while inside the window; the source keeps what it
	// read, and a full poll windows it as it does any read task.
	if !sameIDs(full.Tasks, wantLive) || full.Archived != wantCount || wantCount != 40-3+1+1 {
		t.Fatalf("full poll: %v and %d counted; reading everything: %v and %d", ids(full.Tasks), full.Archived, ids(wantLive), wantCount)
	}
	fresh := openDir(t, dir)
	lazy, err := fresh.Poll(ctx, "", window)
	if err != nil || !sameIDs(lazy.Tasks, wantLive) || lazy.Archived != wantCount {
		t.Fatalf("a fresh source's windowed poll: %v and %d counted (%v); want %v and %d", ids(lazy.Tasks), lazy.Archived, err, ids(wantLive), wantCount)
	}
	for _, q := range []sources.ArchiveQuery{
		{Before: horizon},
		{Before: horizon, Limit: 5},
		{Before: horizon, Text: "old-1"},
		{Before: time.Now().Add(-60 * time.Hour)},
	} {
		want, _ := sources.ArchiveOf(all.Tasks, q)
		for _, s := range []*Source{src, fresh} {
			got, err := s.Archive(ctx, q)
			if err != nil || !slices.Equal(ids(got), ids(want)) {
				t.Fatalf("Archive(%+v): %v (%v); reading everything: %v", q, ids(got), err, ids(want))
			}
		}
	}
}

func TestALimitedArchiveQueryReadsTheNewestHistoryOnly(t *testing.T) {
	dir := t.TempDir()
	archivedOf(t, dir, "older-", 600, 96*time.Hour)
	archivedOf(t, dir, "newer-", 10, 48*time.Hour)
	got, opened, err := newestTen(t, dir)
	if err != nil || len(got) != 10 {
		t.Fatalf("Archive: %d tasks, %v", len(got), err)
	}
	for _, task := range got {
		if !strings.HasPrefix(task.ID, "newer-") {
			t.Fatalf("the newest 10 include %s", task.ID)
		}
	}
	if opened > historyBatch {
		t.Errorf("Archive opened %d files for the newest 10 of 610", opened)
	}
}

// newestTen polls dir's lock directory over the last day, then asks its
// archive for the newest 10 older than that, counting the archived files
// it opened.
func newestTen(t *testing.T, dir string) (got []*model.Task, opened int, err error) {
	src := openDir(t, dir)
	ctx := context.Background()
	horizon := time.Now().Add(-24 * time.Hour)
	if _, err := src.Poll(ctx, "", sources.PollOption{FinishedAfter: horizon}); err != nil {
		t.Fatal(err)
	}
	disk := countDisk(t)
	got, err = src.Archive(ctx, sources.ArchiveQuery{Before: horizon, Limit: 10})
	return got, disk.count("open", filepath.Join(dir, "archive")), err
}

func ids(tasks []*model.Task) []string {
	out := make([]string, len(tasks))
	for i, t := range tasks {
		out[i] = t.ID
	}
	return out
}

func sameIDs(a, b []*model.Task) bool {
	x, y := ids(a), ids(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

func TestABlockedAndAReviewTaskTheSeedsCleanupArchivedLongAgoComeBackWithinAFewPolls(t *testing.T) {
	dir := t.TempDir()
	archivedOf(t, dir, "old-", 998, 48*time.Hour)
	// Older than the rest: newest first, they are in the last batch.
	parked := map[string]model.State{"waits-on-human": model.StateBlocked, "in-review": model.StateReview}
	archivedMarker(t, dir, "waits-on-human", "failed", "blocked", 96*time.Hour)
	archivedMarker(t, dir, "in-review", "done", "review", 96*time.Hour)
	src := openDir(t, dir)
	ctx := context.Background()
	window := sources.PollOption{FinishedAfter: time.Now().Add(-24 * time.Hour)}
	archive := filepath.Join(dir, "archive")
	disk := countDisk(t)

	polls := (1000+historyBatch-1)/historyBatch + 1
	seen := map[string]model.State{}
	var cursor sources.Cursor
	for i := 0; i < polls; i++ {
		disk.reset()
		d, err := src.Poll(ctx, cursor, window)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 && (len(d.Tasks) != 0 || d.Archived != 1000) {
			t.Fatalf("first poll: %v, %d archived; want nothing shown, all 1000 counted unread", ids(d.Tasks), d.Archived)
		}
		if n := disk.count("open", archive); n > historyBatch {
			t.Errorf("poll %d opened %d archived files; a batch is %d", i+1, n, historyBatch)
		}
		for _, task := range d.Tasks {
			seen[task.ID] = task.State
		}
		cursor = d.Cursor
	}
	if fmt.Sprint(seen) != fmt.Sprint(parked) {
		t.Fatalf("after %d incremental polls they returned %v; want the parked ones only, %v", polls, seen, parked)
	}

	disk.reset()
	full, err := src.Poll(ctx, "", window)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]model.State{}
	for _, task := range full.Tasks {
		got[task.ID] = task.State
	}
	if fmt.Sprint(got) != fmt.Sprint(parked) || full.Archived != 998 {
		t.Fatalf("full poll: %v, %d archived; want %v and the 998 done counted", got, full.Archived, parked)
	}
	if idle, err := src.Poll(ctx, full.Cursor, window); err != nil || len(idle.Tasks) != 0 {
		t.Fatalf("idle poll: %v, %v", ids(idle.Tasks), err)
	}
	if n := disk.count("open", archive); n != 0 {
		t.Errorf("with everything classified, two more polls opened %d archived files: %v", n, disk.first(3))
	}
}

// archivedMarker writes a claimdeck marker ({id}.done or .failed with
// status) into archive/, as the seed's cleanup moves it, age ago.
func archivedMarker(t *testing.T, dir, id, suffix, status string, age time.Duration) {
	t.Helper()
	at := time.Now().Add(-age)
	body := fmt.Sprintf(`{"task_id": %q, "agent": "HUMAN:ops", "completed_at": %q, "status": %q, "reason": "needs a person"}`,
		id, at.UTC().Format(time.RFC3339), status)
	p := filepath.Join(dir, "archive", id+"."+suffix)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, at, at); err != nil {
		t.Fatal(err)
	}
}

// A history file's mtime counts to the microsecond, as its task's EditedAt
// does: files a fraction of a microsecond apart are one instant, ordered
// by id, so a limited query stops at the first batch that holds its answer.
func TestHistoryFilesWithinOneMicrosecondAreOrderedByID(t *testing.T) {
	dir := t.TempDir()
	late := archivedOf(t, dir, "z-", historyBatch+40, 48*time.Hour)
	early := archivedOf(t, dir, "a-", 10, 48*time.Hour)
	at := time.Now().Add(-48 * time.Hour).Truncate(time.Microsecond)
	for _, id := range late { // 900 ns later: the same microsecond
		p := filepath.Join(dir, "archive", id+".done")
		if err := os.Chtimes(p, at.Add(900), at.Add(900)); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range early {
		p := filepath.Join(dir, "archive", id+".done")
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	got, opened, err := newestTen(t, dir)
	if err != nil || !slices.Equal(ids(got), early) {
		t.Fatalf("Archive: %v, %v; want %v", ids(got), err, early)
	}
	if opened > historyBatch {
		t.Errorf("Archive opened %d files for 10 answers in its first batch", opened)
	}
}
