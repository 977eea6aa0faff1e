package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

// lockdirConfig writes a configuration with one lock directory, dir/.locks,
// made, and returns the file and the directory.
func lockdirConfig(t *testing.T) (conf, locks string) {
	t.Helper()
	dir := t.TempDir()
	locks = filepath.Join(dir, ".locks")
	if err := os.Mkdir(locks, 0o700); err != nil {
		t.Fatal(err)
	}
	conf = filepath.Join(dir, "config.yaml")
	body := fmt.Sprintf("actor: alice\naudit_log: %s\nsources:\n  - name: locks\n    kind: lockdir\n    path: %s\n", filepath.Join(dir, "audit.jsonl"), locks)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return conf, locks
}

// ended waits for a started process to end. The test's own deadline is
// the only bound: a process that never ends fails the test there.
func ended(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode()
}

// holdsOpen waits until process pid has path open: it has reached the
// point where it waits on that file.
func holdsOpen(t *testing.T, pid int, path string) {
	t.Helper()
	for {
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		for _, fd := range fds {
			if target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); target == path {
				return
			}
		}
		if syscall.Kill(pid, 0) != nil {
			t.Fatalf("process %d ended before opening %s", pid, path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// claimWaitingOnFlock starts `claimdeck claim` (run through wrap, e.g.
// nohup, when given) on a lock directory whose flock this test holds, and
// returns once the claim waits on it, with its output and the directory.
func claimWaitingOnFlock(t *testing.T, wrap ...string) (cmd *exec.Cmd, out *bytes.Buffer, locks string) {
	t.Helper()
	bin := binary(t)
	conf, locks := lockdirConfig(t)
	flock := filepath.Join(locks, ".claimdeck.flock")
	f, err := os.OpenFile(flock, os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	out = &bytes.Buffer{}
	args := append(wrap, bin, "--config", conf, "claim", "--task", "deploy-vpc", "--agent-name", "SANDMAN")
	cmd = exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	holdsOpen(t, cmd.Process.Pid, flock)
	return cmd, out, locks
}

// Another process holding the directory's flock used to freeze every
// writer, SIGTERM ignored. Now the wait heeds the first SIGTERM, and the
// answer names who holds the lock.
func TestAClaimWaitingOnAHeldFlockEndsOnSIGTERM(t *testing.T) {
	cmd, out, locks := claimWaitingOnFlock(t)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code := ended(t, cmd)
	if code == 0 || !strings.Contains(out.String(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("exit %d, output %s: want a failure naming pid %d as the holder", code, out.String(), os.Getpid())
	}
	if _, err := os.Lstat(filepath.Join(locks, "deploy-vpc.lock")); !os.IsNotExist(err) {
		t.Fatalf("the claim went ahead without the lock: %v", err)
	}
}

// A command started to outlive its terminal (nohup: SIGHUP ignored) does
// not stop at a hangup, though an interactive one does: the hangup goes
// unheard, and the SIGTERM after it is the first signal the command saw.
func TestANohupCommandIgnoresTheHangup(t *testing.T) {
	nohup, err := exec.LookPath("nohup")
	if err != nil {
		t.Skip("no nohup on PATH")
	}
	cmd, out, _ := claimWaitingOnFlock(t, nohup)
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	// Were the hangup heard, the command would be stopping by now; a
	// slower machine only makes this check pass more often, never fail.
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code := ended(t, cmd)
	if code == 129 || strings.Contains(out.String(), "hangup") || !strings.Contains(out.String(), "terminated: stopping") {
		t.Fatalf("exit %d, output %s: want the hangup unheard and the SIGTERM the first signal", code, out.String())
	}
}

// A FIFO planted as the tasks file used to hang list, next and claim. Now
// the command ends by itself, naming the file.
func TestAFIFOTasksFileEndsTheCommandAtOnce(t *testing.T) {
	bin := binary(t)
	conf, locks := lockdirConfig(t)
	tasks := filepath.Join(locks, "tasks.json")
	if err := syscall.Mkfifo(tasks, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"list"}, {"next"}, {"claim", "--task", "x", "--agent-name", "A"}} {
		var out bytes.Buffer
		cmd := exec.Command(bin, append([]string{"--config", conf}, args...)...)
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if code := ended(t, cmd); code != 3 || !strings.Contains(out.String(), tasks) || !strings.Contains(out.String(), "named pipe") {
			t.Errorf("%v: exit %d, %s: want MISCONFIGURED naming the FIFO", args, code, out.String())
		}
	}
}

// The first SIGTERM cancels; a wait that cannot hear it (here, a person's
// y/N on a terminal) ends at the second.
func TestASecondSIGTERMEndsTheProcessWhateverItWaitsOn(t *testing.T) {
	bin := binary(t)
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	conf, _ := lockdirConfig(t)
	out, err := exec.Command(bin, "--config", conf, "create", "--title", "Design the VPC module").Output()
	var created cmdtest.Result
	if err != nil || json.Unmarshal(out, &created) != nil {
		t.Fatalf("create: %v\n%s", err, out)
	}
	session := fmt.Sprintf("claimdeck-signal-%d", os.Getpid())
	if out, err := exec.Command("tmux", "new", "-d", "-s", session, "-x", "120", "-y", "20", "env", "HOME="+t.TempDir(), bin, "--config", conf, "takeover", "--task", created.Task.PageID).CombinedOutput(); err != nil {
		t.Fatalf("tmux new: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "kill-session", "-t", session).Run() })
	pidText, err := exec.Command("tmux", "display", "-p", "-t", session, "#{pane_pid}").Output()
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Sscan(string(pidText), &pid); err != nil {
		t.Fatal(err)
	}
	for {
		screen, _ := exec.Command("tmux", "capture-pane", "-p", "-t", session).Output()
		if strings.Contains(string(screen), "Proceed? [y/N]") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The second signal goes once the first was heard: two sent at once
	// reach a process as one.
	for _, heard := range []string{"again stops at once", ""} {
		if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		for heard != "" {
			screen, _ := exec.Command("tmux", "capture-pane", "-p", "-t", session).Output()
			if strings.Contains(string(screen), heard) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	for syscall.Kill(pid, 0) == nil {
		time.Sleep(50 * time.Millisecond)
	}
}

// The dashboard over a lock directory whose tasks file is a FIFO used to
// show a blank screen that ignored q and ctrl-c. Now the source stands in
// with its error, named, and q quits.
func TestTmuxDashboardOverAFIFOTasksFileShowsItAndQuits(t *testing.T) {
	conf, locks := lockdirConfig(t)
	tasks := filepath.Join(locks, "tasks.json")
	if err := syscall.Mkfifo(tasks, 0o644); err != nil {
		t.Fatal(err)
	}
	p := startTmux(t, 160, 30, "--config", conf)
	p.await("the FIFO named", func(s string) bool { return strings.Contains(s, "named pipe") })
	p.keys("q")
	for exec.Command("tmux", "has-session", "-t", p.session).Run() == nil {
		time.Sleep(50 * time.Millisecond)
	}
}
