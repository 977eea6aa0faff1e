package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

// The terminal's title carries the worst state, so a person sees it from
// another tab: tmux's pane title goes from quiet to "1 DOWN" when the one
// node stops answering its health pings.
func TestTmuxTheTitleSaysWhenANodeGoesDown(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	node := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `{"node": "ORACLE_LOCAL", "status": "healthy", "queue_depth": 0, "claimed_tasks": []}`)
	}))
	defer node.Close()
	reg := filepath.Join(c.Dir, "mesh-nodes.json")
	if err := os.WriteFile(reg, []byte(fmt.Sprintf(`{"nodes": {"ORACLE_LOCAL": {"webhook": "%s/hooks/agent", "health": "%s/hooks/health"}}}`, node.URL, node.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	conf, _ := os.ReadFile(c.Conf)
	conf = append(conf, fmt.Sprintf("mesh:\n  registry: %s\n  record: %s\n  ping_every: 200ms\n  down_after: 1\n", reg, filepath.Join(c.Dir, "sweep.json"))...)
	if err := os.WriteFile(c.Conf, conf, 0o600); err != nil {
		t.Fatal(err)
	}
	c.Run(0, "create", "--title", "a chore")
	p := startTmux(t, 100, 30, "--config", c.Conf)
	title := func() string {
		out, _ := exec.Command("tmux", "display", "-p", "-t", p.session, "#{pane_title}").Output()
		return strings.TrimSpace(string(out))
	}
	p.await("the node healthy", func(s string) bool { return strings.Contains(s, "4 Nodes 1") && !strings.Contains(s, "DOWN") })
	p.await("a quiet title", func(string) bool { return title() == "claimdeck" })
	node.Close()
	p.await("the DOWN node in the title", func(string) bool { return strings.Contains(title(), "claimdeck · 1 DOWN") })
	p.keys("q")
}
