package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/hub"
)

// BenchmarkPostgresFleet runs 200 agents (claim→complete cycles through one
// store, as `claimdeck next` and `claimdeck complete` take them) in three
// phases of one run, each on a fresh 10,000-task table: alone; beside 50
// stores watching the table (Watch: the NOTIFY fan-out without polls); and
// beside 50 dashboards (as in BenchmarkPostgresDashboards), measured idle
// first. It reports for each phase the agents' cycles per second, the
// server's and this process's processor time, what the server's busy
// backends wait on and the agents' pool waits; the server time the
// watchers and the dashboards add; the NOTIFYs a listener heard, the
// watchers' hints and the dashboards' polls per second; and how long a
// change took until all 50 dashboards held it, idle and while the agents
// ran. Run it with -benchtime 1x: a run takes about 40 s whatever b.N.
func BenchmarkPostgresFleet(b *testing.B) {
	const agents, dashboards, rows = 200, 50, 10_000
	const busy, idle = 8 * time.Second, 6 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	first, _ := fleetTable(b, rows)
	defer first.Close()
	master := postmaster(b, first)
	alone := fleetPhase(b, fleetRun{agents: first, n: agents, master: master}, busy)
	alone.report(b, "alone-")
	// The server's processor time per cycle without anyone watching: what
	// a phase spends beyond it for its cycles is the watchers'.
	perCycle := alone.load.serverMs / alone.perSecond()
	watchers := func(r fleetResult, prefix string) {
		share := r.load.serverMs - r.perSecond()*perCycle
		b.ReportMetric(100*r.perSecond()/alone.perSecond(), prefix+"cycles-%-of-alone")
		b.ReportMetric(share/dashboards, prefix+"server-ms/s/watcher")
	}

	second, _ := fleetTable(b, rows)
	defer second.Close()
	lctx, unlisten := context.WithCancel(ctx)
	hinted, unwatch := watch(b, second.cfg.Table, dashboards)
	listened := fleetPhase(b, fleetRun{agents: second, n: agents, master: master, notifies: listen(lctx, b, second.channel)}, busy)
	// The server wakes every listener of a database, whatever its channel.
	unwatch()
	unlisten()
	listened.report(b, "listen-")
	watchers(listened, "listen-")
	b.ReportMetric(float64(hinted.Load())/dashboards/listened.load.secs, "listen-hints/s/watcher")

	queue, filled := fleetTable(b, rows)
	defer queue.Close()
	d := openDashboards(ctx, b, queue.cfg.Table, dashboards)
	d.loaded(rows)
	// Until the fill is older than an incremental poll's overlap, every
	// poll reads all of it again: let that pass first.
	time.Sleep(time.Until(filled.Add(queue.cfg.Overlap + hub.DefaultEvery)))
	run := fleetRun{master: master, dashboards: d, notifies: listen(ctx, b, queue.channel), prober: newProber(b, queue.cfg.Table)}
	fleetPhase(b, run, idle).report(b, "idle-")
	run.agents, run.n = queue, agents
	both := fleetPhase(b, run, busy)
	both.report(b, "fleet-")
	watchers(both, "fleet-")
}

// fleetCycles ends a phase of agents early: they drain the critical, high
// and medium tasks of fleetTable's 10,000 and leave the low ones to the
// probes.
const fleetCycles = 7_500

// fleetTable is a fresh table of rows pending tasks, analyzed, and when
// they were written.
func fleetTable(tb testing.TB, rows int) (*Store, time.Time) {
	s := openPG(tb, Config{Create: true})
	fill(tb, s, rows)
	filled := time.Now()
	analyze(tb, s)
	return s, filled
}

// fleetRun is what one phase of BenchmarkPostgresFleet runs: n agents on
// the agents' store (none when nil), dashboards to probe with changes by
// the prober's store (none when nil).
type fleetRun struct {
	agents     *Store
	n          int
	master     string
	dashboards *dashboards
	notifies   *atomic.Int64 // NOTIFYs each listener heard
	prober     *prober
}

// fleetResult is one phase's measurements.
type fleetResult struct {
	cycles   int64
	load     loadReport
	polls    float64 // per dashboard per second
	notifies float64 // per second, as each listener receives them
	// allHeld is, per probe, how long after the claim returned the last of
	// the dashboards held it.
	allHeld []time.Duration
}

func (r fleetResult) perSecond() float64 { return float64(r.cycles) / r.load.secs }

// fleetPhase runs r for d and measures it.
func fleetPhase(b *testing.B, r fleetRun, d time.Duration) fleetResult {
	var pool *pgxpool.Pool
	if r.agents != nil {
		pool = r.agents.pgPool
	}
	var out fleetResult
	var polls uint64
	var notified int64
	if r.dashboards != nil {
		polls = r.dashboards.polls()
	}
	if r.notifies != nil {
		notified = r.notifies.Load()
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	if r.prober != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out.allHeld = r.prober.run(b, func(id string, at time.Time) (time.Duration, bool) {
				each, ok := r.dashboards.held(id, at, time.Minute)
				if !ok {
					b.Errorf("probe %s: not on every dashboard after a minute", id)
					return 0, false
				}
				return slices.Max(each), true
			}, stop)
		}()
	}
	l := measureLoad(b, r.master, pool)
	if r.agents != nil {
		var once sync.Once
		end := func() { once.Do(func() { close(stop) }) }
		time.AfterFunc(d, end)
		cycle := claimdeckCycle(b, r.agents)
		var started atomic.Int64
		out.cycles = drive(r.n, func(agent string) bool { return started.Add(1) <= fleetCycles && cycle(agent) }, stop)
		if out.cycles < fleetCycles && time.Since(l.start) < d {
			b.Fatalf("the agents stopped after %d cycles: a call failed", out.cycles)
		}
		end() // the probes end with the agents
	} else {
		time.Sleep(d)
		close(stop)
	}
	out.load = l.end()
	wg.Wait()
	if r.dashboards != nil {
		out.polls = float64(r.dashboards.polls()-polls) / float64(len(r.dashboards.latest)) / out.load.secs
	}
	if r.notifies != nil {
		out.notifies = float64(r.notifies.Load()-notified) / out.load.secs
	}
	return out
}

func (r fleetResult) report(b *testing.B, prefix string) {
	if r.cycles > 0 {
		b.ReportMetric(r.perSecond(), prefix+"cycles/s")
	}
	r.load.report(b, prefix, r.cycles)
	if r.polls > 0 {
		b.ReportMetric(r.polls, prefix+"polls/s/dashboard")
	}
	if r.notifies > 0 {
		b.ReportMetric(r.notifies, prefix+"notifies/s")
	}
	reportAllHeld(b, prefix, r.allHeld)
}

// reportAllHeld reports the median and the worst of how long the probes'
// changes took to reach every dashboard.
func reportAllHeld(b *testing.B, prefix string, allHeld []time.Duration) {
	if len(allHeld) > 0 {
		slices.Sort(allHeld)
		b.ReportMetric(float64(allHeld[len(allHeld)/2].Microseconds())/1000, prefix+"change-all-ms-median")
		b.ReportMetric(float64(allHeld[len(allHeld)-1].Microseconds())/1000, prefix+"change-all-ms-worst")
		b.ReportMetric(float64(len(allHeld)), prefix+"changes")
	}
}

// prober claims low-priority tasks by id, one at a time, to time how
// long a change takes to reach every dashboard. fill gives task g the
// priority low when g % 4 == 0; the agents take the critical, high and
// medium ones first, and low ones in id order from "bench-1000", so the
// prober walks down from "bench-9996".
type prober struct {
	s *Store
	g int
}

func newProber(tb testing.TB, table string) *prober {
	s := openPG(tb, Config{Table: table, DSN: poolDSN(tb, 1)})
	tb.Cleanup(func() { s.Close() })
	return &prober{s: s, g: 9_996}
}

// run probes until stop closes and returns how long each change took to
// reach the last dashboard: reach waits for that, given the task claimed
// and when the claim returned, and says false when it did not come.
func (p *prober) run(b *testing.B, reach func(id string, at time.Time) (time.Duration, bool), stop <-chan struct{}) []time.Duration {
	ctx := context.Background()
	var took []time.Duration
	for ; ; p.g -= 4 {
		select {
		case <-stop:
			return took
		case <-time.After(200 * time.Millisecond):
		}
		id := fmt.Sprintf("bench-%d", p.g)
		if _, err := p.s.Claim(ctx, id, sources.ClaimRequest{Agent: proberAgent}); err != nil {
			b.Errorf("probe %s: %v", id, err)
			return took
		}
		last, ok := reach(id, time.Now())
		if !ok {
			return took
		}
		took = append(took, last)
	}
}

// watch runs Watch on n stores of table, as n dashboards would without
// polling, and counts the hints they all received; stop ends them.
func watch(tb testing.TB, table string, n int) (hints *atomic.Int64, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	hints = new(atomic.Int64)
	var wg sync.WaitGroup
	stores := make([]*Store, n)
	for i := range stores {
		stores[i] = openPG(tb, Config{Table: table})
		ch, err := stores[i].Watch(ctx)
		if err != nil {
			tb.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range ch {
				hints.Add(1)
			}
		}()
	}
	return hints, func() {
		cancel()
		wg.Wait()
		for _, s := range stores {
			s.Close()
		}
	}
}

// listen counts the NOTIFYs on channel, as one listener hears them, until
// ctx ends.
func listen(ctx context.Context, tb testing.TB, channel string) *atomic.Int64 {
	c, err := pgx.Connect(ctx, pgDSN(tb))
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := c.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		tb.Fatal(err)
	}
	var heard atomic.Int64
	done := make(chan struct{})
	tb.Cleanup(func() { <-done })
	go func() {
		defer close(done)
		defer c.Close(context.WithoutCancel(ctx))
		for {
			if _, err := c.WaitForNotification(ctx); err != nil {
				return
			}
			heard.Add(1)
		}
	}()
	return &heard
}
