package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// tmuxPane is the dashboard running in a detached tmux session, read the
// way a person would see it.
type tmuxPane struct {
	t       *testing.T
	session string
}

func startTmux(t *testing.T, w, h int, args ...string) *tmuxPane {
	t.Helper()
	if testing.Short() {
		t.Skip("tmux screens skipped in -short mode")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	bin := binary(t)
	p := &tmuxPane{t: t, session: fmt.Sprintf("claimdeck-test-%d-%dx%d", os.Getpid(), w, h)}
	cmd := append([]string{"new", "-d", "-s", p.session, "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), "env", "HOME=" + t.TempDir(), bin}, args...)
	out, err := exec.Command("tmux", cmd...).CombinedOutput()
	for try := 0; err != nil && strings.Contains(string(out), "server exited unexpectedly") && try < 5; try++ {
		// The previous test's last session just ended and took the tmux
		// server with it while this one connected: ask a new server.
		time.Sleep(200 * time.Millisecond)
		out, err = exec.Command("tmux", cmd...).CombinedOutput()
	}
	if err != nil {
		t.Fatalf("tmux new: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "kill-session", "-t", p.session).Run() })
	return p
}

// topBar is the screen's top two lines: the tabs, and the alarm when it
// does not fit beside them.
func topBar(screen string) string {
	lines := strings.SplitN(screen, "\n", 3)
	return strings.Join(lines[:min(2, len(lines))], "\n")
}

func (p *tmuxPane) screen() string {
	out, _ := exec.Command("tmux", "capture-pane", "-p", "-t", p.session).Output()
	return string(out)
}

func (p *tmuxPane) keys(ks ...string) {
	for _, k := range ks {
		if err := exec.Command("tmux", "send-keys", "-t", p.session, k).Run(); err != nil {
			p.t.Fatalf("send-keys %s: %v", k, err)
		}
		time.Sleep(300 * time.Millisecond) // one key per frame, as a person types
	}
}

// await waits for the screen to satisfy ok; the bound is for a broken
// build that never shows it, not a speed requirement.
func (p *tmuxPane) await(what string, ok func(screen string) bool) string {
	p.t.Helper()
	var s string
	for range 600 {
		if s = p.screen(); ok(s) {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.t.Fatalf("the screen never showed %s:\n%s", what, s)
	return ""
}

// The demo in tmux answers the questions of a page at 3 a.m.: an alarm in
// the Queue view's top bar, a blocked task's reason in Parked, and the
// task's timeline in its detail.
func TestTmuxDemoAnswersTheOnCallQuestions(t *testing.T) {
	for _, sz := range [][2]int{{120, 40}, {80, 24}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			p := startTmux(t, sz[0], sz[1], "demo", "--seed", "1", "--speed", "600")
			p.await("an alarm in the Queue view's top bar", func(s string) bool {
				top := topBar(s)
				return strings.Contains(top, "Queue") && (strings.Contains(top, "URGENT") || strings.Contains(top, "ESCALATED"))
			})
			p.keys("6")
			p.await("the blocked task's reason in Parked", func(s string) bool {
				return strings.Contains(s, "Parked") && strings.Contains(s, "blocked") && strings.Contains(s, "waiting on the vendor")
			})
			p.keys("/")
			for _, r := range "state:blocked" {
				p.keys(string(r))
			}
			p.keys("Enter", "Enter", "G") // the timeline is the detail's last part
			s := p.await("the blocked task's timeline", func(s string) bool { return strings.Contains(s, "newest last") })
			if !strings.Contains(s, "unblock") || !strings.Contains(s, "block ") {
				t.Fatalf("the detail lacks the block and its unblock action:\n%s", s)
			}
			for i, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
				if n := len([]rune(l)); n > sz[0] || i >= sz[1] {
					t.Fatalf("line %d overflows the %dx%d terminal: %q", i, sz[0], sz[1], l)
				}
			}
			p.keys("Escape")
			time.Sleep(200 * time.Millisecond)
			p.keys("q")
		})
	}
}
