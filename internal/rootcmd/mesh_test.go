package rootcmd_test

import (
	"sync"
)

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/internal/rootcmd"
	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/mesh"
)

const (
	alphaToken = "alpha-bearer-0xfeedface"
	bravoToken = "bravo-bearer-0xdeadbeef"
	extraToken = "extra-bearer-0xcafef00d"
)

// meshCLI is a configuration with one SQLite source and a mesh: ALPHA is
// a live node with a real webhook, BRAVO is recorded DOWN in the registry,
// and an extra webhook listens too. The ladder and the grace before a
// rescue are milliseconds long.
type meshCLI struct {
	*cmdtest.CLI
	alpha, bravo, extra *mesh.Inbox
	record              string
}

func newMeshCLI(t *testing.T, extraHandler http.Handler) *meshCLI {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	m := &meshCLI{CLI: c, alpha: mesh.NewInbox(alphaToken), bravo: mesh.NewInbox(bravoToken), extra: mesh.NewInbox(extraToken)}
	alpha := httptest.NewServer(m.alpha)
	bravo := httptest.NewServer(m.bravo)
	if extraHandler == nil {
		extraHandler = m.extra
	}
	extra := httptest.NewServer(extraHandler)
	t.Cleanup(func() { alpha.Close(); bravo.Close(); extra.Close() })
	reg := fmt.Sprintf(`{"nodes": {
  "ALPHA": {"webhook": %q, "health": %q, "status": "healthy", "token": %q},
  "BRAVO": {"webhook": %q, "health": %q, "status": "down", "token_env": "CD_TEST_BRAVO_TOKEN"}
}}`, alpha.URL+"/hooks/agent", alpha.URL+"/hooks/health", alphaToken, bravo.URL+"/hooks/agent", bravo.URL+"/hooks/health")
	regPath := filepath.Join(c.Dir, "mesh-nodes.json")
	if err := os.WriteFile(regPath, []byte(reg), 0o644); err != nil { // readable by others: warned about
		t.Fatal(err)
	}
	t.Setenv("CD_TEST_BRAVO_TOKEN", bravoToken)
	t.Setenv("CD_TEST_EXTRA_TOKEN", extraToken)
	m.record = filepath.Join(c.Dir, "state", "sweep.json")
	conf, _ := os.ReadFile(c.Conf)
	conf = append(conf, fmt.Sprintf(`grace: 1ms
escalation:
  stale_after: 1ms
  urgent_after: 2ms
  notify_after: 3ms
  escalate_after: 4ms
mesh:
  registry: %s
  node: OPS
  webhook: %s
  webhook_token_env: CD_TEST_EXTRA_TOKEN
  timeout: 5s
  record: %s
  holders:
    bravo-1: BRAVO
    alpha-1: ALPHA
`, regPath, extra.URL+"/hooks/agent", m.record)...)
	if err := os.WriteFile(c.Conf, conf, 0o600); err != nil {
		t.Fatal(err)
	}
	return m
}

type sweepOut struct {
	OK     bool     `json:"ok"`
	DryRun bool     `json:"dry_run"`
	Srcs   []string `json:"sources"`
	Marks  []struct {
		Source, Task, Level, Error string
		Applied                    bool
	} `json:"marks"`
	Notifications []struct {
		Source, Task, Target, Error string
		Sent                        bool
	} `json:"notifications"`
	Errors []string `json:"errors"`
	Error  struct{ Code, Message string }
}

// sweep runs `claimdeck sweep` and checks what every mesh command must:
// one JSON document on stdout, and no bearer token anywhere.
func (m *meshCLI) sweep(wantExit int, args ...string) (sweepOut, string) {
	m.T.Helper()
	var out, errOut bytes.Buffer
	code := rootcmd.Run(context.Background(), append([]string{"--config", m.Conf, "sweep"}, args...), strings.NewReader(""), &out, &errOut)
	for _, tok := range []string{alphaToken, bravoToken, extraToken} {
		if strings.Contains(out.String()+errOut.String(), tok) {
			m.T.Fatalf("sweep printed a bearer token:\n%s\n%s", out.String(), errOut.String())
		}
	}
	var r sweepOut
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		m.T.Fatalf("sweep stdout is not one JSON document: %v\n%s", err, out.String())
	}
	if code != wantExit || r.OK != (wantExit == 0) {
		m.T.Fatalf("sweep %v exited %d (ok=%v), want %d:\n%s\n%s", args, code, r.OK, wantExit, out.String(), errOut.String())
	}
	return r, errOut.String()
}

func marksOf(r sweepOut) string {
	var s []string
	for _, m := range r.Marks {
		s = append(s, fmt.Sprintf("%s:%s:%v", m.Task, m.Level, m.Applied))
	}
	return strings.Join(s, " ")
}

func TestSweepContract(t *testing.T) {
	m := newMeshCLI(t, nil)
	stuck := m.Run(0, "create", "--title", "Research task for Oracle").Task.PageID
	down := m.Run(0, "create", "--title", "Rotate API keys").Task.PageID
	live := m.Run(0, "create", "--title", "Tune autoscaler").Task.PageID
	m.Run(0, "claim", "--task", stuck, "--agent-name", "oracle-9", "--lease", "1ms")
	m.Run(0, "claim", "--task", down, "--agent-name", "bravo-1", "--lease", "1h")
	m.Run(0, "claim", "--task", live, "--agent-name", "alpha-1", "--lease", "1h")
	time.Sleep(10 * time.Millisecond) // the stuck claim passes the whole millisecond ladder

	dry, stderr := m.sweep(0, "--dry-run")
	if !dry.DryRun || len(dry.Srcs) != 1 || dry.Srcs[0] != "local" {
		t.Errorf("dry run header: %+v", dry)
	}
	want := stuck + ":stale:%[1]v " + stuck + ":urgent:%[1]v " + stuck + ":notify:%[1]v " + stuck + ":escalated:%[1]v " + down + ":stale:%[1]v"
	if got := marksOf(dry); got != fmt.Sprintf(want, false) {
		t.Errorf("dry-run marks: %s\nwant %s", got, fmt.Sprintf(want, false))
	}
	if len(dry.Notifications) != 3 || len(m.alpha.Messages())+len(m.extra.Messages()) != 0 {
		t.Errorf("dry run: %d notifications listed, %d sent", len(dry.Notifications), len(m.alpha.Messages())+len(m.extra.Messages()))
	}
	if _, err := os.Stat(m.record); err == nil {
		t.Error("a dry run wrote the sweep record")
	}
	if !strings.Contains(stderr, "readable by group or others") {
		t.Errorf("no warning about the registry's mode: %q", stderr)
	}

	first, _ := m.sweep(0)
	if got := marksOf(first); got != fmt.Sprintf(want, true) {
		t.Errorf("marks: %s\nwant %s", got, fmt.Sprintf(want, true))
	}
	sent := map[string]string{}
	for _, n := range first.Notifications {
		sent[n.Target] = fmt.Sprint(n.Sent, " ", n.Error)
	}
	if sent["ALPHA"] != "true " || sent["extra"] != "true " || !strings.Contains(sent["BRAVO"], "DOWN") || len(sent) != 3 {
		t.Errorf("notifications: %v", sent)
	}
	for _, in := range []*mesh.Inbox{m.alpha, m.extra} {
		got := in.Messages()
		if len(got) != 1 || !strings.Contains(got[0].Message, "Research task for Oracle") || got[0].Deliver {
			t.Errorf("a receiver got %+v", got)
		}
	}
	if len(m.bravo.Messages()) != 0 {
		t.Error("the node the registry records DOWN was notified")
	}

	// The DOWN node's claim is claimable now (taken before it climbs the
	// millisecond ladder itself); the live one is not.
	m.Run(0, "claim", "--task", down, "--agent-name", "alpha-2", "--lease", "1h")
	if r := m.Run(2, "claim", "--task", live, "--agent-name", "alpha-2"); r.Error.Code != "CONFLICT" {
		t.Errorf("the live claim: %+v", r.Error)
	}
	again, _ := m.sweep(0)
	if len(again.Marks) != 0 || len(again.Notifications) != 0 {
		t.Errorf("a second sweep acted again: %+v", again)
	}
	if n := len(m.alpha.Messages()) + len(m.extra.Messages()); n != 2 {
		t.Errorf("after two sweeps the receivers got %d notifications, want 2", n)
	}
	if got := m.Run(3, "--read-only", "sweep"); got.Error.Code != "MISCONFIGURED" {
		t.Errorf("sweep in read-only mode: %+v", got.Error)
	}
}

func TestSweepFailingWebhookExitsAPIError(t *testing.T) {
	m := newMeshCLI(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "bridge down", http.StatusBadGateway)
	}))
	id := m.Run(0, "create", "--title", "Archive Q3 reports").Task.PageID
	m.Run(0, "claim", "--task", id, "--agent-name", "oracle-9", "--lease", "1ms")
	time.Sleep(10 * time.Millisecond)
	r, _ := m.sweep(5)
	if r.Error.Code != "API_ERROR" || !strings.Contains(r.Error.Message, "HTTP 502") || len(r.Marks) != 4 {
		t.Errorf("failing webhook: %+v", r)
	}
	// The failed delivery is retried on the next sweep; ALPHA, told once, is not told again.
	m.sweep(5)
	if n := len(m.alpha.Messages()); n != 1 {
		t.Errorf("ALPHA was told %d times", n)
	}
}

func TestSweepBadRegistryIsMisconfigured(t *testing.T) {
	m := newMeshCLI(t, nil)
	path := filepath.Join(m.Dir, "mesh-nodes.json")
	os.WriteFile(path, []byte("{\"nodes\": {\n  \"ALPHA\": {\"health\": 42, \"token\": \""+alphaToken+"\"}}}"), 0o600)
	r, _ := m.sweep(3)
	if !strings.Contains(r.Error.Message, "mesh-nodes.json:2:") || !strings.Contains(r.Error.Message, "nodes.ALPHA.health") {
		t.Errorf("bad registry: %+v", r.Error)
	}
}

// serveNode starts `claimdeck node serve` in-process and returns its
// address and a stop function that reports its exit status.
func serveNode(t *testing.T, c *cmdtest.CLI, args ...string) (string, func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	var errOut bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- rootcmd.Run(ctx, append([]string{"--config", c.Conf, "node", "serve", "--listen", "127.0.0.1:0"}, args...), nil, pw, &errOut)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadBytes('\n')
	if err != nil {
		cancel()
		t.Fatalf("node serve printed nothing: %v (exit %d)", err, <-code)
	}
	go io.Copy(io.Discard, pr)
	var hello struct {
		OK     bool
		Node   string
		Listen string
		Error  struct{ Code, Message string }
	}
	if err := json.Unmarshal(line, &hello); err != nil || !hello.OK {
		cancel()
		t.Fatalf("node serve: %s %v", line, err)
	}
	return hello.Listen, func() int { cancel(); return <-code }
}

func TestNodeServeContract(t *testing.T) {
	m := newMeshCLI(t, nil)
	held := m.Run(0, "create", "--title", "Rotate API keys").Task.PageID
	m.Run(0, "claim", "--task", held, "--agent-name", "alpha-1")
	m.Run(0, "create", "--title", "Tune autoscaler")
	addr, stop := serveNode(t, m.CLI, "--name", "ALPHA")
	post := func(path, auth, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest("POST", "http://"+addr+path, strings.NewReader(body))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v map[string]any
		data, _ := io.ReadAll(resp.Body)
		_ = json.Unmarshal(data, &v)
		if strings.Contains(string(data), alphaToken) {
			t.Errorf("%s answered with the token", path)
		}
		return resp.StatusCode, v
	}
	for _, auth := range []string{"", "Bearer wrong", "Bearer " + bravoToken, alphaToken} {
		if code, _ := post("/hooks/health", auth, ""); code != http.StatusUnauthorized {
			t.Errorf("Authorization %q: HTTP %d, want 401", auth, code)
		}
	}
	code, rep := post("/hooks/health", "Bearer "+alphaToken, "")
	if code != 200 {
		t.Fatalf("health with the token: HTTP %d", code)
	}
	want := fmt.Sprintf("map[claimed_tasks:[%s] node:ALPHA queue_depth:1 status:healthy]", held)
	delete(rep, "last_task_at")
	if got := fmt.Sprint(rep); got != want {
		t.Errorf("health report %s\nwant %s", got, want)
	}
	if code, _ := post("/hooks/agent", "Bearer "+alphaToken, `{"message":"⚠️ Task went stale","deliver":false}`); code != 200 {
		t.Errorf("notification: HTTP %d", code)
	}
	if code, _ := post("/hooks/agent", "", `{"message":"x","deliver":false}`); code != http.StatusUnauthorized {
		t.Errorf("notification without a token: HTTP %d", code)
	}
	if got := stop(); got != 0 {
		t.Errorf("node serve exited %d after an interrupt", got)
	}

	// Another node's token from --token-env; a node without one is refused.
	t.Setenv("CD_TEST_NODE_TOKEN", "gamma-bearer-0x1234-5678-9abc")
	addr, stop = serveNode(t, m.CLI, "--name", "GAMMA", "--token-env", "CD_TEST_NODE_TOKEN")
	if code, _ := post("/hooks/health", "Bearer gamma-bearer-0x1234-5678-9abc", ""); code != 200 {
		t.Errorf("GAMMA with its token: HTTP %d", code)
	}
	stop()
	if r := m.Run(3, "node", "serve", "--name", "GAMMA"); !strings.Contains(r.Error.Message, "no token for node GAMMA") {
		t.Errorf("a node without a token: %+v", r.Error)
	}
}

// With --enforce the dashboard process pings the mesh and sweeps: the
// registry's nodes answer no health pings here, so they go DOWN after
// three, and the claim of an agent placed on one is marked stale.
func TestEnforceSweepsFromTheDashboardProcess(t *testing.T) {
	m := newMeshCLI(t, nil)
	t.Setenv("CLAIMDECK_MESH_PING_EVERY", "10ms")
	t.Setenv("CLAIMDECK_MESH_SWEEP_EVERY", "10ms")
	id := m.Run(0, "create", "--title", "Rotate API keys").Task.PageID
	m.Run(0, "claim", "--task", id, "--agent-name", "bravo-1", "--lease", "1h")

	a := &cmdutil.Env{Stdout: io.Discard, Stderr: io.Discard}
	root := rootcmd.RootCommand(a)
	if err := root.ParseFlags([]string{"--enforce"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := cmdutil.LoadConfig(m.Conf)
	if err != nil {
		t.Fatal(err)
	}
	a.Cfg = cfg
	ctx, cancel := context.WithCancel(context.Background())
	defer a.Background.Wait() // the poller's last write lands before the directory goes
	var hubRun sync.WaitGroup
	defer hubRun.Wait() // and the sweep's, run by the hub
	defer cancel()
	src, err := cmdutil.OpenSource(ctx, cfg, cfg.Sources[0], true)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	hc := hub.Config{Feeds: []hub.Feed{{Source: src, Every: 10 * time.Millisecond}}, Policy: cfg.Policy()}
	if err := a.StartMesh(ctx, root, &hc); err != nil || hc.Nodes == nil || hc.Enforce == nil {
		t.Fatalf("startMesh: %v, nodes func %v, enforce %v", err, hc.Nodes != nil, hc.Enforce != nil)
	}
	nodes := hc.Nodes
	// Enforcement reads the hub's snapshots, as the dashboard's does.
	h := hub.New(hc)
	hubRun.Go(func() { h.Run(ctx) })
	// The ladder here is milliseconds long, so the mark may pass stale on
	// its way up; what matters is that it lands, and that the poller holds
	// both nodes DOWN once each has failed three pings.
	allDown := func() bool {
		for _, n := range nodes() {
			if n.Status != model.NodeDown || n.Failures < 3 {
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		task, err := src.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if task.Escalated >= model.LevelStale && allDown() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the claim on a DOWN node was never marked (level %q); nodes %+v", task.Escalated, nodes())
		}
	}
	// What the dashboard's pings found, every other door reads: doctor
	// names both nodes DOWN, recorded by the dashboard.
	d := doctorMesh(t, m.CLI)
	if len(d.DownNodes) != 2 || d.DownNodes[0].RecordedBy != "dashboard" || d.DownNodes[0].Since == "" {
		t.Errorf("doctor after the dashboard saw both nodes DOWN: %+v", d)
	}
	cfg.ReadOnly = true
	if err := a.StartMesh(ctx, root, &hub.Config{}); model.CodeOf(err) != model.CodeMisconfigured {
		t.Errorf("--enforce in read-only mode: %v", err)
	}
}

// TestNodesDownShowStaleInListGetAndSweep is the case: both nodes
// DOWN in the registry, holders {worker-7: oracle, worker-8: SANDMAN}, the
// registry spelling the first ORACLE. list, get and sweep --dry-run agree
// that both claims, their leases still running, are stale.
func TestNodesDownShowStaleInListGetAndSweep(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	reg := filepath.Join(c.Dir, "mesh-nodes.json")
	if err := os.WriteFile(reg, []byte(`{"nodes": {
  "ORACLE": {"webhook": "http://127.0.0.1:1/hooks/agent", "health": "http://127.0.0.1:1/hooks/health", "status": "down"},
  "SANDMAN": {"webhook": "http://127.0.0.1:1/hooks/agent", "health": "http://127.0.0.1:1/hooks/health", "status": "down"}
}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	conf, _ := os.ReadFile(c.Conf)
	conf = append(conf, fmt.Sprintf("mesh:\n  registry: %s\n  record: %s\n  holders:\n    worker-7: oracle\n    worker-8: SANDMAN\n",
		reg, filepath.Join(c.Dir, "sweep.json"))...)
	if err := os.WriteFile(c.Conf, conf, 0o600); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for agent, node := range map[string]string{"worker-7": "ORACLE", "worker-8": "SANDMAN"} {
		id := c.Run(0, "create", "--title", "job of "+agent).Task.PageID
		c.Run(0, "claim", "--task", id, "--agent-name", agent, "--lease", "1h")
		want[id] = "node " + node + " DOWN"
		if got := c.Run(0, "get", "--task", id).Task; got.Level != "stale" || !got.NodeDown || got.StaleReason != want[id] {
			t.Errorf("get %s: level %q node_down %v reason %q, want stale, true, %q", agent, got.Level, got.NodeDown, got.StaleReason, want[id])
		}
	}
	for _, got := range c.Run(0, "list").Tasks {
		if got.Level != "stale" || got.StaleReason != want[got.PageID] {
			t.Errorf("list %s: level %q reason %q, want stale, %q", got.Agent, got.Level, got.StaleReason, want[got.PageID])
		}
	}
	m := &meshCLI{CLI: c}
	dry, _ := m.sweep(0, "--dry-run")
	marked := map[string]bool{}
	for _, mk := range dry.Marks {
		if mk.Level == "stale" {
			marked[mk.Task] = true
		}
	}
	for id := range want {
		if !marked[id] {
			t.Errorf("sweep --dry-run did not mark %s stale: %+v", id, dry.Marks)
		}
	}
}
