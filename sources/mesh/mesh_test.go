package mesh

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// testNode is a mesh node on 127.0.0.1 whose health hook can be told to
// fail, hang or flap, and whose agent hook records what it is told.
type testNode struct {
	name    string
	token   string
	srv     *httptest.Server
	inbox   *Inbox
	claimed atomic.Value // []string reported as claimed_tasks
	hang    atomic.Bool
	flap    atomic.Bool
	pings   atomic.Int64
}

func newTestNode(t testing.TB, name string) *testNode {
	n := &testNode{name: name, token: "tok-" + name + "-0123456789", inbox: NewInbox("tok-" + name + "-0123456789")}
	n.claimed.Store([]string{})
	health := Handler(name, n.token, func(context.Context) (HealthReport, error) {
		return HealthReport{Status: "healthy", QueueDepth: 2, ClaimedTasks: n.claimed.Load().([]string)}, nil
	})
	mux := http.NewServeMux()
	mux.HandleFunc("/hooks/health", func(w http.ResponseWriter, r *http.Request) {
		call := n.pings.Add(1)
		switch {
		case n.hang.Load():
			<-r.Context().Done() // hangs until the poller gives up
		case n.flap.Load() && call%2 == 0:
			http.Error(w, "flapping", http.StatusInternalServerError)
		default:
			health.ServeHTTP(w, r)
		}
	})
	mux.Handle("/hooks/agent", n.inbox)
	n.srv = httptest.NewServer(mux)
	t.Cleanup(n.srv.Close)
	return n
}

func (n *testNode) config() NodeConfig {
	return NodeConfig{Name: n.name, Webhook: n.srv.URL + "/hooks/agent", Health: n.srv.URL + "/hooks/health", Token: Token(n.token)}
}

func registryOf(nodes ...*testNode) *Registry {
	reg := &Registry{Path: "test"}
	for _, n := range nodes {
		reg.Nodes = append(reg.Nodes, n.config())
	}
	return reg
}

func byName(nodes []model.Node) map[string]model.Node {
	m := map[string]model.Node{}
	for _, n := range nodes {
		m[n.Name] = n
	}
	return m
}

// memSource is a task list that can be swept; with marks set it also
// records escalation levels the way a backend would, on an unchanged token.
type memSource struct {
	name  string
	mu    sync.Mutex
	tasks []*model.Task
}

func (s *memSource) Name() string { return s.name }

func (s *memSource) Caps() sources.Caps {
	return sources.Caps{Lacks: []string{"escalation marks: a bare task list"}}
}

func (s *memSource) MarkEscalation(_ context.Context, id, _ string, _ model.Level) error {
	return model.Errorf(model.CodeMisconfigured, "escalate", id, "this list records no escalation")
}

func (s *memSource) Poll(context.Context, sources.Cursor, ...sources.PollOption) (sources.Delta, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*model.Task, len(s.tasks))
	for i, t := range s.tasks {
		c := *t
		out[i] = &c
	}
	return sources.Delta{Full: true, Tasks: out, Cursor: "1"}, nil
}

type markingSource struct {
	memSource
	marks []string
}

func (s *markingSource) Caps() sources.Caps { return sources.Caps{Escalation: true} }

func (s *markingSource) MarkEscalation(_ context.Context, id, token string, level model.Level) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.tasks {
		if t.ID == id {
			if t.Claim().Token != token {
				return sources.Lost("mark", id)
			}
			t.Escalated = level
			s.marks = append(s.marks, fmt.Sprintf("%s:%s", id, level))
			return nil
		}
	}
	return sources.NotFound("mark", id)
}

// TestMeshKilledHangingFlapping is seed 001's failover drill: of three
// nodes one is killed, one hangs and one flaps. The first two are DOWN after
// exactly three failed pings, the flapping one never is, the killed node's
// claims are reported and no live claim is, and each stuck task is notified
// once per level however often the sweep runs.
func TestMeshKilledHangingFlapping(t *testing.T) {
	alpha, bravo, charlie := newTestNode(t, "ALPHA"), newTestNode(t, "BRAVO"), newTestNode(t, "CHARLIE")
	alpha.claimed.Store([]string{"t-a2", "t-x"})
	extra := newTestNode(t, "EXTRA")
	p := NewPoller(registryOf(alpha, bravo, charlie), PollerConfig{Timeout: 150 * time.Millisecond, DownAfter: 3})
	ctx := t.Context()

	for name, n := range byName(p.PollOnce(ctx)) {
		if n.Status != model.NodeHealthy {
			t.Fatalf("round 0: %s is %s (%s), want healthy", name, n.Status, n.LastErr)
		}
	}
	select {
	case <-p.Changed():
	default:
		t.Error("no change signalled after the first round")
	}
	alpha.srv.Close()
	bravo.hang.Store(true)
	charlie.flap.Store(true)
	for round := 1; round <= 3; round++ {
		nodes := byName(p.PollOnce(ctx))
		for _, name := range []string{"ALPHA", "BRAVO"} {
			n := nodes[name]
			want := model.NodeDegraded
			if round == 3 {
				want = model.NodeDown
			}
			if n.Status != want || n.Failures != round {
				t.Fatalf("round %d: %s is %s with %d failures (%s), want %s with %d", round, name, n.Status, n.Failures, n.LastErr, want, round)
			}
		}
		if c := nodes["CHARLIE"]; c.Status == model.NodeDown || c.Failures > 1 {
			t.Fatalf("round %d: flapping CHARLIE is %s with %d failures", round, c.Status, c.Failures)
		}
	}
	nodes := byName(p.Nodes())
	if got := nodes["BRAVO"].LastErr; got != "timed out after 150ms" {
		t.Errorf("hanging node's reason = %q", got)
	}
	if got := nodes["ALPHA"].ClaimedTasks; len(got) != 2 {
		t.Errorf("killed node's last known claims = %v, want them kept", got)
	}

	now := time.Now()
	agent := func(id, name, node string, alive time.Duration, lease time.Duration) *model.Task {
		at := now.Add(-alive)
		return (&model.Task{Source: "q", ID: id, Title: "task " + id, State: model.StateClaimed}).WithClaim(model.Claim{Holder: model.HolderAgent, Name: name, Node: node, Token: "lock-" + id, ClaimedAt: model.StampOf(at), Expires: model.StampOf(at.Add(lease))})
	}
	src := &markingSource{memSource: memSource{name: "q", tasks: []*model.Task{
		agent("t-a1", "alpha-1", "ALPHA", time.Minute, 20*time.Minute), // live lease, but its node is DOWN
		agent("t-a2", "alpha-2", "", time.Minute, 20*time.Minute),      // placed only by ALPHA's claimed_tasks
		agent("t-x", "charlie-9", "CHARLIE", time.Minute, 20*time.Minute),
		agent("t-c1", "charlie-1", "CHARLIE", time.Minute, 20*time.Minute),
		agent("t-old", "charlie-2", "CHARLIE", 70*time.Minute, 10*time.Minute),
		agent("t-older", "charlie-3", "CHARLIE", 3*time.Hour, 10*time.Minute),
		(&model.Task{Source: "q", ID: "t-h", State: model.StateClaimed}).WithClaim(model.Claim{Holder: model.HolderHuman, Name: "HUMAN:alice", ClaimedAt: model.StampOf(now.Add(-5 * time.Hour))}),
	}}}

	var down []string
	placed := model.NewMesh(p.Nodes(), nil)
	for _, task := range src.tasks {
		if pl := placed.Place(task); pl.Down {
			down = append(down, task.ID+" by "+pl.By)
		}
	}
	if fmt.Sprint(down) != "[t-a1 by claim node t-a2 by claimed_tasks]" {
		t.Errorf("down claims = %v", down)
	}

	record := filepath.Join(t.TempDir(), "sweep.json")
	rec, err := OpenRecord(record)
	if err != nil {
		t.Fatal(err)
	}
	notifier := &Notifier{From: "CHARLIE", Nodes: registryOf(alpha, bravo, charlie).Nodes, Extra: extra.srv.URL + "/hooks/agent", ExtraToken: Token(extra.token), Timeout: time.Second}
	sw := &Sweeper{Policy: model.DefaultPolicy(), Notifier: notifier, Record: rec, Nodes: p.Nodes}
	first := sw.Sweep(ctx, src)
	if len(first.Errors) > 0 {
		t.Fatal(first.Errors)
	}
	for _, d := range first.Deliveries {
		if down := d.Target == "ALPHA" || d.Target == "BRAVO"; down != errors.Is(d.Err, ErrNodeDown) {
			t.Errorf("delivery %+v: only the DOWN nodes should be skipped", d)
		}
	}
	want := "[t-a1:stale t-a2:stale t-old:stale t-old:urgent t-old:notify t-older:stale t-older:urgent t-older:notify t-older:escalated]"
	if got := fmt.Sprint(src.marks); got != want {
		t.Errorf("marks = %s\nwant    %s", got, want)
	}
	if again := sw.Sweep(ctx, src); len(again.Marks) != 0 {
		t.Errorf("second sweep marked again: %+v", again.Marks)
	}
	// A sweeper whose source records no levels, sharing only the record
	// file, must still not notify anyone twice.
	rec2, err := OpenRecord(record)
	if err != nil {
		t.Fatal(err)
	}
	plain := &memSource{name: "q", tasks: src.tasks}
	for i := range plain.tasks {
		plain.tasks[i].Escalated = model.LevelNone
	}
	// Without the poller's view it tries the nodes it skipped as DOWN: the
	// killed one fails, the hanging one (whose webhook works) is told now.
	blind := &Sweeper{Policy: model.DefaultPolicy(), Notifier: notifier, Record: rec2}
	third := blind.Sweep(ctx, plain)
	for _, d := range third.Deliveries {
		if ok := d.Err == nil; d.Target == "extra" || ok != (d.Target == "BRAVO") {
			t.Errorf("after a restart: %+v", d)
		}
	}
	for _, d := range blind.Sweep(ctx, plain).Deliveries {
		if d.Target != "ALPHA" {
			t.Errorf("delivered twice: %+v", d)
		}
	}
	if len(third.Marks) == 0 || third.Marks[0].Applied {
		t.Errorf("a source without escalation should report unapplied marks, got %+v", third.Marks)
	}

	for _, n := range []*testNode{bravo, extra} {
		got := map[string]int{}
		for _, m := range n.inbox.Messages() {
			got[m.Message]++
			if m.Deliver {
				t.Errorf("%s: deliver = true", n.name)
			}
		}
		if len(got) != 2 || len(n.inbox.Messages()) != 2 {
			t.Errorf("%s received %v, want each of the two stuck tasks once", n.name, got)
		}
	}
	if got := charlie.inbox.Messages(); len(got) != 0 {
		t.Errorf("the sender notified itself: %v", got)
	}
	data, _ := os.ReadFile(record)
	for _, n := range src.tasks {
		if n.Claim().Token != "" && strings.Contains(string(data), n.Claim().Token) {
			t.Errorf("sweep record holds a lock token")
		}
	}

	bravo.hang.Store(false)
	if b := byName(p.PollOnce(ctx))["BRAVO"]; b.Status != model.NodeHealthy || b.Failures != 0 {
		t.Errorf("BRAVO answered again but is %s with %d failures", b.Status, b.Failures)
	}
}

// TestBadHealthEndpoints: every misbehaving endpoint is one failed ping
// with a reason a person can act on.
func TestBadHealthEndpoints(t *testing.T) {
	big := make([]byte, 10<<20)
	cases := []struct {
		name, want string
		h          http.HandlerFunc
	}{
		{"five-hundred", "HTTP 500", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "boom", 500) }},
		{"garbage", "not JSON", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "<html>hello</html>") }},
		{"ten-megabytes", "larger than 65536 bytes", func(w http.ResponseWriter, _ *http.Request) { w.Write(big) }},
		{"redirect", "redirect (HTTP 302)", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/elsewhere", http.StatusFound) }},
		{"unauthorized", "unauthorized (HTTP 401)", Handler("unauthorized", "another-token", nil).ServeHTTP},
		{"wrong-types", "field queue_depth: wrong type", func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprint(w, `{"node":"wrong-types","status":"healthy","queue_depth":"three"}`)
		}},
		{"impostor", `answered as node "SOMEONE"`, func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprint(w, `{"node":"SOMEONE","status":"healthy"}`)
		}},
		{"hang", "timed out after 200ms", func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }},
	}
	reg := &Registry{}
	for _, c := range cases {
		srv := httptest.NewServer(c.h)
		t.Cleanup(srv.Close)
		reg.Nodes = append(reg.Nodes, NodeConfig{Name: c.name, Health: srv.URL + "/hooks/health", Token: "the-right-token"})
	}
	reg.Nodes = append(reg.Nodes, NodeConfig{Name: "gone", Health: "http://127.0.0.1:1/hooks/health"})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	nodes := byName(NewPoller(reg, PollerConfig{Timeout: 200 * time.Millisecond}).PollOnce(t.Context()))
	runtime.ReadMemStats(&after)
	// Reading the 10 MB body whole would allocate at least that much.
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 4<<20 {
		t.Errorf("a round over bad endpoints allocated %d bytes", grew)
	}
	for _, c := range cases {
		n := nodes[c.name]
		if n.Status != model.NodeDegraded || n.Failures != 1 || !strings.Contains(n.LastErr, c.want) {
			t.Errorf("%s: %s, %d failures, reason %q; want one failure with %q", c.name, n.Status, n.Failures, n.LastErr, c.want)
		}
		if strings.Contains(n.LastErr, "the-right-token") {
			t.Errorf("%s: reason leaks the token", c.name)
		}
	}
	if g := nodes["gone"]; !strings.Contains(g.LastErr, "connection refused") {
		t.Errorf("gone: reason %q", g.LastErr)
	}
}

func TestLatencyHistoryIsBoundedAndSnapshotsAreCopies(t *testing.T) {
	n := newTestNode(t, "ALPHA")
	n.claimed.Store([]string{"t-1"})
	p := NewPoller(registryOf(n), PollerConfig{History: 3})
	for range 5 {
		p.PollOnce(t.Context())
	}
	snap := p.Nodes()
	if got := len(snap[0].Latency); got != 3 {
		t.Fatalf("latency samples = %d, want 3", got)
	}
	snap[0].ClaimedTasks[0] = "scribbled"
	snap[0].Latency[0] = -1
	if again := p.Nodes()[0]; again.ClaimedTasks[0] != "t-1" || again.Latency[0] < 0 {
		t.Error("a snapshot shares memory with the poller")
	}
}

func TestRunStopsWithItsContext(t *testing.T) {
	n := newTestNode(t, "ALPHA")
	p := NewPoller(registryOf(n), PollerConfig{Every: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	// It keeps pinging on its interval until stopped, however long that takes.
	for n.pings.Load() < 3 {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Run = %v", err)
	}
	if s := p.Nodes()[0]; s.Status != model.NodeHealthy {
		t.Errorf("cancelled pings counted as failures: %s %q", s.Status, s.LastErr)
	}
}

func TestHandler(t *testing.T) {
	last := time.Date(2026, 2, 1, 2, 15, 0, 0, time.UTC)
	h := Handler("SANDMAN", "s3cret", func(context.Context) (HealthReport, error) {
		return HealthReport{Node: "ignored", LastTaskAt: last, QueueDepth: 3, ClaimedTasks: []string{"task-123", "task-456"}}, nil
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	do := func(method, auth string) *http.Response {
		req, _ := http.NewRequest(method, srv.URL+"/hooks/health", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	for _, auth := range []string{"", "Bearer wrong", "Bearer s3cret2", "bearer s3cret", "s3cret"} {
		if r := do("POST", auth); r.StatusCode != http.StatusUnauthorized {
			t.Errorf("Authorization %q: HTTP %d, want 401", auth, r.StatusCode)
		}
	}
	if r := do("GET", "Bearer s3cret"); r.StatusCode != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "POST" {
		t.Errorf("GET: HTTP %d", r.StatusCode)
	}
	r := do("POST", "Bearer s3cret")
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || r.StatusCode != 200 {
		t.Fatalf("HTTP %d, %v", r.StatusCode, err)
	}
	want := `map[claimed_tasks:[task-123 task-456] last_task_at:2026-02-01T02:15:00Z node:SANDMAN queue_depth:3 status:healthy]`
	if got := fmt.Sprint(body); got != want {
		t.Errorf("body = %s\nwant   %s", got, want)
	}

	failing := httptest.NewServer(Handler("SANDMAN", "s3cret", func(context.Context) (HealthReport, error) {
		return HealthReport{}, fmt.Errorf("source offline")
	}))
	defer failing.Close()
	req, _ := http.NewRequest("POST", failing.URL, nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("failing status: HTTP %d, want 503", resp.StatusCode)
	}
	// A node configured without a token serves nobody.
	if Token("").Matches("") {
		t.Error("an empty token matched")
	}
}
