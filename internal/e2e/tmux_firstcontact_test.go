package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

// firstContact is an on-call setup as a new user makes one: a SQLite
// queue with a few tasks, one agent's healthy live lease, and a mesh
// registry that says ORACLE_LOCAL, where agent looper runs, is DOWN.
type firstContact struct {
	c              *cmdtest.CLI
	live, liveTok  string
	queued         []string
	liveTitle      string
	registry, conf string
}

// withDownNode writes a mesh registry whose one node, ORACLE_LOCAL, is
// DOWN and adds it to c's configuration with the rest of the mesh section
// given; it returns the registry's path.
func withDownNode(t *testing.T, c *cmdtest.CLI, mesh string) string {
	t.Helper()
	reg := filepath.Join(c.Dir, "mesh-nodes.json")
	if err := os.WriteFile(reg, []byte(`{"nodes": {
  "ORACLE_LOCAL": {"webhook": "http://127.0.0.1:1/hooks/agent", "health": "http://127.0.0.1:1/hooks/health", "status": "down"}
}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	conf, _ := os.ReadFile(c.Conf)
	conf = append(conf, fmt.Sprintf("mesh:\n  registry: %s\n  record: %s\n%s", reg, filepath.Join(c.Dir, "sweep.json"), mesh)...)
	if err := os.WriteFile(c.Conf, conf, 0o600); err != nil {
		t.Fatal(err)
	}
	return reg
}

func newFirstContact(t *testing.T) *firstContact {
	t.Helper()
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	// Its health URL refuses: the poller finds it DOWN at the first ping.
	reg := withDownNode(t, c, "  ping_every: 200ms\n  down_after: 1\n  holders:\n    looper: ORACLE_LOCAL\n")
	f := &firstContact{c: c, registry: reg, conf: c.Conf, liveTitle: "looping reindex"}
	for i := range 5 {
		f.queued = append(f.queued, c.Run(0, "create", "--title", fmt.Sprintf("queued chore %d", i)).Task.PageID)
	}
	f.live = c.Run(0, "create", "--title", f.liveTitle).Task.PageID
	// A healthy lease: its agent runs on no DOWN node.
	f.liveTok = c.Run(0, "claim", "--task", f.live, "--agent-name", "steady", "--lease", "30m").Task.LockToken
	return f
}

// cursorRow is the index among the table's lines of the row under the
// cursor (marked ›), or -1.
func cursorRow(screen string) int {
	lines := strings.Split(screen, "\n")
	for i, l := range lines[min(3, len(lines)):] {
		if strings.HasPrefix(l, "›") {
			return i
		}
	}
	return -1
}

// A burst of keys (tmux writes "jjj" at once, as SSH and key repeat do)
// moves three rows, not one.
func TestTmuxABurstOfKeysMovesThreeRows(t *testing.T) {
	f := newFirstContact(t)
	p := startTmux(t, 120, 40, "--config", f.conf)
	p.await("the dashboard", func(s string) bool { return strings.Contains(s, "queued chore 4") })
	p.keys("7")
	p.await("the All view", func(s string) bool { return strings.Contains(s, "7 All") && cursorRow(s) == 0 })
	p.keys("jjj")
	p.await("the cursor three rows down", func(s string) bool { return cursorRow(s) == 3 })
}

// A takeover of a live lease confirmed after its holder heartbeated is
// refused: the person decided about the lease as shown, expiry included,
// and a renewal since is not what they saw.
func TestTmuxATakeoverAfterAHeartbeatIsRefused(t *testing.T) {
	f := newFirstContact(t)
	p := startTmux(t, 120, 40, "--config", f.conf)
	p.await("the dashboard", func(s string) bool { return strings.Contains(s, "Queue") })
	p.keys("/")
	for _, r := range "looping" {
		p.keys(string(r))
	}
	p.keys("Enter", "2")
	p.await("the live lease", func(s string) bool { return strings.Contains(s, "steady") && strings.Contains(s, "1 shown") })
	p.keys("c", "Enter")
	p.await("the question", func(s string) bool { return strings.Contains(s, "[y/N]") })
	f.c.Run(0, "heartbeat", "--task", f.live, "--lock-token", f.liveTok)
	time.Sleep(3 * time.Second) // the dashboard polls the heartbeat in
	p.keys("y")
	s := p.await("the outcome", func(s string) bool { return strings.Contains(s, "applied") || strings.Contains(s, "refused") })
	if !strings.Contains(s, "takeover") || !strings.Contains(s, "refused") || !strings.Contains(s, "renewed since you looked") {
		t.Fatalf("a takeover confirmed after a heartbeat was not refused as renewed since:\n%s", s)
	}
	if r := f.c.Run(0, "heartbeat", "--task", f.live, "--lock-token", f.liveTok); r.Task == nil {
		t.Fatalf("the holder lost its lease to a refused takeover: %+v", r)
	}
}

// A bulk cancel of three marked tasks asks the reason, previews with it,
// and cancels the three.
func TestTmuxABulkCancelOfThreeMarkedTasksCancelsThree(t *testing.T) {
	f := newFirstContact(t)
	p := startTmux(t, 120, 40, "--config", f.conf)
	p.await("the queue", func(s string) bool { return strings.Contains(s, "queued chore 4") })
	p.keys("Space", "Space", "Space", "x")
	s := p.await("the reason asked first", func(s string) bool { return strings.Contains(s, "Cancel 3 marked tasks?") })
	// The marked tasks are named, id and title, not only counted.
	named := 0
	for i, id := range f.queued {
		if strings.Contains(s, id[:8]) && strings.Contains(s, fmt.Sprintf("queued chore %d", i)) {
			named++
		}
	}
	if named != 3 {
		t.Fatalf("the bulk dialog names %d of the 3 marked tasks:\n%s", named, s)
	}
	for _, r := range "duplicate" {
		p.keys(string(r))
	}
	p.keys("Enter")
	p.await("the preview", func(s string) bool { return strings.Contains(s, "Apply to 3 tasks, one by one?") })
	p.keys("y")
	s = p.await("the summary", func(s string) bool { return strings.Contains(s, "Cancel summary") })
	if !strings.Contains(s, "3 applied, 0 refused, 0 failed") {
		t.Fatalf("the bulk cancel did not cancel the three:\n%s", s)
	}
}

// At 80×24 and 60×20 the DOWN node is named from the Queue view, and at 80
// columns the footer keeps ? help.
func TestTmuxTheDownNodeIsNamedAtNarrowWidths(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {60, 20}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			f := newFirstContact(t)
			p := startTmux(t, sz[0], sz[1], "--config", f.conf)
			s := p.await("the DOWN node in the Queue's top bar", func(s string) bool {
				top := topBar(s)
				return strings.Contains(top, "Queue") && strings.Contains(top, "ORACLE_LOCAL DOWN")
			})
			lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
			if sz[0] == 80 && !strings.Contains(lines[len(lines)-1], "? help") {
				t.Fatalf("the footer at 80 columns lacks ? help:\n%s", s)
			}
			for i, l := range lines {
				if n := len([]rune(l)); n > sz[0] {
					t.Fatalf("line %d overflows %d columns: %q", i, sz[0], l)
				}
			}
		})
	}
}

// Help scrolls at 80×24 and closes only on esc, ? or q.
func TestTmuxHelpScrollsAt80x24(t *testing.T) {
	f := newFirstContact(t)
	p := startTmux(t, 80, 24, "--config", f.conf)
	p.await("the dashboard", func(s string) bool { return strings.Contains(s, "Queue") })
	p.keys("?")
	p.await("the help, longer than the screen", func(s string) bool { return strings.Contains(s, "more lines") })
	p.keys("PageDown", "PageDown", "j", "End")
	p.await("the help's last lines", func(s string) bool {
		return strings.Contains(s, "Mouse: click selects") && strings.Contains(s, "Keys")
	})
	p.keys("Escape")
	p.await("the help closed", func(s string) bool {
		return !strings.Contains(s, "Mouse: click selects") && strings.Contains(s, "? help")
	})
}
