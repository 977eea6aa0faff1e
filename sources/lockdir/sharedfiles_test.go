package lockdir

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

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
