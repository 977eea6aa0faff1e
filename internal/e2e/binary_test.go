package e2e

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/claimdeck/claimdeck/internal/ntask"
	"github.com/claimdeck/claimdeck/internal/rootcmd"
)

// The tests that run claimdeck as a real process (dashboard screens in
// tmux, signals, agents as processes, ntask by its name) run this test
// binary under the name claimdeck: TestMain sees the name and runs Main()
// instead of the tests. So the binary is built once per test run, by go
// test itself, instead of once per test (a 35 MB link each, minutes on a
// loaded 2-core machine).

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

func TestMain(m *testing.M) {
	switch filepath.Base(os.Args[0]) {
	case "claimdeck", ntask.Name:
		rootcmd.Main() // exits
	}
	// Under -race the claimdeck processes the tests start are this
	// race-built binary. Bubble Tea's shutdown closes its input reader
	// while its read loop may still be reading it (cancelreader, a race in
	// the library's timeout path, not ours); a race report would end those
	// processes with status 66 and fail tests about something else. The
	// processes still print any report; the race detector's verdict on
	// claimdeck's own code is the in-process tests'. The race runtime also
	// sleeps a second at every exit (atexit_sleep_ms, default 1000) for
	// late reports: with hundreds of processes started, that second was
	// most of this package's time under -race (`--version` 1.07 s wall,
	// 0.07 s of CPU).
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "exitcode=0 atexit_sleep_ms=0")
	}
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binaries returns a directory holding claimdeck, and ntask linked to it,
// to put first on PATH. The directory and the binary are mode 0755, so
// another user can run it.
func binaries(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("real processes skipped in -short mode")
	}
	binOnce.Do(func() { binDir, binErr = installSelf() })
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binDir
}

// binary is the claimdeck executable for a test that runs it as a process.
func binary(t testing.TB) string {
	t.Helper()
	return filepath.Join(binaries(t), "claimdeck")
}

func installSelf() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "claimdeck-test-bin-")
	if err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "claimdeck")
	if err := copyFile(self, bin); err != nil {
		return "", fmt.Errorf("install the test binary as claimdeck: %w", err)
	}
	return dir, os.Symlink("claimdeck", filepath.Join(dir, ntask.Name))
}

func copyFile(from, to string) error {
	if os.Link(from, to) == nil {
		return os.Chmod(to, 0o755)
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
