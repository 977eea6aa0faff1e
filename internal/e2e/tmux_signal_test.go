package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The first SIGTERM, SIGINT or SIGHUP ends the dashboard, gives the
// terminal back and removes the demo's directory. Bubble Tea's own signal handler used to race main's: when main's
// cancel won, the handler blocked for ever sending its quit to an event
// loop that had gone, and the program's shutdown waited on it — about half
// the runs froze. The demo runs in a real pty (tmux) twenty times; each
// must end within 3 s of the signal (a bound on the wait, not a speed
// requirement: a frozen run never ends) and leave the pty in cooked mode.
func TestTmuxTheFirstSignalEndsTheDashboard(t *testing.T) {
	if testing.Short() {
		t.Skip("tmux screens skipped in -short mode")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	bin := binary(t)
	// A session of its own keeps the tmux server up between runs: killing
	// the last session ends the server, and the next run's would race it.
	keeper := fmt.Sprintf("claimdeck-sig-keeper-%d", os.Getpid())
	if out, err := exec.Command("tmux", "new", "-d", "-s", keeper, "sleep", "3600").CombinedOutput(); err != nil {
		t.Fatalf("tmux new: %v\n%s", err, out)
	}
	defer func() { _ = exec.Command("tmux", "kill-session", "-t", keeper).Run() }()
	runs := []syscall.Signal{}
	for range 20 {
		runs = append(runs, syscall.SIGTERM)
	}
	for range 4 {
		runs = append(runs, syscall.SIGINT, syscall.SIGHUP)
	}
	frozen := 0
	for i, sig := range runs {
		if !signalEndsRun(t, bin, i, sig) {
			frozen++
		}
	}
	if frozen > 0 {
		t.Fatalf("%d of %d runs did not end within 3 s of the first signal", frozen, len(runs))
	}
}

// signalEndsRun starts the demo in a tmux pane, waits for its first
// screen, signals it once and reports whether it ended and restored the
// terminal.
func signalEndsRun(t *testing.T, bin string, i int, sig syscall.Signal) bool {
	t.Helper()
	dir := t.TempDir()
	done := filepath.Join(dir, "done")
	// After the dashboard, the pane's shell records the exit status and
	// the terminal's modes, then waits to be killed.
	script := fmt.Sprintf("%s demo --seed %d 2>%s.err; echo $? > %s.tmp; stty -a >> %s.tmp; mv %s.tmp %s; sleep 60",
		bin, i+1, done, done, done, done, done)
	p := &tmuxPane{t: t, session: fmt.Sprintf("claimdeck-sig-%d-%d", os.Getpid(), i)}
	if out, err := exec.Command("tmux", "new", "-d", "-s", p.session, "-x", "100", "-y", "30", "env", "HOME="+dir, "TMPDIR="+dir, "sh", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("tmux new: %v\n%s", err, out)
	}
	defer func() { _ = exec.Command("tmux", "kill-session", "-t", p.session).Run() }()
	p.await("the demo's first screen", func(s string) bool { return strings.Contains(s, "Queue") && strings.Contains(s, "demo") })
	// Vary the moment: at once, or while a poll or a frame is under way.
	time.Sleep(time.Duration(i%4) * 150 * time.Millisecond)
	pid := dashboardPid(t, p.session, bin)
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatalf("run %d: kill %d: %v", i, pid, err)
	}
	for range 30 {
		if b, err := os.ReadFile(done); err == nil {
			status, modes, _ := strings.Cut(string(b), "\n")
			if strings.Contains(modes, "-icanon") || strings.Contains(modes, "-echo ") {
				t.Errorf("run %d (%v): the terminal was left raw:\n%s", i, sig, modes)
			}
			if status != "0" {
				stderr, _ := os.ReadFile(done + ".err")
				t.Errorf("run %d (%v): exit status %s: %s\n%s", i, sig, status, stderr, p.screen())
			}
			if left, _ := filepath.Glob(filepath.Join(dir, "claimdeck-demo-*")); len(left) > 0 {
				t.Errorf("run %d (%v): the demo's directory was left behind: %v", i, sig, left)
			}
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("run %d (%v): still running 3 s after the first signal", i, sig)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	return false
}

// dashboardPid is the process id of bin running in the session's pane.
func dashboardPid(t *testing.T, session, bin string) int {
	t.Helper()
	out, err := exec.Command("tmux", "display", "-p", "-t", session, "#{pane_pid}").Output()
	if err != nil {
		t.Fatalf("tmux display: %v", err)
	}
	shell := strings.TrimSpace(string(out))
	kids, _ := os.ReadFile("/proc/" + shell + "/task/" + shell + "/children")
	for _, k := range strings.Fields(string(kids)) {
		if exe, _ := os.Readlink("/proc/" + k + "/exe"); exe == bin {
			pid, _ := strconv.Atoi(k)
			return pid
		}
	}
	t.Fatalf("no %s under the pane's shell %s (children %q)", bin, shell, kids)
	return 0
}
