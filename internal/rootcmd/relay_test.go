package rootcmd

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/sources/stats"
)

func relayTestToken(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// The relay refuses to start without a token, or with a guessable one:
// the message names the variable and how to make a token, and never
// prints the token it was given.
func TestRelayRefusesNoTokenOrAWeakOne(t *testing.T) {
	c := newCLI(t, sqliteSource)
	const weak = "password1234"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	taken := ln.Addr().String()
	cases := []struct {
		env, value string
		flags      []string
	}{
		{"CLAIMDECK_RELAY_TOKEN", "", nil},
		{"CLAIMDECK_RELAY_TOKEN", weak, nil},
		{"TEAM_RELAY_TOKEN", "", []string{"--token-env", "TEAM_RELAY_TOKEN"}},
		{"TEAM_RELAY_TOKEN", weak, []string{"--token-env", "TEAM_RELAY_TOKEN"}},
	}
	for _, tc := range cases {
		t.Setenv("CLAIMDECK_RELAY_TOKEN", "")
		t.Setenv(tc.env, tc.value)
		// The address is taken: a relay that wrongly accepted the token
		// fails to listen at once, rather than serving for ever.
		code, out := runOut(c.conf, append([]string{"relay", "--listen", taken}, tc.flags...)...)
		if code != 3 || !strings.Contains(out, "MISCONFIGURED") || !strings.Contains(out, "$"+tc.env) || !strings.Contains(out, "openssl rand -hex 32") {
			t.Errorf("relay with $%s=%q %v: exit %d, want 3 naming $%s and how to make a token:\n%s", tc.env, tc.value, tc.flags, code, tc.env, out)
		}
		if strings.Contains(out, weak) {
			t.Errorf("relay printed the token it refused:\n%s", out)
		}
	}
	t.Setenv("CLAIMDECK_RELAY_TOKEN", relayTestToken(t))
	if code, out := runOut(c.conf, "relay"); code != 3 || !strings.Contains(out, "--listen") {
		t.Errorf("relay without --listen: exit %d, want 3 naming --listen:\n%s", code, out)
	}
}

// A relay's settings are checked when the configuration loads: a bad
// address is refused naming the source and the field, a token variable's
// name that is not one is refused; a dashboard-side command whose relay
// token variable is empty is refused naming the variable, while an agent
// command, which never reads through the relay, still works.
func TestRelayConfigValidation(t *testing.T) {
	bad := []struct{ yaml, want string }{
		{"    relay: ftp://127.0.0.1:7480\n", "http://HOST:PORT"},
		{"    relay: 127.0.0.1:7480\n", "http://HOST:PORT"},
		{"    relay: http://127.0.0.1:7480/v1/poll\n", "http://HOST:PORT"},
		{"    relay: http://127.0.0.1:7480\n    relay_token_env: $CLAIMDECK_RELAY_TOKEN\n", "relay_token_env"},
	}
	for _, tc := range bad {
		c := newCLI(t, sqliteSource+tc.yaml)
		r := c.run(3, "list")
		if !strings.Contains(r.Error.Message, "sources[0] (local)") || !strings.Contains(r.Error.Message, tc.want) {
			t.Errorf("%q: %q, want the source and %q named", tc.yaml, r.Error.Message, tc.want)
		}
	}
	for _, env := range []string{"", "TEAM_RELAY_TOKEN"} {
		yaml := sqliteSource + "    relay: http://127.0.0.1:1\n"
		want := "$CLAIMDECK_RELAY_TOKEN"
		if env != "" {
			yaml += "    relay_token_env: " + env + "\n"
			want = "$" + env
		}
		t.Setenv("CLAIMDECK_RELAY_TOKEN", "")
		t.Setenv("TEAM_RELAY_TOKEN", "")
		c := newCLI(t, yaml)
		r := c.run(3, "stats")
		if r.Error.Code != "MISCONFIGURED" || !strings.Contains(r.Error.Message, want) || !strings.Contains(r.Error.Message, "source local") {
			t.Errorf("stats with %s empty: %+v, want MISCONFIGURED naming %s and the source", want, r.Error, want)
		}
		c.run(0, "create", "--title", "an agent's task")
		if got := c.run(0, "list").Tasks; len(got) != 1 {
			t.Errorf("list without the relay's token: %d tasks, want 1", len(got))
		}
	}
}

// config show prints the relay's address and its token variable's name,
// never the token; an address carrying a password is refused without
// printing the password.
func TestRelayConfigShowHidesTheTokenAndUserinfo(t *testing.T) {
	tok := relayTestToken(t)
	t.Setenv("CLAIMDECK_RELAY_TOKEN", tok)
	c := newCLI(t, sqliteSource+"    relay: http://127.0.0.1:7480\n")
	code, out := runOut(c.conf, "config", "show")
	if code != 0 || !strings.Contains(out, `"relay":"http://127.0.0.1:7480"`) || !strings.Contains(out, `"relay_token_env":"CLAIMDECK_RELAY_TOKEN"`) {
		t.Fatalf("config show: exit %d, want the relay's address and token variable:\n%s", code, out)
	}
	if strings.Contains(out, tok) {
		t.Fatalf("config show printed the relay's token:\n%s", out)
	}
	pasted := "e" + tok[1:] // a token pasted in the wrong place; it starts with a letter, as a name would
	c = newCLI(t, sqliteSource+"    relay: http://127.0.0.1:7480\n    relay_token_env: "+pasted+"\n")
	code, out = runOut(c.conf, "config", "show")
	if code != 3 || strings.Contains(out, pasted) || !strings.Contains(out, "relay_token_env") {
		t.Fatalf("a token in place of relay_token_env: exit %d, want 3 naming the field without printing the token:\n%s", code, out)
	}
	c = newCLI(t, sqliteSource+"    relay: http://ops:hunter2@127.0.0.1:7480\n")
	code, out = runOut(c.conf, "config", "show")
	if code != 3 || strings.Contains(out, "hunter2") || !strings.Contains(out, "sources[0] (local)") || !strings.Contains(out, "@127.0.0.1:7480") {
		t.Fatalf("a relay address with a password: exit %d, want 3 naming the source with the password hidden:\n%s", code, out)
	}
}

// relayProc is a `claimdeck relay` running as a process.
type relayProc struct {
	cmd    *exec.Cmd
	addr   string
	stdout *bufio.Reader
	stderr bytes.Buffer
}

// startRelay runs `claimdeck relay` on conf with the token in
// $CLAIMDECK_RELAY_TOKEN and waits for its address.
func startRelay(t *testing.T, conf, token string) *relayProc {
	t.Helper()
	p := &relayProc{cmd: exec.Command(binary(t), "--config", conf, "relay", "--listen", "127.0.0.1:0")}
	p.cmd.Env = append(os.Environ(), "CLAIMDECK_RELAY_TOKEN="+token)
	p.cmd.Stderr = &p.stderr
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); _ = p.cmd.Wait() })
	p.stdout = bufio.NewReader(out)
	line, err := p.stdout.ReadString('\n')
	var started struct {
		OK      bool     `json:"ok"`
		Relay   string   `json:"relay"`
		Sources []string `json:"sources"`
	}
	if err != nil || json.Unmarshal([]byte(line), &started) != nil || !started.OK || !strings.HasPrefix(started.Relay, "http://127.0.0.1:") {
		t.Fatalf("relay did not start: %v %q\nstderr: %s", err, line, p.stderr.String())
	}
	p.addr = started.Relay
	return p
}

// stop ends the relay as a supervisor does (SIGTERM) and returns its exit
// status and all it printed.
func (p *relayProc) stop(t *testing.T) (int, string) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	rest, _ := p.stdout.ReadString(0)
	err := p.cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, rest + p.stderr.String()
}

// relayedConfig writes a second configuration naming the relay for the
// source local of c's SQLite file, acting as actor.
func relayedConfig(t *testing.T, c *cli, relayAddr, actor string) *cli {
	t.Helper()
	conf := filepath.Join(c.dir, "relayed.yaml")
	body := fmt.Sprintf("actor: %s\naudit_log: %s\nsources:\n%s    relay: %s\n", actor, filepath.Join(c.dir, "relayed-audit.jsonl"),
		strings.ReplaceAll(sqliteSource, "DIR", c.dir), relayAddr)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return &cli{t: t, conf: conf, dir: c.dir}
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
	c := newCLI(t, sqliteSource)
	tok := relayTestToken(t)
	rp := startRelay(t, c.conf, tok)
	b := relayedConfig(t, c, rp.addr, "bob")
	// The relay has read the empty queue before the task is made.
	if g := relayedStats(t, b.conf, tok); g.Status != "ok" || len(g.Tasks) != 0 {
		t.Fatalf("through the relay, before any task: %+v, want an empty queue read well", g)
	}
	claimdeckProc(t, tok, "--config", c.conf, "create", "--title", "made by a third process")
	var g stats.Group
	for range 300 { // the relay polls the file every 2 s; the bound is for a build that never shows it
		if g = relayedStats(t, b.conf, tok); g.Tasks["queued"] == 1 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if g.Tasks["queued"] != 1 || g.Status != "ok" {
		t.Fatalf("through the relay: %+v, want one queued task, status ok", g)
	}

	t.Setenv("CLAIMDECK_RELAY_TOKEN", tok)
	code, out := runOut(b.conf, "doctor", "-o", "table")
	if code != 0 || !strings.Contains(out, "ok   relay") || !strings.Contains(out, rp.addr+" is reachable, accepted the token in $CLAIMDECK_RELAY_TOKEN, reads local: ok, 1 tasks; last read ") {
		t.Fatalf("doctor through a working relay: exit %d:\n%s", code, out)
	}
	t.Setenv("CLAIMDECK_RELAY_TOKEN", relayTestToken(t))
	if code, out := runOut(b.conf, "doctor", "-o", "table"); code != 3 || !strings.Contains(out, "FAIL relay") || !strings.Contains(out, "refused the token in $CLAIMDECK_RELAY_TOKEN") {
		t.Fatalf("doctor with the wrong token: exit %d:\n%s", code, out)
	}

	code, printed := rp.stop(t)
	if code != 0 {
		t.Fatalf("the relay ended with status %d on SIGTERM:\n%s", code, printed)
	}
	if strings.Contains(printed, tok) {
		t.Fatalf("the relay printed its token:\n%s", printed)
	}
	if g = relayedStats(t, b.conf, tok); g.Status != "degraded" || !strings.Contains(g.Error, "relay") || !strings.Contains(g.Error, "unreachable") {
		t.Fatalf("through a stopped relay: %+v, want degraded with the relay unreachable", g)
	}
	t.Setenv("CLAIMDECK_RELAY_TOKEN", tok)
	if code, out := runOut(b.conf, "doctor", "-o", "table"); code != 3 || !strings.Contains(out, "FAIL relay") || !strings.Contains(out, "unreachable") {
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
	c := newCLI(t, sqliteSource)
	tok := relayTestToken(t)
	rp := startRelay(t, c.conf, tok)
	b := relayedConfig(t, c, rp.addr, "bob")
	p := &tmuxPane{t: t, session: fmt.Sprintf("claimdeck-relay-%d", os.Getpid())}
	if out, err := exec.Command("tmux", "new", "-d", "-s", p.session, "-x", "120", "-y", "40",
		"env", "HOME="+t.TempDir(), "CLAIMDECK_RELAY_TOKEN="+tok, binary(t), "--config", b.conf).CombinedOutput(); err != nil {
		t.Fatalf("tmux new: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "kill-session", "-t", p.session).Run() })
	p.await("the source read through the relay", func(s string) bool {
		return strings.Contains(s, "Queue") && strings.Contains(s, "through the relay at "+strings.TrimPrefix(rp.addr, "http://")) && strings.Contains(s, " ok ")
	})
	var made result
	if err := json.Unmarshal(claimdeckProc(t, tok, "--config", c.conf, "create", "--title", "made while the dashboard runs"), &made); err != nil || made.Task == nil {
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
	got := c.run(0, "get", "--task", made.Task.PageID).Task
	if got.State != "claimed" || got.Agent != "HUMAN:bob" || len(got.History) == 0 || got.History[len(got.History)-1].Actor != "bob" {
		t.Fatalf("in the store: %+v, want claimed by HUMAN:bob with bob's takeover last in its history", got)
	}
	// The relay stops while the dashboard holds its watch stream: it ends
	// cleanly, and the dashboard says the relay is unreachable.
	start := time.Now()
	if code, printed := rp.stop(t); code != 0 || strings.Contains(printed, tok) {
		t.Fatalf("the relay, stopped under a dashboard, ended with status %d (or printed its token):\n%s", code, printed)
	}
	t.Logf("the relay took %v to stop with a dashboard watching", time.Since(start))
	p.await("the source degraded with the relay's message", func(s string) bool {
		return strings.Contains(s, "relay "+strings.TrimPrefix(rp.addr, "http://")+" unreachable")
	})
	p.keys("q")
}
