package lockdir

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// outside is a directory beside the lock directory that a link inside it
// points to; nothing may ever be written there.
func outside(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "keep"), []byte("untouched\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func untouched(t *testing.T, dir, what string) {
	t.Helper()
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "keep"))
	if len(names) != 1 || string(data) != "untouched\n" {
		var got []string
		for _, n := range names {
			got = append(got, n.Name())
		}
		t.Fatalf("%s wrote outside the lock directory, through a link: %v", what, got)
	}
}

func TestAnArchiveLinkIsRefusedWithAnErrorNeverFollowed(t *testing.T) {
	ctx := context.Background()
	out := outside(t)
	dir := t.TempDir()
	src := openAt(t, dir)
	if _, err := src.Create(ctx, sources.NewTask{ID: crashTask, Title: "Design the VPC module"}); err != nil {
		t.Fatal(err)
	}
	held, err := src.Claim(ctx, crashTask, sources.ClaimRequest{Agent: "SANDMAN"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, filepath.Join(dir, "archive")); err != nil {
		t.Fatal(err)
	}
	refused := func(what string, err error) {
		t.Helper()
		if model.CodeOf(err) != model.CodeMisconfigured || !strings.Contains(err.Error(), filepath.Join(dir, "archive")+" is a symbolic link") {
			t.Errorf("%s with archive/ a link: %v, want MISCONFIGURED naming archive/", what, err)
		}
	}
	// Force-release would retire the lock to archive/: it is refused
	// before it starts, not answered ok with the lock left spent.
	_, err = src.ForceRelease(ctx, crashTask, sources.Human{Actor: "alice", Reason: "stuck", Expect: held.Version})
	refused("force-release", err)
	_, err = src.Finish(ctx, crashTask, held.Claim().Token, sources.Outcome{State: model.StateFailed, Reason: "broke"})
	refused("fail", err)
	_, err = src.Poll(ctx, "")
	refused("a poll", err)
	untouched(t, out, "archiving")
	if fi, err := os.Lstat(filepath.Join(dir, "archive")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the archive link itself was replaced: %v %v", fi, err)
	}
	// Replaced by a directory, the lock is as it was: nothing was half done.
	if err := os.Remove(filepath.Join(dir, "archive")); err != nil {
		t.Fatal(err)
	}
	if got := get(t, src); got.State != model.StateClaimed || got.Claim().Token != held.Claim().Token {
		t.Fatalf("after the refusals the task is %s held by %q", got.State, got.Claim().Name)
	}
}

func TestALinkedLockFileIsNeverOpenedForWrites(t *testing.T) {
	out := outside(t)
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(out, "keep"), filepath.Join(dir, ".claimdeck.flock")); err != nil {
		t.Fatal(err)
	}
	src := openAt(t, dir)
	_, err := src.Create(context.Background(), sources.NewTask{ID: crashTask, Title: "Design the VPC module"})
	if model.CodeOf(err) != model.CodeMisconfigured || !strings.Contains(err.Error(), ".claimdeck.flock is a symbolic link") {
		t.Fatalf("a write with the directory's lock file a link out of it: %v, want MISCONFIGURED naming the link", err)
	}
	untouched(t, out, "taking the write lock")
}
