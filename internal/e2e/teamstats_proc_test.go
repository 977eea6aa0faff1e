package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/sources/stats"
)

// An override made from one HOME is counted by `stats` and by a
// read-only metrics unit in another: both read each source's shared
// trail (one SQLite file, one lock directory, one Notion database), not
// the local journal, which holds only what its own HOME did.
func TestOverridesFromOneHomeAreCountedInAnother(t *testing.T) {
	notionYAML, _ := cmdtest.NotionSource(t)
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource+"  - name: locks\n    kind: lockdir\n    path: DIR/.locks\n"+notionYAML)
	bin := binary(t)
	homeA, homeB := t.TempDir(), t.TempDir()
	confB := filepath.Join(homeB, "config.yaml")
	body, err := os.ReadFile(c.Conf)
	if err != nil {
		t.Fatal(err)
	}
	body = bytes.Replace(body, []byte("actor: alice\naudit_log: "+filepath.Join(c.Dir, "audit.jsonl")),
		[]byte("actor: bob\naudit_log: "+filepath.Join(homeB, "audit.jsonl")), 1)
	if err := os.WriteFile(confB, body, 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(home, conf string, args ...string) ([]byte, int) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--config", conf}, args...)...)
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "XDG_STATE_HOME=" + filepath.Join(home, "state")}
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			t.Fatal(err)
		}
		return append(out.Bytes(), errOut.Bytes()...), cmd.ProcessState.ExitCode()
	}
	runA := func(args ...string) cmdtest.Result {
		t.Helper()
		out, code := run(homeA, c.Conf, args...)
		var r cmdtest.Result
		if err := json.Unmarshal(out, &r); err != nil || code != 0 {
			t.Fatalf("HOME A: claimdeck %v exited %d: %s", args, code, out)
		}
		return r
	}

	// HOME B's read-only metrics unit, started before the overrides: its
	// counters count what the trails gain after it said it serves.
	metrics := exec.Command(bin, "--config", confB, "--read-only", "metrics", "--listen", "127.0.0.1:0")
	metrics.Env = []string{"HOME=" + homeB, "PATH=" + os.Getenv("PATH"), "XDG_STATE_HOME=" + filepath.Join(homeB, "state")}
	stderr, err := metrics.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := metrics.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { metrics.Process.Kill(); metrics.Wait() })
	line, err := bufio.NewReader(stderr).ReadString('\n')
	if err != nil || !strings.Contains(line, "http://") {
		t.Fatalf("metrics said %q: %v", line, err)
	}
	go io.Copy(io.Discard, stderr)
	url := strings.TrimSpace(line[strings.Index(line, "http://"):])

	// HOME B's dashboard, with its own metrics: the Stats view and
	// --metrics-listen read the trails too (in tmux: it wants a terminal).
	dashURL := ""
	if _, err := exec.LookPath("tmux"); err == nil && !testing.Short() {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		session := fmt.Sprintf("claimdeck-teamstats-%d", os.Getpid())
		args := []string{"new", "-d", "-s", session, "-x", "120", "-y", "40", "env", "HOME=" + homeB, "XDG_STATE_HOME=" + filepath.Join(homeB, "state"),
			bin, "--config", confB, "--read-only", "--metrics-listen", addr}
		if out, err := exec.Command("tmux", args...).CombinedOutput(); err != nil {
			t.Fatalf("tmux new: %v\n%s", err, out)
		}
		t.Cleanup(func() { _ = exec.Command("tmux", "kill-session", "-t", session).Run() })
		dashURL = "http://" + addr + "/metrics"
		// its counters start from the trails as they stand when it serves
		for try := 0; ; try++ {
			resp, err := http.Get(dashURL)
			if err == nil {
				resp.Body.Close()
				break
			}
			if try == 300 {
				t.Fatalf("the dashboard's metrics never answered: %v", err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	// HOME A: an agent's claim, taken over by alice, on every source; and
	// one refused approval (the task is not in review).
	for _, src := range []string{"local", "locks", "team-notion"} {
		id := runA("create", "--source", src, "--title", "stuck on "+src).Task.PageID
		runA("claim", "--source", src, "--task", id, "--agent-name", "SANDMAN")
		runA("takeover", "--yes", "--source", src, "--task", id)
		if src == "local" {
			if out, code := run(homeA, c.Conf, "approve", "--yes", "--source", src, "--task", id); code == 0 {
				t.Fatalf("an approval of a claimed task was applied: %s", out)
			}
		}
	}
	// (the dashboard opens HOME B's journal; nothing may be in it)
	if b, err := os.ReadFile(filepath.Join(homeB, "audit.jsonl")); err == nil && len(bytes.TrimSpace(b)) > 0 {
		t.Fatalf("HOME B's journal was written: the count below would not prove the trail:\n%s", b)
	}

	// `stats` in HOME B counts them, per source.
	out, code := run(homeB, confB, "stats")
	var rep struct {
		OK    bool         `json:"ok"`
		Stats stats.Report `json:"stats"`
	}
	if err := json.Unmarshal(out, &rep); err != nil || code != 0 || !rep.OK {
		t.Fatalf("stats in HOME B exited %d: %s", code, out)
	}
	if got := rep.Stats.Overall.Overrides["takeover"]; got != 3 {
		t.Errorf("stats in HOME B counts %d takeovers, want HOME A's 3: %+v", got, rep.Stats.Overall)
	}
	if got := rep.Stats.Overall.Refused["approve"]; got != 1 {
		t.Errorf("stats in HOME B counts %d refused approvals, want HOME A's 1: %+v", got, rep.Stats.Overall)
	}
	for _, g := range rep.Stats.Sources {
		if g.Overrides["takeover"] != 1 || g.OverridesUnread != "" {
			t.Errorf("stats in HOME B, source %s: overrides %v, unread %q: want HOME A's takeover", g.Name, g.Overrides, g.OverridesUnread)
		}
	}

	// The metrics unit in HOME B counts them too (the test's own timeout
	// is the only clock: it reads the trails at most every few seconds).
	want := []string{`claimdeck_overrides_total{action="takeover",result="applied"} 3`,
		`claimdeck_overrides_total{action="approve",result="`,
		`claimdeck_overrides_trail_up{source="locks"} 1`, `claimdeck_overrides_trail_up{source="team-notion"} 1`}
	body2 := cmdtest.ScrapeUntil(t, url, 300, 200*time.Millisecond, want...) // a minute: many trail reads, not a speed
	cmdtest.CheckMetrics(t, body2)
	if dashURL != "" {
		cmdtest.CheckMetrics(t, cmdtest.ScrapeUntil(t, dashURL, 300, 200*time.Millisecond, want...))
	}
}
