package lockdir

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// A tasks file planted by someone else must not hang claimdeck, exhaust
// its memory, or show it another user's file.
func TestAPlantedTasksFileIsRefusedNamingIt(t *testing.T) {
	private := filepath.Join(t.TempDir(), "id_ed25519")
	if err := os.WriteFile(private, []byte("- PRIVATE-KEY-BYTES: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		plant func(p string) error
		says  string
	}{
		{"a FIFO answers at once", func(p string) error { return syscall.Mkfifo(p, 0o644) }, "named pipe"},
		{"a link to /dev/zero is not followed", func(p string) error { return os.Symlink("/dev/zero", p) }, "symbolic link"},
		{"a link to a private file is not followed", func(p string) error { return os.Symlink(private, p) }, "symbolic link"},
		{"a file that is not a task list is described, not quoted", func(p string) error {
			return os.WriteFile(p, []byte("PRIVATE-KEY-BYTES\n"), 0o644)
		}, "line 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			tasks := filepath.Join(dir, "tasks.json")
			if err := c.plant(tasks); err != nil {
				t.Fatal(err)
			}
			_, err := Open(Config{Name: "planted", Path: dir})
			if model.CodeOf(err) != model.CodeMisconfigured || !strings.Contains(err.Error(), tasks) || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("open: %v, want MISCONFIGURED naming %s and saying %q", err, tasks, c.says)
			}
			if strings.Contains(err.Error(), "PRIVATE") {
				t.Fatalf("the error quotes the file: %v", err)
			}
		})
	}
}

// Planted after the source opened, a FIFO fails the next poll and write
// the same way: nothing waits on it.
func TestATasksFileReplacedByAFIFOFailsThePollAtOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := openAt(t, dir)
	if _, err := src.Create(ctx, sources.NewTask{ID: crashTask, Title: "Design the VPC module"}); err != nil {
		t.Fatal(err)
	}
	tasks := filepath.Join(dir, "tasks.json")
	if err := os.Remove(tasks); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(tasks, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Poll(ctx, ""); model.CodeOf(err) != model.CodeMisconfigured || !strings.Contains(err.Error(), "named pipe") {
		t.Fatalf("poll: %v", err)
	}
	if _, err := src.Create(ctx, sources.NewTask{ID: "other", Title: "x"}); model.CodeOf(err) != model.CodeMisconfigured {
		t.Fatalf("create: %v", err)
	}
}

func TestAnArchiveThatIsAFIFOFailsThePollAtOnce(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "archive"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := openAt(t, dir)
	if _, err := src.Poll(context.Background(), ""); model.CodeOf(err) != model.CodeMisconfigured || !strings.Contains(err.Error(), "archive") {
		t.Fatalf("poll: %v", err)
	}
}

// The flock file is the directory's only gate: a reader that can open it
// can hold it. Ours is made 0600, a wider one of ours tightened, another
// user's refused.
func TestTheFlockFileIsPrivate(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := openAt(t, dir)
	if _, err := src.Create(ctx, sources.NewTask{ID: "a", Title: "x"}); err != nil {
		t.Fatal(err)
	}
	flock := filepath.Join(dir, flockName)
	if fi, err := os.Stat(flock); err != nil || fi.Mode().Perm()&0o077 != 0 {
		t.Fatalf("a new flock file: %v %v, want 0600", fi.Mode(), err)
	}
	wide := t.TempDir()
	if err := os.WriteFile(filepath.Join(wide, flockName), nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(wide, flockName), 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := openAt(t, wide).Create(ctx, sources.NewTask{ID: "a", Title: "x"}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(wide, flockName)); fi.Mode().Perm() != 0o640 {
		t.Fatalf("a 0666 flock file of ours is %v after a write, want 0640", fi.Mode().Perm())
	}
	theirs := t.TempDir()
	p := filepath.Join(theirs, flockName)
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(p, 65534, 65534); err != nil {
		t.Skipf("cannot give the file to another user: %v", err)
	}
	_, err := openAt(t, theirs).Create(ctx, sources.NewTask{ID: "a", Title: "x"})
	if model.CodeOf(err) != model.CodeMisconfigured || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("another user's 0644 flock file: %v, want MISCONFIGURED naming it", err)
	}
}

// A held flock is waited for within a bound, and the refusal names the
// holder's pid.
func TestAHeldFlockIsWaitedForWithinABoundNamingItsHolder(t *testing.T) {
	defer func(w time.Duration) { flockWait = w }(flockWait)
	flockWait = 50 * time.Millisecond
	dir := t.TempDir()
	src := openAt(t, dir)
	f, err := os.OpenFile(filepath.Join(dir, flockName), os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	_, err = src.Create(context.Background(), sources.NewTask{ID: "a", Title: "x"})
	if model.CodeOf(err) != model.CodeAPIError || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("create under a held flock: %v, want API_ERROR naming pid %d", err, os.Getpid())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	flockWait = time.Hour
	if _, err := src.Create(ctx, sources.NewTask{ID: "a", Title: "x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("create with its context canceled: %v", err)
	}
}

// A lock file is never written larger than its readers read: a history of
// texts at their limits loses its oldest events instead.
func TestALockFileNeverOutgrowsItsReaders(t *testing.T) {
	rec := &record{TaskID: "a", Agent: "A", Title: strings.Repeat("<", model.MaxTitle)}
	for i := 0; i < maxHistory; i++ {
		rec.addEvent(model.Event{Actor: "alice", Action: "comment", Reason: strings.Repeat("&", model.MaxComment)})
	}
	data := rec.marshal()
	if len(data) > maxFile {
		t.Fatalf("marshalled %d bytes, over the %d a reader reads", len(data), maxFile)
	}
	back, problem := parseLock(data)
	if problem != "" || back.Title != rec.Title || len(back.History) == 0 || len(back.History) == maxHistory {
		t.Fatalf("read back: problem %q, %d events of %d", problem, len(back.History), maxHistory)
	}
}

// A tasks file written by hand past the limits: the claim is refused
// before any write, rather than leaving a lock nobody can read (LOST_LOCK
// on every heartbeat, "repair by hand" on release).
func TestAHandWrittenHugeTitleIsRefusedAtClaimNotWedged(t *testing.T) {
	dir := t.TempDir()
	entry := `[{"id": "huge", "title": "` + strings.Repeat("x", maxFile+1) + `"}]`
	if err := os.WriteFile(filepath.Join(dir, "tasks.json"), []byte(entry), 0o644); err != nil {
		t.Fatal(err)
	}
	src := openAt(t, dir)
	_, err := src.Claim(context.Background(), "huge", sources.ClaimRequest{Agent: "A"})
	if model.CodeOf(err) != model.CodeMisconfigured || !strings.Contains(err.Error(), "shorten") {
		t.Fatalf("claim of a task with a title over 1 MiB: %v, want MISCONFIGURED", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "huge.lock")); !os.IsNotExist(err) {
		t.Fatalf("a lock was written: %v", err)
	}
}
