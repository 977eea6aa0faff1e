package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/sources/stats"
)

// startRelay runs `claimdeck relay` on conf with the token in
// $CLAIMDECK_RELAY_TOKEN and waits for its address.
func startRelay(t *testing.T, conf, token string) *cmdtest.RelayProc {
	t.Helper()
	p := &cmdtest.RelayProc{Cmd: exec.Command(binary(t), "--config", conf, "relay", "--listen", "127.0.0.1:0")}
	p.Cmd.Env = append(os.Environ(), "CLAIMDECK_RELAY_TOKEN="+token)
	p.Cmd.Stderr = &p.Stderr
	out, err := p.Cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Cmd.Process.Kill(); _ = p.Cmd.Wait() })
	p.Stdout = bufio.NewReader(out)
	line, err := p.Stdout.ReadString('\n')
	var started struct {
		OK      bool     `json:"ok"`
		Relay   string   `json:"relay"`
		Sources []string `json:"sources"`
	}
	if err != nil || json.Unmarshal([]byte(line), &started) != nil || !started.OK || !strings.HasPrefix(started.Relay, "http://127.0.0.1:") {
		t.Fatalf("relay did not start: %v %q\nstderr: %s", err, line, p.Stderr.String())
	}
	p.Addr = started.Relay
	return p
}

// claimdeckProc runs claimdeck as a process with the relay's token and
// returns what it printed on stdout.
func claimdeckProc(t *testing.T, token string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append(os.Environ(), "CLAIMDECK_RELAY_TOKEN="+token)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	out, err := cmd.Output()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatalf("claimdeck %v: %v", args, err)
	}
	return out
}

// relayedStats is the source local as `stats` (a hub's one read) sees it
// through the relayed configuration, run as its own process.
func relayedStats(t *testing.T, conf, token string) stats.Group {
	t.Helper()
	out := claimdeckProc(t, token, "--config", conf, "stats")
	var r struct {
		Stats stats.Report `json:"stats"`
	}
	if err := json.Unmarshal(out, &r); err != nil || len(r.Stats.Sources) != 1 {
		t.Fatalf("stats: %v\n%s", err, out)
	}
	return r.Stats.Sources[0]
}

// End to end, every part a process of its own on one real SQLite file: a
// relay reads the queue; a configuration naming the relay reads through
// it (stats, the dashboard's hub in one read) the task a third process
// made; doctor checks the relay; once the relay stops, the relayed reader
// says the relay is unreachable, which a reader of the file itself would
// not, and the relay stopped cleanly without ever printing its token.
func TestRelayProcessesReadThroughTheRelay(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	tok := cmdtest.RelayTestToken(t)
	rp := startRelay(t, c.Conf, tok)
	b := cmdtest.RelayedConfig(t, c, rp.Addr, "bob")
	// The relay has read the empty queue before the task is made.
	if g := relayedStats(t, b.Conf, tok); g.Status != "ok" || len(g.Tasks) != 0 {
		t.Fatalf("through the relay, before any task: %+v, want an empty queue read well", g)
	}
	claimdeckProc(t, tok, "--config", c.Conf, "create", "--title", "made by a third process")
	var g stats.Group
	for range 300 { // the relay polls the file every 2 s; the bound is for a build that never shows it
		if g = relayedStats(t, b.Conf, tok); g.Tasks["queued"] == 1 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if g.Tasks["queued"] != 1 || g.Status != "ok" {
		t.Fatalf("through the relay: %+v, want one queued task, status ok", g)
	}

	t.Setenv("CLAIMDECK_RELAY_TOKEN", tok)
	code, out := cmdtest.RunOut(b.Conf, "doctor", "-o", "table")
	if code != 0 || !strings.Contains(out, "ok   relay") || !strings.Contains(out, rp.Addr+" is reachable, accepted the token in $CLAIMDECK_RELAY_TOKEN, reads local: ok, 1 tasks; last read ") {
		t.Fatalf("doctor through a working relay: exit %d:\n%s", code, out)
	}
	t.Setenv("CLAIMDECK_RELAY_TOKEN", cmdtest.RelayTestToken(t))
	if code, out := cmdtest.RunOut(b.Conf, "doctor", "-o", "table"); code != 3 || !strings.Contains(out, "FAIL relay") || !strings.Contains(out, "refused the token in $CLAIMDECK_RELAY_TOKEN") {
		t.Fatalf("doctor with the wrong token: exit %d:\n%s", code, out)
	}

	code, printed := rp.Stop(t)
	if code != 0 {
		t.Fatalf("the relay ended with status %d on SIGTERM:\n%s", code, printed)
	}
	if strings.Contains(printed, tok) {
		t.Fatalf("the relay printed its token:\n%s", printed)
	}
	if g = relayedStats(t, b.Conf, tok); g.Status != "degraded" || !strings.Contains(g.Error, "relay") || !strings.Contains(g.Error, "unreachable") {
		t.Fatalf("through a stopped relay: %+v, want degraded with the relay unreachable", g)
	}
	t.Setenv("CLAIMDECK_RELAY_TOKEN", tok)
	if code, out := cmdtest.RunOut(b.Conf, "doctor", "-o", "table"); code != 3 || !strings.Contains(out, "FAIL relay") || !strings.Contains(out, "unreachable") {
		t.Fatalf("doctor with the relay stopped: exit %d:\n%s", code, out)
	}
}

// The dashboard reads through the relay and acts on the store itself: in
// a real terminal, a task a third process makes while it runs appears,
// the source line says it is read through the relay, and a claim as HUMAN
// taken there lands in the SQLite file under the dashboard's actor (bob),
// not the relay's (alice): the relay carries no identity.
func TestRelayTmuxDashboardActsOnTheStoreAsItsActor(t *testing.T) {
	if testing.Short() {
		t.Skip("tmux screens skipped in -short mode")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	tok := cmdtest.RelayTestToken(t)
	rp := startRelay(t, c.Conf, tok)
	b := cmdtest.RelayedConfig(t, c, rp.Addr, "bob")
	p := &tmuxPane{t: t, session: fmt.Sprintf("claimdeck-relay-%d", os.Getpid())}
	if out, err := exec.Command("tmux", "new", "-d", "-s", p.session, "-x", "120", "-y", "40",
		"env", "HOME="+t.TempDir(), "CLAIMDECK_RELAY_TOKEN="+tok, binary(t), "--config", b.Conf).CombinedOutput(); err != nil {
		t.Fatalf("tmux new: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "kill-session", "-t", p.session).Run() })
	p.await("the source read through the relay", func(s string) bool {
		return strings.Contains(s, "Queue") && strings.Contains(s, "through the relay at "+strings.TrimPrefix(rp.Addr, "http://")) && strings.Contains(s, " ok ")
	})
	var made cmdtest.Result
	if err := json.Unmarshal(claimdeckProc(t, tok, "--config", c.Conf, "create", "--title", "made while the dashboard runs"), &made); err != nil || made.Task == nil {
		t.Fatalf("create: %v", err)
	}
	p.await("the new task", func(s string) bool { return strings.Contains(s, "made while the dashboard runs") })
	p.keys("c")
	p.await("the claim's reason", func(s string) bool { return strings.Contains(s, "Claim as HUMAN "+made.Task.PageID) })
	for _, r := range "mine now" {
		p.keys(string(r))
	}
	p.keys("Enter")
	p.await("the question", func(s string) bool { return strings.Contains(s, "[y/N]") })
	p.keys("y")
	s := p.await("the outcome", func(s string) bool {
		return strings.Contains(s, "applied") || strings.Contains(s, "refused") || strings.Contains(s, "failed")
	})
	if !strings.Contains(s, "takeover "+made.Task.PageID+" applied") {
		t.Fatalf("the claim was not applied:\n%s", s)
	}
	got := c.Run(0, "get", "--task", made.Task.PageID).Task
	if got.State != "claimed" || got.Agent != "HUMAN:bob" || len(got.History) == 0 || got.History[len(got.History)-1].Actor != "bob" {
		t.Fatalf("in the store: %+v, want claimed by HUMAN:bob with bob's takeover last in its history", got)
	}
	// The relay stops while the dashboard holds its watch stream: it ends
	// cleanly, and the dashboard says the relay is unreachable.
	start := time.Now()
	if code, printed := rp.Stop(t); code != 0 || strings.Contains(printed, tok) {
		t.Fatalf("the relay, stopped under a dashboard, ended with status %d (or printed its token):\n%s", code, printed)
	}
	t.Logf("the relay took %v to stop with a dashboard watching", time.Since(start))
	p.await("the source degraded with the relay's message", func(s string) bool {
		return strings.Contains(s, "relay "+strings.TrimPrefix(rp.Addr, "http://")+" unreachable")
	})
	p.keys("q")
}
