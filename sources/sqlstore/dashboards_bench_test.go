package sqlstore

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/relay"
)

// dashboards are dashboards in this process, each a hub over a store of
// its own (its pool and LISTEN connection) on one table, as people running
// claimdeck side by side have; each keeps the latest snapshot its hub sent.
type dashboards struct {
	latest  []atomic.Pointer[hub.Snapshot]
	change  atomic.Pointer[change]
	claimed []claimedLog
}

// claimedLog is when one dashboard's snapshots first showed each task the
// prober claimed, read from their transitions, so that a change tracked
// after it came is found without scanning every task (at 10,000 tasks and
// 50 dashboards that scan, at each probe, took more of their processor
// than their polls). Only the prober's claims: noting the agents' ~1,000
// a second too was 7.5 % of the 50 dashboards' processor time, by their
// profiles, the benchmark's cost and not the dashboards'. lossy: a
// snapshot came whose transitions the hub may have cut; then the tasks
// are scanned as before.
type claimedLog struct {
	mu    sync.Mutex
	at    map[string]int64 // Unix nanoseconds
	lossy bool
}

func (l *claimedLog) record(s *hub.Snapshot) {
	now := time.Now().UnixNano()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lossy = l.lossy || len(s.Transitions) >= hubTransitions
	for _, t := range s.Transitions {
		l.note(t.After, now)
	}
}

// note marks t, when the prober holds it, as first seen claimed at now
// (Unix nanoseconds). The caller holds l.mu.
func (l *claimedLog) note(t *model.Task, now int64) {
	if !probed(t) || l.at[t.ID] != 0 {
		return
	}
	if l.at == nil {
		l.at = map[string]int64{}
	}
	l.at[t.ID] = now
}

// proberAgent is the name the prober claims its tasks under.
const proberAgent = "probe"

// probed reports whether t is claimed by the prober.
func probed(t *model.Task) bool {
	return t != nil && t.State == model.StateClaimed && t.Claim().Name == proberAgent
}

// since is when the dashboard first showed id claimed (0: not yet), and
// whether its log may have missed it.
func (l *claimedLog) since(id string) (at int64, lossy bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.at[id], l.lossy
}

// openDashboards starts n dashboards on table; they stop when ctx ends.
// CLAIMDECK_FLEET_DEBOUNCE and CLAIMDECK_FLEET_LISTEN_PAUSE (durations)
// set the two intervals that decide how often a dashboard polls under
// churn (hub.Config.Debounce, Config.ListenPause); unset, the defaults.
func openDashboards(ctx context.Context, tb testing.TB, table string, n int) *dashboards {
	interval := func(name string) time.Duration {
		v := os.Getenv(name)
		if v == "" {
			return 0
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			tb.Fatalf("%s=%q: give a duration such as 200ms", name, v)
		}
		return d
	}
	debounce, pause := interval("CLAIMDECK_FLEET_DEBOUNCE"), interval("CLAIMDECK_FLEET_LISTEN_PAUSE")
	d := &dashboards{latest: make([]atomic.Pointer[hub.Snapshot], n), claimed: make([]claimedLog, n)}
	var wg sync.WaitGroup
	stores := make([]*Store, n)
	tb.Cleanup(func() {
		wg.Wait()
		for _, s := range stores {
			s.Close()
		}
	})
	for i := range n {
		stores[i] = openPG(tb, Config{Table: table, ListenPause: pause})
		var src sources.Source = stores[i]
		if url := os.Getenv("CLAIMDECK_FLEET_RELAY_URL"); url != "" {
			// Reads through the fleet's relay; writes would go to the store.
			r, err := relay.Wrap(stores[i], url, fleetRelayToken, "")
			if err != nil {
				tb.Fatal(err)
			}
			src = r
		}
		h := hub.New(hub.Config{Feeds: []hub.Feed{{Source: src}}, Debounce: debounce})
		wg.Add(2)
		go func() { defer wg.Done(); h.Run(ctx) }()
		go func() {
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case snap := <-h.Snapshots():
					d.latest[i].Store(&snap)
					d.claimed[i].record(&snap)
					if c := d.change.Load(); c != nil {
						c.look(i, &snap, false)
					}
				}
			}
		}()
	}
	return d
}

// loaded waits until every dashboard holds all rows of its full load.
func (d *dashboards) loaded(rows int) {
	for i := range d.latest {
		for s := d.latest[i].Load(); s == nil || s.Len() != rows || s.Sources[0].Loading; s = d.latest[i].Load() {
			time.Sleep(time.Millisecond)
		}
	}
}

// polls is how many polls the dashboards' hubs have made, all together.
func (d *dashboards) polls() uint64 {
	var n uint64
	for i := range d.latest {
		if s := d.latest[i].Load(); s != nil {
			n += s.Sources[0].Polls
		}
	}
	return n
}

// change is a task claimed at a known time, and when each dashboard first
// showed it claimed.
type change struct {
	id   string
	held []atomic.Int64 // Unix nanoseconds; zero until held
	left atomic.Int32
	all  chan struct{} // closed when every dashboard holds it
}

// look marks dashboard i as holding the change if s shows it. A snapshot
// carries the transitions since the dashboard's previous one, which it
// scans, unless the hub may have dropped some (it keeps the last
// hubTransitions) or all is set: then it scans every task.
func (c *change) look(i int, s *hub.Snapshot, all bool) {
	if s == nil || c.held[i].Load() != 0 {
		return
	}
	claimed := func(t *model.Task) bool { return t != nil && t.ID == c.id && t.State == model.StateClaimed }
	found := false
	if all || len(s.Transitions) >= hubTransitions {
		found = slices.ContainsFunc(s.Sources[0].Tasks.AppendTo(nil), claimed)
	} else {
		found = slices.ContainsFunc(s.Transitions, func(t hub.Transition) bool { return claimed(t.After) })
	}
	if found {
		c.mark(i, time.Now().UnixNano())
	}
}

// mark notes that dashboard i held the change at (Unix nanoseconds), if
// it had not been noted yet.
func (c *change) mark(i int, at int64) {
	if c.held[i].CompareAndSwap(0, at) && c.left.Add(-1) == 0 {
		close(c.all)
	}
}

// hubTransitions is how many transitions the hub keeps for a dashboard
// that falls behind.
const hubTransitions = 1000

// held waits until every dashboard shows task id claimed, the claim having
// returned at `at`, and returns how long after that each one first did;
// false when some did not within timeout. One change is tracked at a time.
func (d *dashboards) held(id string, at time.Time, timeout time.Duration) ([]time.Duration, bool) {
	c := &change{id: id, held: make([]atomic.Int64, len(d.latest)), all: make(chan struct{})}
	c.left.Store(int32(len(d.latest)))
	d.change.Store(c)
	defer d.change.Store(nil)
	for i := range d.latest { // snapshots that came before the change was tracked
		switch at, lossy := d.claimed[i].since(id); {
		case at != 0:
			c.mark(i, at)
		case lossy:
			c.look(i, d.latest[i].Load(), true)
		}
	}
	select {
	case <-c.all:
	case <-time.After(timeout):
		return nil, false
	}
	took := make([]time.Duration, len(c.held))
	for i := range c.held {
		took[i] = max(time.Duration(c.held[i].Load()-at.UnixNano()), 0)
	}
	return took, true
}

// analyze gives the planner the filled table's statistics.
func analyze(tb testing.TB, s *Store) {
	if _, err := s.db.exec(context.Background(), "ANALYZE "+s.table); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkPostgresDashboards runs 50 dashboards (a hub each, with its own
// store: pool and LISTEN connection) over one 10,000-task table in this
// process. It reports the server's processor time per idle dashboard (the
// server idle without them measured first, in the same run), then times
// one change (an agent's claim) until all 50 hold it (NOTIFY fan-out), and
// the server's processor time per change.
func BenchmarkPostgresDashboards(b *testing.B) {
	const dashboards, rows = 50, 10_000
	const idle = 10 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	agent := openPG(b, Config{Create: true})
	defer agent.Close()
	fill(b, agent, rows)
	analyze(b, agent)
	master := postmaster(b, agent)
	floor := idleServerCPU(b, master, idle)

	d := openDashboards(ctx, b, agent.cfg.Table, dashboards)
	d.loaded(rows)
	busy := idleServerCPU(b, master, idle)

	cpu := serverCPU(b, master)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t, err := agent.ClaimNext(ctx, sources.ClaimRequest{Agent: fmt.Sprintf("fan-%d", i)})
		if err != nil || t == nil {
			b.Fatalf("claim-next: %v, %v", t, err)
		}
		if _, ok := d.held(t.ID, time.Now(), time.Minute); !ok {
			b.Fatalf("%s: not on every dashboard after a minute", t.ID)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(serverCPU(b, master)-cpu)*1000/ticksPerSecond/float64(b.N), "server-ms/change")
	b.ReportMetric(floor, "server-idle-ms/s")
	b.ReportMetric((busy-floor)/dashboards, "server-ms/s/dashboard")
}
