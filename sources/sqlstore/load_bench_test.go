package sqlstore

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// postmaster is the process id of the test server's postmaster: the
// parent of the backend serving s (the server must run on this machine).
func postmaster(tb testing.TB, s *Store) string {
	var pid int
	if err := s.db.queryRow(context.Background(), "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		tb.Fatal(err)
	}
	f := procStat(tb, strconv.Itoa(pid))
	if f == nil {
		tb.Fatal("the server's backend is not a process of this machine")
	}
	return f[1]
}

// procStat is the fields of /proc/PID/stat after the command name (state,
// ppid, …), or nil when the process is gone.
func procStat(tb testing.TB, pid string) []string {
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return nil
	}
	s := string(data)
	shut := strings.LastIndexByte(s, ')')
	if shut < 0 {
		tb.Fatalf("/proc/%s/stat: %q", pid, s)
	}
	return strings.Fields(s[shut+2:])
}

// cpuTicks is a process's user and system time in clock ticks.
func cpuTicks(f []string) int64 {
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return utime + stime
}

// serverCPU is the processor time, in clock ticks, that the postmaster and
// its children (backends, LISTEN connections included, and background
// workers) have used; other servers on the machine are left out.
func serverCPU(tb testing.TB, master string) int64 {
	var ticks int64
	for _, t := range serverTicks(tb, master) {
		ticks += t
	}
	return ticks
}

// selfCPU is this process's processor time in clock ticks: the benchmark's
// agents and dashboards, which share the machine's cores with the server.
func selfCPU(tb testing.TB) int64 {
	return cpuTicks(procStat(tb, "self"))
}

// ticksPerSecond is USER_HZ on Linux.
const ticksPerSecond = 100

// idleServerCPU is the server's processor time per second, in
// milliseconds, over d.
func idleServerCPU(tb testing.TB, master string, d time.Duration) float64 {
	before := serverCPU(tb, master)
	time.Sleep(d)
	return float64(serverCPU(tb, master)-before) * 1000 / ticksPerSecond / d.Seconds()
}

// waitSampling is how often busyBackends looks at pg_stat_activity.
const waitSampling = 20 * time.Millisecond

// busyBackends counts what the server's running client backends wait on,
// keyed "running" (no wait: on a processor or queued for one) or
// "type:event" (Lock:transactionid, LWLock:WALWrite, …), after the
// connection's application_name and a space where it has one.
const busyBackends = `SELECT COALESCE(NULLIF(application_name, '') || ' ', '') || COALESCE(wait_event_type || ':' || wait_event, 'running'), count(*)
	FROM pg_stat_activity WHERE backend_type = 'client backend' AND state = 'active' AND pid <> pg_backend_pid()
	GROUP BY 1`

// load records what one phase of a benchmark cost: the server's and this
// process's processor time, what the server's busy backends waited on
// (sampled every waitSampling on a connection of its own), and how long
// callers of the agents' pool waited for a connection.
type load struct {
	tb       testing.TB
	master   string
	pool     *pgxpool.Pool
	start    time.Time
	server   int64
	self     int64
	acquired *pgxpool.Stat
	stop     chan struct{}
	done     sync.WaitGroup
	samples  int
	waits    map[string]int
}

// measureLoad starts recording; the pool is the agents' (nil: none).
func measureLoad(tb testing.TB, master string, pool *pgxpool.Pool) *load {
	l := &load{tb: tb, master: master, pool: pool, stop: make(chan struct{}), waits: map[string]int{}}
	c, err := pgx.Connect(context.Background(), pgDSN(tb))
	if err != nil {
		tb.Fatal(err)
	}
	l.done.Add(1)
	go func() {
		defer l.done.Done()
		defer c.Close(context.Background())
		tick := time.NewTicker(waitSampling)
		defer tick.Stop()
		for {
			select {
			case <-l.stop:
				return
			case <-tick.C:
			}
			rows, err := c.Query(context.Background(), busyBackends)
			if err != nil {
				tb.Error(err)
				return
			}
			var what string
			var n int
			_, err = pgx.ForEachRow(rows, []any{&what, &n}, func() error {
				l.waits[what] += n
				return nil
			})
			if err != nil {
				tb.Error(err)
				return
			}
			l.samples++
		}
	}()
	if pool != nil {
		l.acquired = pool.Stat()
	}
	l.start, l.server, l.self = time.Now(), serverCPU(tb, master), selfCPU(tb)
	return l
}

// loadReport is one phase's load.
type loadReport struct {
	secs float64
	// serverMs and selfMs are processor milliseconds per second of the
	// phase: 2000 is both cores.
	serverMs, selfMs float64
	// backends is the mean number of running client backends by what they
	// wait on (see busyBackends).
	backends map[string]float64
	// acquires and poolWait are the agents' pool: connections handed out,
	// and the time callers spent waiting for one because all were busy.
	acquires, emptyAcquires int64
	poolWait                time.Duration
}

// end stops recording.
func (l *load) end() loadReport {
	secs := time.Since(l.start).Seconds()
	server, self := serverCPU(l.tb, l.master), selfCPU(l.tb)
	close(l.stop)
	l.done.Wait()
	r := loadReport{
		secs:     secs,
		serverMs: float64(server-l.server) * 1000 / ticksPerSecond / secs,
		selfMs:   float64(self-l.self) * 1000 / ticksPerSecond / secs,
		backends: map[string]float64{},
	}
	for what, n := range l.waits {
		r.backends[what] = float64(n) / float64(max(l.samples, 1))
	}
	if l.pool != nil {
		now := l.pool.Stat()
		r.acquires = now.AcquireCount() - l.acquired.AcquireCount()
		r.emptyAcquires = now.EmptyAcquireCount() - l.acquired.EmptyAcquireCount()
		r.poolWait = now.EmptyAcquireWaitTime() - l.acquired.EmptyAcquireWaitTime()
	}
	return r
}

// waitClass groups wait events: row locks (Lock:…, e.g. a claim queued
// behind another's row), the server's internal locks (LWLock:…), I/O, and
// the rest.
func waitClass(what string) string {
	what = what[strings.LastIndexByte(what, ' ')+1:] // after the application_name
	kind, _, _ := strings.Cut(what, ":")
	switch kind {
	case "running":
		return "running"
	case "Lock":
		return "lock"
	case "LWLock":
		return "lwlock"
	case "IO":
		return "io"
	}
	return "other"
}

// report adds the phase's metrics to b, each name prefixed (for benchmarks
// of several phases), per cycle where cycles is not zero; the wait events
// behind the classes are logged.
func (r loadReport) report(b *testing.B, prefix string, cycles int64) {
	b.ReportMetric(r.serverMs, prefix+"server-ms/s")
	b.ReportMetric(r.selfMs, prefix+"client-ms/s")
	if cycles > 0 {
		b.ReportMetric(r.serverMs*r.secs/float64(cycles), prefix+"server-ms/cycle")
	}
	classes := map[string]float64{"running": 0, "lock": 0, "lwlock": 0, "io": 0, "other": 0}
	events := make([]string, 0, len(r.backends))
	for what, n := range r.backends {
		classes[waitClass(what)] += n
		events = append(events, what)
	}
	for class, n := range classes {
		b.ReportMetric(n, prefix+"backends-"+class)
	}
	sort.Slice(events, func(i, j int) bool { return r.backends[events[i]] > r.backends[events[j]] })
	var line strings.Builder
	for _, what := range events {
		fmt.Fprintf(&line, " %s %.2f", what, r.backends[what])
	}
	if line.Len() > 0 {
		b.Logf("%sbackends by wait (mean per sample):%s", prefix, line.String())
	}
	if r.acquires > 0 {
		b.ReportMetric(float64(r.poolWait.Microseconds())/1000/float64(r.acquires), prefix+"pool-wait-ms/acquire")
		b.ReportMetric(100*float64(r.emptyAcquires)/float64(r.acquires), prefix+"pool-empty-%")
	}
}

// poolDSN is the test server's DSN with a pgxpool of conns connections
// (zero: pgxpool's default, four or the processor count if larger).
func poolDSN(tb testing.TB, conns int) string {
	dsn := pgDSN(tb)
	if conns == 0 {
		return dsn
	}
	return withParam(dsn, fmt.Sprintf("pool_max_conns=%d", conns))
}
