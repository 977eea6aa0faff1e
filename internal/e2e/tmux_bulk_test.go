package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

// TestTmuxBulkReleaseOfADeadNodesClaims is the runbook in the dashboard, at
// 120×40 and 80×24: :stale, :source to one source and back, * marks every
// stale claim of ORACLE_LOCAL (its agents' leases ran out) shown by the filter, r previews them and
// takes one reason; one claim is taken over by a person before y, and
// the summary names it refused while the others are released.
func TestTmuxBulkReleaseOfADeadNodesClaims(t *testing.T) {
	for _, sz := range [][2]int{{120, 40}, {80, 24}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			c := cmdtest.NewCLI(t, cmdtest.SQLiteSource+"  - name: locks\n    kind: lockdir\n    path: DIR/.locks\n")
			withDownNode(t, c, "  holders:\n    worker-7: ORACLE_LOCAL\n    worker-9: ORACLE_LOCAL\n")
			claim := func(source, agent, title string) string {
				id := c.Run(0, "--source", source, "create", "--title", title).Task.PageID
				c.Run(0, "--source", source, "claim", "--task", id, "--agent-name", agent, "--lease", "1s")
				return id
			}
			claim("local", "worker-7", "index shard one")
			beat := claim("local", "worker-9", "index shard two")
			claim("locks", "worker-7", "index shard three")
			time.Sleep(1500 * time.Millisecond) // the leases run out: the claims are stale

			p := startTmux(t, sz[0], sz[1], "--config", c.Conf)
			p.await("the dashboard", func(s string) bool { return strings.Contains(s, "Queue") })
			p.keys(":")
			for _, r := range "stale" {
				p.keys(string(r))
			}
			p.keys("Enter")
			p.await("three stale claims", func(s string) bool { return strings.Contains(s, "sort: severity · 3 shown") })
			p.keys(":")
			for _, r := range "source locks" {
				p.keys(string(r))
			}
			p.keys("Enter")
			p.await("the Stale view scoped to locks", func(s string) bool {
				return strings.Contains(s, "source locks ·") && strings.Contains(s, "1 shown")
			})
			p.keys(":")
			for _, r := range "source all" {
				p.keys(string(r))
			}
			p.keys("Enter", "/")
			for _, r := range "node:oracle_local level>=stale" {
				p.keys(string(r))
			}
			p.keys("Enter", "*", "r")
			p.await("the preview", func(s string) bool {
				return strings.Contains(s, "Force-release 3 marked tasks?") && strings.Contains(s, "local 2 · locks 1")
			})
			for _, r := range "node lost" {
				p.keys(string(r))
			}
			p.keys("Enter")
			p.await("the question", func(s string) bool { return strings.Contains(s, "Apply to 3 tasks, one by one?") })
			c.Run(0, "--source", "local", "takeover", "--task", beat, "--yes")
			time.Sleep(200 * time.Millisecond)
			p.keys("y")
			s := p.await("the summary", func(s string) bool { return strings.Contains(s, "Force-release summary") })
			// Reasons are wrapped, not cut: read the words across lines.
			if words := strings.Join(strings.Fields(s), " "); !strings.Contains(words, "2 applied, 1 refused, 0 failed") || !strings.Contains(words, "changed since you looked") {
				t.Fatalf("the summary does not name the changed claim refused:\n%s", s)
			}
			for i, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
				if n := len([]rune(l)); n > sz[0] || i >= sz[1] {
					t.Fatalf("line %d overflows the %dx%d terminal: %q", i, sz[0], sz[1], l)
				}
			}
			if got := c.Run(0, "--source", "local", "get", "--task", beat).Task; got.ClaimedBy != "HUMAN" {
				t.Fatalf("the claim taken over midway was released: %+v", got)
			}
			p.keys("Escape", "q")
		})
	}
}
