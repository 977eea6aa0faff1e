package lockdir

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// shortSettle makes a tasks file count as settled 50 ms after it last
// changed, for the length of the test.
func shortSettle(t *testing.T) {
	prev := settleMargin
	settleMargin = 50 * time.Millisecond
	t.Cleanup(func() { settleMargin = prev })
}

// countTasks counts the whole-file reads and parses of the tasks file.
func countTasks(t *testing.T) map[string]int {
	n := map[string]int{}
	prev := onTasks
	onTasks = func(op string) { n[op]++ }
	t.Cleanup(func() { onTasks = prev })
	return n
}

// indexedDir is a lock directory whose tasks.json lists n tasks (task-0 …)
// and whose tasks index a claim of task-0 has written.
func indexedDir(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	entries := make([]wireEntry, n)
	for i := range entries {
		entries[i] = wireEntry{ID: "task-" + strconv.Itoa(i), Title: "title " + strconv.Itoa(i), Priority: 2, Class: "EXPEDITE"}
	}
	data, _ := json.Marshal(entries)
	if err := os.WriteFile(filepath.Join(dir, "tasks.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * settleMargin)
	src := openAt(t, dir)
	if _, err := src.Claim(context.Background(), "task-0", sources.ClaimRequest{Agent: "A"}); err != nil {
		t.Fatal(err)
	}
	src.Close()
	if _, err := os.Lstat(filepath.Join(dir, indexName)); err != nil {
		t.Fatalf("no tasks index after a claim: %v", err)
	}
	return dir
}

// A process that opens the directory for one call reads its task's entry
// from the index: no read of the tasks file, and the task the same as a
// parse of the whole file makes it.
func TestACallOnOneTaskReadsTheIndexNotTheTasksFile(t *testing.T) {
	shortSettle(t)
	dir := indexedDir(t, 500)
	ctx := context.Background()
	n := countTasks(t)
	src := openAt(t, dir)
	got, err := src.Get(ctx, "task-321")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Get(ctx, "no-such-task"); !errors.Is(err, model.ErrNoSuchTask) {
		t.Fatalf("get of an id the tasks file lacks: %v", err)
	}
	if _, err := src.Claim(ctx, "task-7", sources.ClaimRequest{Agent: "B"}); err != nil {
		t.Fatal(err)
	}
	if n["read"] != 0 || n["parse"] != 0 {
		t.Fatalf("open, get and claim read the tasks file %d times and parsed it %d, want none", n["read"], n["parse"])
	}
	if got.Title != "title 321" || got.Priority != 2 || got.Class != model.ClassExpedite || got.State != model.StateQueued {
		t.Fatalf("task-321 from the index: %+v", got)
	}
	full := openAt(t, dir)
	if err := full.tasks.load(); err != nil {
		t.Fatal(err)
	}
	want := full.assemble("task-321", new([numKinds]*fileState), full.tasks.byID["task-321"])
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("from the index:\n%+v\nfrom a parse:\n%+v", got, want)
	}
}

// rewriteInPlace rewrites path in place (same inode, same size) with data
// and sets its mtime back to what it was: only its ctime says it changed.
func rewriteInPlace(t *testing.T, path string, data []byte) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(data)) != fi.Size() {
		t.Fatalf("rewrite of %d bytes over %d", len(data), fi.Size())
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.Stat(path); sigOf(again) != sigOf(fi) {
		t.Fatal("the rewrite changed the file's inode, size or mtime")
	}
}

// An editor that rewrites the tasks file in place, keeping its size and
// its mtime, is seen by the next call: the index (and a long-lived
// source's parse) go stale on ctime. Here the rewrite breaks task-5's
// class, which must refuse its claim, and renames task-6.
func TestAnInPlaceRewriteKeepingSizeAndMtimeIsSeen(t *testing.T) {
	shortSettle(t)
	dir := indexedDir(t, 20)
	ctx := context.Background()
	live := openAt(t, dir)
	if _, err := live.Get(ctx, "task-6"); err != nil {
		t.Fatal(err)
	}
	tasks := filepath.Join(dir, "tasks.json")
	data, _ := os.ReadFile(tasks)
	edited := bytes.Replace(data, []byte(`{"id":"task-5","title":"title 5","priority":2,"class":"EXPEDITE"}`), []byte(`{"id":"task-5","title":"title 5","priority":2,"class":"EXPEDITX"}`), 1)
	edited = bytes.Replace(edited, []byte(`"title 6"`), []byte(`"TITLE 6"`), 1)
	if bytes.Equal(edited, data) {
		t.Fatal("the edit changed nothing")
	}
	rewriteInPlace(t, tasks, edited)
	for name, src := range map[string]*Source{"a fresh source": openAt(t, dir), "a long-lived source": live} {
		if got, err := src.Get(ctx, "task-6"); err != nil || got.Title != "TITLE 6" {
			t.Fatalf("%s: task-6 after the rewrite: %+v, %v", name, got, err)
		}
	}
	_, err := openAt(t, dir).Claim(ctx, "task-5", sources.ClaimRequest{Agent: "A"})
	if model.CodeOf(err) != model.CodeConflict || !strings.Contains(err.Error(), "EXPEDITX") {
		t.Fatalf("claim of a task whose entry was broken in place: %v, want CONFLICT naming the class", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "task-5.lock")); !os.IsNotExist(err) {
		t.Fatalf("a lock was written: %v", err)
	}
}

// A tasks file that changed less than settleMargin before it was read may
// change again within the same tick of the clock: no index is made from
// it, and the process parses it again at its next look rather than trust
// its signature. Once it has settled, the next write makes the index.
func TestATasksFileJustChangedIsNotIndexedNorTrusted(t *testing.T) {
	prev := settleMargin
	settleMargin = time.Hour // nothing settles
	t.Cleanup(func() { settleMargin = prev })
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tasks.json"), []byte(`[{"id": "a"}, {"id": "b"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	src := openAt(t, dir)
	n := countTasks(t)
	if _, err := src.Claim(ctx, "a", sources.ClaimRequest{Agent: "A"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, indexName)); !os.IsNotExist(err) {
		t.Fatalf("an index of a tasks file that had not settled: %v", err)
	}
	if err := src.tasks.parse(true); err != nil { // asked to index it all the same
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, indexName)); !os.IsNotExist(err) {
		t.Fatalf("a parse made an index of a tasks file that had not settled: %v", err)
	}
	if _, err := src.Get(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if n["read"] < 2 {
		t.Fatalf("the tasks file was read %d times by a claim and a get, want each to read it", n["read"])
	}
	if n["parse"] != 0 {
		t.Fatalf("the same bytes were parsed again %d times", n["parse"])
	}
	settleMargin = 0
	if _, err := src.Claim(ctx, "b", sources.ClaimRequest{Agent: "A"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, indexName)); err != nil {
		t.Fatalf("no index once the file settled: %v", err)
	}
}

// A damaged index, one for another tasks file, and one that is a link
// are not trusted: the call parses the tasks file and answers right.
func TestADamagedOrForeignIndexIsNotTrusted(t *testing.T) {
	shortSettle(t)
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		damage func(t *testing.T, dir, index string)
	}{
		{"a byte flipped in the task's bucket", func(t *testing.T, dir, index string) {
			data, _ := os.ReadFile(index)
			at := bytes.Index(data, []byte("other 3"))
			if at < 0 {
				t.Fatal("task-3's title is not in the index")
			}
			data[at] = 'O'
			os.WriteFile(index, data, 0o600)
		}},
		{"cut short", func(t *testing.T, dir, index string) {
			data, _ := os.ReadFile(index)
			os.WriteFile(index, data[:len(data)/2], 0o600)
		}},
		{"another directory's index", func(t *testing.T, dir, index string) {
			other := indexedDir(t, 20)
			data, _ := os.ReadFile(filepath.Join(other, indexName))
			os.WriteFile(index, data, 0o600)
		}},
		{"a link to another directory's index", func(t *testing.T, dir, index string) {
			other := indexedDir(t, 20)
			os.Remove(index)
			os.Symlink(filepath.Join(other, indexName), index)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := indexedDir(t, 20)
			// The entry of task-3 differs from the other directory's.
			tasks := filepath.Join(dir, "tasks.json")
			data, _ := os.ReadFile(tasks)
			os.WriteFile(tasks, bytes.Replace(data, []byte(`"title 3"`), []byte(`"other 3"`), 1), 0o644)
			time.Sleep(2 * settleMargin)
			src := openAt(t, dir)
			if _, err := src.Claim(ctx, "task-1", sources.ClaimRequest{Agent: "A"}); err != nil { // writes the index anew
				t.Fatal(err)
			}
			src.Close()
			c.damage(t, dir, filepath.Join(dir, indexName))
			n := countTasks(t)
			got, err := openAt(t, dir).Get(ctx, "task-3")
			if err != nil || got.Title != "other 3" {
				t.Fatalf("task-3: %+v, %v", got, err)
			}
			if n["parse"] == 0 {
				t.Fatal("the damaged index was trusted")
			}
		})
	}
}

// The index shows no one a title the tasks file would not: it takes the
// tasks file's permission bits (and no more than the directory's).
func TestTheIndexIsNoMoreReadableThanTheTasksFile(t *testing.T) {
	shortSettle(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o770); err != nil {
		t.Fatal(err)
	}
	tasks := filepath.Join(dir, "tasks.json")
	if err := os.WriteFile(tasks, []byte(`[{"id": "a", "title": "private"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * settleMargin)
	if _, err := openAt(t, dir).Claim(context.Background(), "a", sources.ClaimRequest{Agent: "A"}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(filepath.Join(dir, indexName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("index: %v, %v; want mode 0600 like the tasks file", fi, err)
	}
}

// FuzzTasksIndex: the index of any tasks file that parses answers every
// id as the parse does, and an id the file lacks as none; the index with
// any byte changed or cut short answers the same or says it cannot (then
// the caller parses the file), and never panics.
func FuzzTasksIndex(f *testing.F) {
	for _, s := range []string{
		`[{"id": "a", "title": "t", "priority": 2, "class": "EXPEDITE", "created_at": "2026-02-06T10:30:00.5Z"}, {"id": "a"}, {"title": "no id"}]`,
		"- id: a\n  priority: high\n- id: b\n  created_at: 9999-12-31T23:59:59Z\n- id: 7\n  priority: 99999999999999999999\n",
		`[{"id": "x", "class": "SOMEDAY", "priority": [1]}, null, {"id": "../y"}]`,
	} {
		f.Add(s, uint16(0), byte(1))
	}
	f.Fuzz(func(t *testing.T, doc string, at uint16, flip byte) {
		entries, err := parseTasks([]byte(doc))
		if err != nil {
			return
		}
		var tf tasksFile
		tf.set(tasksSig{}, nil, entries, true)
		sig := tasksSig{fileSig: fileSig{ino: 7, size: int64(len(doc)), mtime: 1, mode: 0o644}, dev: 3, ctime: 2}
		const path = "/locks/tasks.json"
		idx := encodeIndex(path, sig, tf.byID)
		ask := func(data []byte, id string) (*taskEntry, bool) {
			return lookupIn(bytes.NewReader(data), int64(len(data)), path, sig, id)
		}
		ids := []string{"absent-id"}
		for id, want := range tf.byID {
			if id == "" {
				continue // no call asks for it (refuseID); "" asks whether the index vouches at all
			}
			ids = append(ids, id)
			got, ok := ask(idx, id)
			if !ok || got == nil || got.ID != want.ID || got.Title != want.Title || got.Description != want.Description || got.Priority != want.Priority ||
				got.Class != want.Class || !got.CreatedAt.Equal(want.CreatedAt) || got.Problem != want.Problem || got.version != want.version {
				t.Fatalf("%q: index answers %+v (%v), the parse %+v", id, got, ok, want)
			}
		}
		if got, ok := ask(idx, "absent-id"); !ok || (got == nil) != (tf.byID["absent-id"] == nil) {
			t.Fatalf("an id the file lacks: %+v, %v", got, ok)
		}
		if _, ok := lookupIn(bytes.NewReader(idx), int64(len(idx)), path, tasksSig{fileSig: sig.fileSig, dev: sig.dev, ctime: sig.ctime + 1}, ids[0]); ok {
			t.Fatal("an index answered for a tasks file whose ctime moved")
		}
		bad := bytes.Clone(idx)
		bad[int(at)%len(bad)] ^= flip | 1
		for _, damaged := range [][]byte{bad, idx[:int(at)%len(idx)]} {
			for _, id := range ids {
				got, ok := ask(damaged, id)
				want := tf.byID[id]
				if ok && ((got == nil) != (want == nil) || (got != nil && (got.ID != id || got.version != want.version))) {
					t.Fatalf("a damaged index answers %q with %+v, want %+v or no answer", id, got, want)
				}
			}
		}
	})
}
