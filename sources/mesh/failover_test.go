package mesh

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/sqlstore"
)

// servedNode is a mesh node running the node-serve logic (NodeHandler over
// StatusFrom) on 127.0.0.1, answering from a real SQLite queue, with
// switches to make its health hook hang or flap.
type servedNode struct {
	name, token string
	srv         *httptest.Server
	inbox       *Inbox
	hang, flap  atomic.Bool
	calls       atomic.Int64
}

func serveNode(t *testing.T, name string, agents []string, q sources.Source) *servedNode {
	n := &servedNode{name: name, token: "bearer-" + strings.ToLower(name) + "-5ecret"}
	n.inbox = NewInbox(n.token)
	h := NodeHandler(name, Token(n.token), StatusFrom(name, agents, []TaskSource{q}, time.Now), n.inbox)
	n.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hooks/health" {
			call := n.calls.Add(1)
			switch {
			case n.hang.Load():
				<-r.Context().Done()
				return
			case n.flap.Load() && call%2 == 0:
				http.Error(w, "flapping", http.StatusBadGateway)
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(n.srv.Close)
	return n
}

func (n *servedNode) config() NodeConfig {
	return NodeConfig{Name: n.name, Webhook: n.srv.URL + "/hooks/agent", Health: n.srv.URL + "/hooks/health", Token: Token(n.token)}
}

// TestFailoverOverSQLite is seed 001's drill on a real queue: ALPHA is
// killed, BRAVO hangs, CHARLIE flaps. ALPHA and BRAVO are DOWN after exactly
// three failed rounds and not before; their claims are marked stale in the
// queue and become claimable; CHARLIE's live claim is never marked; and
// every receiver hears of each stuck task once, however often the sweep
// runs, including BRAVO, told its backlog once it answers again.
func TestFailoverOverSQLite(t *testing.T) {
	ctx := context.Background()
	q, err := sqlstore.Open(ctx, sqlstore.Config{Name: "q", Driver: "sqlite", Path: filepath.Join(t.TempDir(), "q.db"), Create: true, Grace: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	claim := func(agent, node string, lease time.Duration) *model.Task {
		t.Helper()
		task, err := q.Create(ctx, sources.NewTask{Title: "work of " + agent})
		if err != nil {
			t.Fatal(err)
		}
		if task, err = q.Claim(ctx, task.ID, sources.ClaimRequest{Agent: agent, Node: node, Lease: lease}); err != nil {
			t.Fatal(err)
		}
		return task
	}
	const live = 24 * time.Hour
	a1 := claim("alpha-1", "ALPHA", live)
	a2 := claim("alpha-2", "", live) // placed on ALPHA only by its claimed_tasks
	b1 := claim("bravo-1", "BRAVO", live)
	c1 := claim("charlie-1", "CHARLIE", live)
	stuck := claim("charlie-2", "CHARLIE", time.Millisecond)

	alpha := serveNode(t, "ALPHA", []string{"alpha-1", "alpha-2"}, q)
	bravo := serveNode(t, "BRAVO", []string{"bravo-1"}, q)
	charlie := serveNode(t, "CHARLIE", []string{"charlie-1", "charlie-2"}, q)
	extra := serveNode(t, "EXTRA", nil, q)
	reg := &Registry{Nodes: []NodeConfig{alpha.config(), bravo.config(), charlie.config()}}
	p := NewPoller(reg, PollerConfig{Timeout: 500 * time.Millisecond, DownAfter: 3})

	first := byName(p.PollOnce(ctx))
	if got := first["ALPHA"].ClaimedTasks; !slices.Equal(got, sortedIDs(a1, a2)) {
		t.Fatalf("ALPHA reports claimed_tasks %v, want %v", got, sortedIDs(a1, a2))
	}
	for name, n := range first {
		if n.Status != model.NodeHealthy {
			t.Fatalf("round 0: %s is %s (%s)", name, n.Status, n.LastErr)
		}
	}

	// The sweep runs three hours ahead: the stuck claim climbs the whole
	// ladder, while 24-hour leases stay live.
	ahead := func() time.Time { return time.Now().Add(3 * time.Hour) }
	rec, err := OpenRecord(filepath.Join(t.TempDir(), "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	sw := &Sweeper{
		Policy: model.DefaultPolicy(), Record: rec, Nodes: p.Nodes, Now: ahead,
		Notifier: &Notifier{From: "OPS", Nodes: reg.Nodes, Extra: extra.srv.URL + "/hooks/agent", ExtraToken: Token(extra.token), Timeout: time.Second},
	}
	var reports []SweepReport
	sweep := func() SweepReport {
		t.Helper()
		r := sw.Sweep(ctx, q)
		if len(r.Errors) > 0 {
			t.Fatal(r.Errors)
		}
		reports = append(reports, r)
		return r
	}
	sweep()

	alpha.srv.Close()
	bravo.hang.Store(true)
	charlie.flap.Store(true)
	for round := 1; round <= 3; round++ {
		nodes := byName(p.PollOnce(ctx))
		for _, name := range []string{"ALPHA", "BRAVO"} {
			want := model.NodeDegraded
			if round == 3 {
				want = model.NodeDown
			}
			if n := nodes[name]; n.Status != want || n.Failures != round {
				t.Fatalf("round %d: %s is %s after %d failures (%s), want %s", round, name, n.Status, n.Failures, n.LastErr, want)
			}
		}
		if c := nodes["CHARLIE"]; c.Status == model.NodeDown || c.Failures > 1 {
			t.Fatalf("round %d: flapping CHARLIE is %s with %d failures", round, c.Status, c.Failures)
		}
		r := sweep()
		for _, m := range r.Marks {
			if round < 3 && m.Task != stuck.ID {
				t.Errorf("round %d: %s marked %s before its node was DOWN", round, m.Task, m.Level)
			}
		}
	}
	for _, n := range p.Nodes() {
		for _, tok := range []string{alpha.token, bravo.token, charlie.token} {
			if strings.Contains(n.LastErr, tok) {
				t.Errorf("%s: the reason shown carries a token", n.Name)
			}
		}
	}

	for _, id := range []string{a1.ID, a2.ID, b1.ID} {
		task, err := q.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if task.Escalated < model.LevelStale {
			t.Errorf("%s held on a DOWN node is not marked stale (level %q)", id, task.Escalated)
		}
	}
	taken, err := q.Claim(ctx, a1.ID, sources.ClaimRequest{Agent: "charlie-3", Node: "CHARLIE", Lease: live})
	if err != nil {
		t.Fatalf("the killed node's claim is not claimable: %v", err)
	}
	if _, err := q.Heartbeat(ctx, a1.ID, a1.Claim().Token, time.Hour); !errors.Is(err, model.ErrLostLock) {
		t.Errorf("the killed node's agent heartbeat after the takeover: %v, want LOST_LOCK", err)
	}

	sweep()
	sweep()
	bravo.hang.Store(false)
	if b := byName(p.PollOnce(ctx))["BRAVO"]; b.Status != model.NodeHealthy {
		t.Fatalf("BRAVO answers again but is %s (%s)", b.Status, b.LastErr)
	}
	sweep()
	sweep()

	for _, r := range reports {
		for _, m := range r.Marks {
			if m.Task == c1.ID {
				t.Errorf("a live claim on a healthy node was marked: %+v", m)
			}
			if m.Err != nil && !errors.Is(m.Err, model.ErrLostLock) {
				t.Errorf("mark %+v failed", m)
			}
		}
		for _, d := range r.Deliveries {
			if d.Err != nil && !errors.Is(d.Err, ErrNodeDown) {
				t.Errorf("delivery %+v failed", d)
			}
		}
	}
	for _, id := range []string{c1.ID, taken.ID} {
		if task, _ := q.Get(ctx, id); task.Escalated != model.LevelNone {
			t.Errorf("live claim %s on a healthy node is at level %s", id, task.Escalated)
		}
	}

	// Every task the queue records at notify or above was told to each
	// live receiver exactly once; nothing else was.
	d, err := q.Poll(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, task := range d.Tasks {
		if task.Escalated >= model.LevelNotify {
			want = append(want, task.Title)
		}
	}
	slices.Sort(want)
	if !slices.Contains(want, stuck.Title) {
		t.Fatalf("the stuck task never reached notify: %v", want)
	}
	for _, n := range []*servedNode{bravo, charlie, extra} {
		var got []string
		for _, m := range n.inbox.Messages() {
			title, _, _ := strings.Cut(strings.TrimPrefix(m.Message, `⚠️ Task "`), `"`)
			got = append(got, title)
			for _, tok := range []string{a1.Claim().Token, stuck.Claim().Token} {
				if strings.Contains(m.Message, tok) {
					t.Errorf("%s was sent a lock token", n.name)
				}
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s was told %v, want each of %v once", n.name, got, want)
		}
	}
	// ALPHA heard of the stuck task before it was killed, and of nothing since.
	if got := alpha.inbox.Messages(); len(got) != 1 || !strings.Contains(got[0].Message, stuck.Title) {
		t.Errorf("the killed node received %v", got)
	}
}

func sortedIDs(ts ...*model.Task) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ID)
	}
	slices.Sort(out)
	return out
}
