package sqlstore

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/mesh"
	"github.com/claimdeck/claimdeck/sources/relay"
)

// BenchmarkPostgresFleetProcesses is BenchmarkPostgresFleet with every
// party in a process of its own: 200 agents (claim→complete cycles through
// one store, as `claimdeck next` and `claimdeck complete` take them) in one
// process, 50 dashboards (a store and a hub each, as openDashboards has
// them) in 50 processes, PostgreSQL in its own, and this process, which
// measures and probes. The processes are this test binary re-run as
// TestFleetAgentsProcess and TestFleetDashboardProcess.
//
// Placement, the same in every phase: with taskset, the postmaster and
// every process it has forked (and so every backend it forks later) and
// the agents' process run on CPU 0; the 50 dashboards and this process on
// CPU 1. The dashboards' own processor time therefore does not take the
// server's or the agents' CPU, and what they cost the server is the
// server's, on CPU 0. The affinities are read back from /proc, and the
// server's are restored at the end. The machine's other users are not
// placed: cpu0-busy-% and cpu1-busy-% (from /proc/stat) show each CPU's
// whole load during a phase, and cpu0-others-ms/s what of CPU 0 went to
// neither the server nor the agents. The scheduler moves other users'
// work to the CPU less busy: to CPU 1 while the agents run alone, to CPU 0
// once the dashboards fill CPU 1, so on a shared machine the agents'
// share of alone also measures that; fleet-cycles-%-of-alone-per-cpu0-left
// divides each phase's rate by the part of CPU 0 those users left.
//
// Phases, the agents' two on fresh 10,000-task tables: alone (the
// agents, no dashboard running); floor (nothing running); idle (the 50
// dashboards, loaded, probed); beside (the agents beside the dashboards,
// probed). The server's processor time comes from /proc (the postmaster
// and its children, split by backend: agents', dashboards' pools,
// dashboards' LISTEN connections, the rest) and PostgreSQL's own
// statistics: pg_stat_database's active_time (milliseconds that backends
// spent running statements: wall time, so it also counts time spent
// queued for the CPU and waiting on locks), xact_commit and tup_returned
// deltas, and, when pg_stat_statements is loaded, its total_exec_time per
// statement (wall time too); what the running backends wait on is
// sampled from pg_stat_activity by connection (measureLoad). PostgreSQL
// keeps no processor time of its own, so /proc is the measure of
// processor time and the statistics say which work it was. A backend reports its statistics at most once a
// second, so a phase's figures from them lag by up to a second at each
// end.
//
// The server time per dashboard is, as in BenchmarkPostgresFleet, the
// beside phase's server time less what its cycles cost at the alone
// phase's time per cycle, over 50. A change's time to all dashboards is
// from the probe's claim returning until the 50th dashboard process held
// it (each reads the wall clock; the processes share the machine's).
//
// Run it with -benchtime 1x: a run takes about 35 s whatever b.N. On a
// server started with pg_stat_statements loaded (`.ci/pg-start DIR PORT
// shared_preload_libraries=pg_stat_statements
// pg_stat_statements.track_planning=on`) it creates the extension and
// prints, for each phase, the statements that took the server longest,
// executing and planning.
func BenchmarkPostgresFleetProcesses(b *testing.B) {
	const agents, dashboards, rows = 200, 50, 10_000
	const busy, idle, floor = 8 * time.Second, 6 * time.Second, 4 * time.Second
	first, _ := fleetTable(b, rows)
	defer first.Close()
	master := postmaster(b, first)
	place := placeFleet(b, master)
	stats := newPGStats(b)

	place.server() // backends forked before the pinning
	alone := procPhase(b, procRun{master: master, stats: stats, agents: first.cfg.Table, n: agents}, busy)
	alone.report(b, "alone-")
	perCycle := alone.serverMs / alone.perSecond()
	perCycleActive := alone.activeMs / alone.perSecond()

	queue, filled := fleetTable(b, rows)
	defer queue.Close()
	place.server()
	nothing := procPhase(b, procRun{master: master, stats: stats}, floor)
	nothing.report(b, "floor-")

	var relayed *fleetProc
	if os.Getenv("CLAIMDECK_FLEET_RELAY") != "" {
		relayed = startRelayProc(b, place, queue.cfg.Table)
	}
	fleet := startDashboardProcs(b, place, queue.cfg.Table, dashboards, rows, relayed)
	// Until the fill is older than an incremental poll's overlap, every
	// poll reads all of it again: let that pass first.
	time.Sleep(time.Until(filled.Add(queue.cfg.Overlap + hub.DefaultEvery)))
	place.server()
	run := procRun{master: master, stats: stats, fleet: fleet, prober: newProber(b, queue.cfg.Table), relay: relayed}
	still := procPhase(b, run, idle)
	still.report(b, "idle-")
	b.ReportMetric((still.serverMs-nothing.serverMs)/dashboards, "idle-server-ms/s/dashboard")

	run.agents, run.n = queue.cfg.Table, agents
	var relayTicks int64
	if relayed != nil {
		relayTicks = cpuTicks(procStat(b, strconv.Itoa(relayed.cmd.Process.Pid)))
	}
	both := procPhase(b, run, busy)
	both.report(b, "fleet-")
	if relayed != nil {
		b.ReportMetric(float64(cpuTicks(procStat(b, strconv.Itoa(relayed.cmd.Process.Pid)))-relayTicks)*1000/ticksPerSecond/both.secs, "fleet-relay-process-ms/s")
	}
	b.ReportMetric(100*both.perSecond()/alone.perSecond(), "fleet-cycles-%-of-alone")
	// The same, each phase's rate over the part of CPU 0 the machine's
	// other users left to the server and the agents.
	b.ReportMetric(100*both.perSecond()/both.left()/(alone.perSecond()/alone.left()), "fleet-cycles-%-of-alone-per-cpu0-left")
	b.ReportMetric((both.serverMs-both.perSecond()*perCycle)/dashboards, "fleet-server-ms/s/dashboard")
	b.ReportMetric((both.activeMs-both.perSecond()*perCycleActive)/dashboards, "fleet-active-ms/s/dashboard")
	b.ReportMetric((both.byRole["dashboard"]+both.byRole["listen"])/dashboards, "fleet-dashboard-backends-ms/s/dashboard")
}

// TestFleetAgentsProcess is the agents' process of
// BenchmarkPostgresFleetProcesses: CLAIMDECK_FLEET_AGENTS names the table,
// CLAIMDECK_FLEET_N how many agents, CLAIMDECK_FLEET_FOR for how long.
// It prints "start" when its store is open, then "done CYCLES SECONDS",
// and closes its store when its input ends.
func TestFleetAgentsProcess(t *testing.T) {
	table := os.Getenv("CLAIMDECK_FLEET_AGENTS")
	if table == "" {
		t.Skip("run by BenchmarkPostgresFleetProcesses")
	}
	n, _ := strconv.Atoi(os.Getenv("CLAIMDECK_FLEET_N"))
	d, err := time.ParseDuration(os.Getenv("CLAIMDECK_FLEET_FOR"))
	if err != nil {
		t.Fatal(err)
	}
	s := openPG(t, Config{Table: table})
	defer s.Close()
	fmt.Println("start")
	start := time.Now()
	stop := make(chan struct{})
	time.AfterFunc(d, func() { close(stop) })
	cycle := claimdeckCycle(t, s)
	var started atomic.Int64
	cycles := drive(n, func(agent string) bool { return started.Add(1) <= fleetCycles && cycle(agent) }, stop)
	fmt.Println("done", cycles, time.Since(start).Seconds())
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// TestFleetDashboardProcess is a dashboard process of
// BenchmarkPostgresFleetProcesses: a dashboard of openDashboards on the
// table CLAIMDECK_FLEET_DASHBOARD of CLAIMDECK_FLEET_ROWS tasks. It prints
// "loaded" once it holds them all, then answers each input line "probe ID
// UNIXNANO" (task ID was claimed then) with "held ID NANOSECONDS" once its
// hub's snapshots show the task claimed, and "polls" with "polls N". It
// ends when its input does. With CLAIMDECK_FLEET_CPUPROFILE=DIR each
// dashboard writes a CPU profile of its life after loading to
// DIR/dash-PID.prof (`go tool pprof sqlstore.test DIR/*.prof`).
func TestFleetDashboardProcess(t *testing.T) {
	table := os.Getenv("CLAIMDECK_FLEET_DASHBOARD")
	if table == "" {
		t.Skip("run by BenchmarkPostgresFleetProcesses")
	}
	rows, _ := strconv.Atoi(os.Getenv("CLAIMDECK_FLEET_ROWS"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := openDashboards(ctx, t, table, 1)
	d.loaded(rows)
	if dir := os.Getenv("CLAIMDECK_FLEET_CPUPROFILE"); dir != "" {
		f, _ := os.Create(fmt.Sprintf("%s/dash-%d.prof", dir, os.Getpid()))
		_ = pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	fmt.Println("loaded")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		switch {
		case len(f) == 3 && f[0] == "probe":
			at, _ := strconv.ParseInt(f[2], 10, 64)
			took, ok := d.held(f[1], time.Unix(0, at), time.Minute)
			if !ok {
				fmt.Println("lost", f[1])
				continue
			}
			fmt.Println("held", f[1], took[0].Nanoseconds())
		case len(f) == 1 && f[0] == "polls":
			fmt.Println("polls", d.polls())
		}
	}
}

// TestFleetRelayProcess is the relay of BenchmarkPostgresFleetProcesses
// with CLAIMDECK_FLEET_RELAY set: one store and hub reading the table
// CLAIMDECK_FLEET_RELAY_TABLE for every dashboard, as `claimdeck relay`
// does. It prints "listening URL" and serves until its input ends. Like
// a dashboard it answers "probe ID UNIXNANO" with "held ID NANOSECONDS"
// ("lost ID" after a minute): when a poll of its store first returned the
// task claimed, before any frame was built, so a change's way to the
// dashboards splits into the server's part and the relay's and
// dashboards' part.
func TestFleetRelayProcess(t *testing.T) {
	table := os.Getenv("CLAIMDECK_FLEET_RELAY_TABLE")
	if table == "" {
		t.Skip("run by BenchmarkPostgresFleetProcesses with CLAIMDECK_FLEET_RELAY set")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pause := relay.ListenPause
	if v := os.Getenv("CLAIMDECK_FLEET_RELAY_LISTEN_PAUSE"); v != "" {
		var err error
		if pause, err = time.ParseDuration(v); err != nil {
			t.Fatal(err)
		}
	}
	store := openPG(t, Config{Table: table, ListenPause: pause})
	defer store.Close()
	tap := &pollTap{Store: store}
	hc := relay.HubConfig(hub.Config{Feeds: []hub.Feed{{Source: tap}}})
	if v := os.Getenv("CLAIMDECK_FLEET_RELAY_DEBOUNCE"); v != "" {
		var err error
		if hc.Debounce, err = time.ParseDuration(v); err != nil {
			t.Fatal(err)
		}
	}
	h := hub.New(hc)
	srv := relay.NewServer(fleetRelayToken)
	go h.Run(ctx)
	go srv.Run(ctx, h)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = http.Serve(ln, srv.Handler()) }()
	if dir := os.Getenv("CLAIMDECK_FLEET_CPUPROFILE"); dir != "" {
		f, _ := os.Create(fmt.Sprintf("%s/relay-%d.prof", dir, os.Getpid()))
		_ = pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	fmt.Println("listening", "http://"+ln.Addr().String())
	for in := bufio.NewScanner(os.Stdin); in.Scan(); {
		f := strings.Fields(in.Text())
		if len(f) != 3 || f[0] != "probe" {
			continue
		}
		at, _ := strconv.ParseInt(f[2], 10, 64)
		if got := tap.wait(f[1], time.Minute); got == 0 {
			fmt.Println("lost", f[1])
		} else {
			fmt.Println("held", f[1], max(got-at, 0))
		}
	}
	ln.Close()
}

// pollTap is the relay's store, noting in log when a poll first returned
// each task the prober claimed.
type pollTap struct {
	*Store
	log claimedLog
}

func (p *pollTap) Poll(ctx context.Context, since sources.Cursor, opt ...sources.PollOption) (sources.Delta, error) {
	d, err := p.Store.Poll(ctx, since, opt...)
	now := time.Now().UnixNano()
	p.log.mu.Lock()
	for _, t := range d.Tasks {
		p.log.note(t, now)
	}
	p.log.mu.Unlock()
	return d, err
}

// wait is when a poll first returned id claimed, waiting up to timeout;
// 0 if none did.
func (p *pollTap) wait(id string, timeout time.Duration) int64 {
	for end := time.Now().Add(timeout); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if at, _ := p.log.since(id); at != 0 {
			return at
		}
	}
	return 0
}

// fleetRelayToken is the fleet relay's bearer token.
const fleetRelayToken = mesh.Token("9d4c1b7e2a6f08c35e1d7b9a4f2c6e80")

// startRelayProc starts the fleet's relay, its connections named as the
// dashboards': what it costs the server is the dashboards' cost. It runs
// on the dashboards' CPU, or beside the server with
// CLAIMDECK_FLEET_RELAY_CPU=0 (as docs/relay.md runs it: beside the
// database), where its own processor time is the server's CPU's.
func startRelayProc(tb testing.TB, place *placement, table string) *fleetProc {
	cpu := place.fleetCPU
	if os.Getenv("CLAIMDECK_FLEET_RELAY_CPU") == place.serverCPU {
		cpu = place.serverCPU
	}
	p := startFleetProc(tb, cpu, "TestFleetRelayProcess", withParam(pgDSN(tb), "application_name="+fleetDashboardApp),
		"CLAIMDECK_FLEET_RELAY_TABLE="+table)
	tb.Cleanup(func() { p.end(tb) })
	p.url = p.must(tb, "listening")[1]
	return p
}

// fleetApp names the connections of the fleet's processes in
// pg_stat_activity, which tells their backends apart.
const (
	fleetAgentsApp    = "fleet-agents"
	fleetDashboardApp = "fleet-dashboard"
)

// fleetProc is a process of the fleet: its input and its output's lines.
type fleetProc struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
	url   string // a relay's address
}

// startFleetProc runs this test binary's test on cpu with env added,
// connecting to dsn.
func startFleetProc(tb testing.TB, cpu, test, dsn string, env ...string) *fleetProc {
	cmd := exec.Command("taskset", "-c", cpu, os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), env...)
	cmd.Env = append(cmd.Env, "CLAIMDECK_TEST_PG_DSN="+dsn)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	p := &fleetProc{cmd: cmd, in: in, lines: make(chan string, 64)}
	go func() {
		defer close(p.lines)
		for s := bufio.NewScanner(out); s.Scan(); {
			p.lines <- s.Text()
		}
	}()
	return p
}

// await returns the fields of the process's next line that begins with
// one of words; nil, with an error on tb, if the process ends first.
func (p *fleetProc) await(tb testing.TB, words ...string) []string {
	for line := range p.lines {
		if f := strings.Fields(line); len(f) > 0 && slices.Contains(words, f[0]) {
			return f
		}
	}
	tb.Errorf("%s ended before it said %q", p.cmd.Args[3], words)
	return nil
}

// must is await on the benchmark's own goroutine: it ends the benchmark
// when the process ended first.
func (p *fleetProc) must(tb testing.TB, word string) []string {
	f := p.await(tb, word)
	if f == nil {
		tb.FailNow()
	}
	return f
}

// end closes the process's input and waits for it.
func (p *fleetProc) end(tb testing.TB) {
	p.in.Close()
	for range p.lines {
	}
	if err := p.cmd.Wait(); err != nil {
		tb.Errorf("%s: %v", p.cmd.Args[3], err)
	}
}

// withParam adds a parameter, "key=value", to a DSN, URL or key=value
// form.
func withParam(dsn, param string) string {
	switch {
	case !strings.Contains(dsn, "://"):
		return dsn + " " + param
	case strings.Contains(dsn, "?"):
		return dsn + "&" + param
	}
	return dsn + "?" + param
}

// placement pins the server, the agents and the dashboards to CPUs.
type placement struct {
	tb                  testing.TB
	master              string
	serverCPU, fleetCPU string
	wasServer, wasFleet string
}

// placeFleet pins this process to CPU 1 and the server to CPU 0, and
// restores both at the end; it skips on a machine without two CPUs or
// taskset.
func placeFleet(tb testing.TB, master string) *placement {
	if _, err := exec.LookPath("taskset"); err != nil {
		tb.Skip("taskset is not installed: the fleet's processes cannot be placed")
	}
	p := &placement{tb: tb, master: master, serverCPU: "0", fleetCPU: "1",
		wasServer: cpusAllowed(tb, master), wasFleet: cpusAllowed(tb, "self")}
	if !strings.Contains(p.wasFleet, "-") && !strings.Contains(p.wasFleet, ",") {
		tb.Skipf("this process may run on CPU %s only: the fleet needs two", p.wasFleet)
	}
	p.pin(strconv.Itoa(os.Getpid()), p.fleetCPU)
	tb.Cleanup(func() {
		p.pin(strconv.Itoa(os.Getpid()), p.wasFleet)
		for _, pid := range serverPids(tb, master) {
			p.pin(pid, p.wasServer)
		}
	})
	return p
}

// server pins the postmaster and every process it has forked to the
// server's CPU; backends it forks later inherit it.
func (p *placement) server() {
	for _, pid := range serverPids(p.tb, p.master) {
		p.pin(pid, p.serverCPU)
	}
}

// pin sets every thread of pid to run on cpus and reads it back.
func (p *placement) pin(pid, cpus string) {
	out, err := exec.Command("taskset", "-a", "-p", "-c", cpus, pid).CombinedOutput()
	if procStat(p.tb, pid) == nil {
		return // ended meanwhile
	}
	if err != nil {
		p.tb.Fatalf("taskset -a -p -c %s %s: %v: %s", cpus, pid, err, out)
	}
	if got := cpusAllowed(p.tb, pid); got != cpus && got != "" { // "": it ended since
		p.tb.Fatalf("process %s may run on CPUs %s after taskset, not %s", pid, got, cpus)
	}
}

// cpusAllowed is the CPU list a process may run on ("0-1"), or "" when it
// is gone.
func cpusAllowed(tb testing.TB, pid string) string {
	data, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	tb.Fatalf("/proc/%s/status has no Cpus_allowed_list", pid)
	return ""
}

// dashboardProcs are the dashboards' processes.
type dashboardProcs []*fleetProc

// startDashboardProcs starts n dashboard processes on the fleet's CPU and
// waits until each holds all rows of table; they end with tb.
func startDashboardProcs(tb testing.TB, place *placement, table string, n, rows int, relayed *fleetProc) dashboardProcs {
	dsn := withParam(pgDSN(tb), "application_name="+fleetDashboardApp)
	// A setting of the dashboards' sessions, to see what it changes (e.g.
	// plan_cache_mode=force_generic_plan).
	if setting := os.Getenv("CLAIMDECK_FLEET_DASHBOARD_PG_SETTING"); setting != "" {
		dsn = withParam(dsn, setting)
	}
	env := []string{"CLAIMDECK_FLEET_DASHBOARD=" + table, "CLAIMDECK_FLEET_ROWS=" + strconv.Itoa(rows)}
	if relayed != nil {
		env = append(env, "CLAIMDECK_FLEET_RELAY_URL="+relayed.url)
	}
	d := make(dashboardProcs, n)
	for i := range d {
		d[i] = startFleetProc(tb, place.fleetCPU, "TestFleetDashboardProcess", dsn, env...)
	}
	tb.Cleanup(func() {
		for _, p := range d {
			p.end(tb)
		}
	})
	for _, p := range d {
		p.must(tb, "loaded")
		if got := cpusAllowed(tb, strconv.Itoa(p.cmd.Process.Pid)); got != place.fleetCPU {
			tb.Fatalf("a dashboard runs on CPUs %s, not %s", got, place.fleetCPU)
		}
	}
	return d
}

// polls is how many polls the dashboards have made, all together.
func (d dashboardProcs) polls(tb testing.TB) uint64 {
	var n uint64
	for _, p := range d {
		fmt.Fprintln(p.in, "polls")
	}
	for _, p := range d {
		v, _ := strconv.ParseUint(p.must(tb, "polls")[1], 10, 64)
		n += v
	}
	return n
}

// cpuTicks is the processor time the dashboards' processes have used.
func (d dashboardProcs) cpuTicks(tb testing.TB) int64 {
	var ticks int64
	for _, p := range d {
		if f := procStat(tb, strconv.Itoa(p.cmd.Process.Pid)); f != nil {
			ticks += cpuTicks(f)
		}
	}
	return ticks
}

// held tells every dashboard that task id was claimed at `at` and returns
// how long after that the last of them held it, and the first; false
// when one did not within its minute.
func (d dashboardProcs) held(tb testing.TB, id string, at time.Time) (last, first time.Duration, ok bool) {
	for _, p := range d {
		fmt.Fprintln(p.in, "probe", id, at.UnixNano())
	}
	first, ok = -1, true
	for _, p := range d {
		f := p.await(tb, "held", "lost")
		switch {
		case len(f) < 2 || f[1] != id || f[0] == "held" && len(f) < 3:
			tb.Errorf("probe %s: a dashboard answered %q", id, f)
			ok = false
		case f[0] == "lost":
			tb.Errorf("probe %s: not on a dashboard after a minute", id)
			ok = false
		default:
			ns, _ := strconv.ParseInt(f[2], 10, 64)
			last = max(last, time.Duration(ns))
			if first < 0 || time.Duration(ns) < first {
				first = time.Duration(ns)
			}
		}
	}
	return last, first, ok
}

// procRun is one phase of BenchmarkPostgresFleetProcesses: n agents on
// table agents (none when ""), dashboards probed by the prober (none when
// fleet is nil).
type procRun struct {
	master string
	stats  *pgStats
	agents string
	n      int
	fleet  dashboardProcs
	prober *prober
	relay  *fleetProc // the dashboards' relay, probed too; nil without one
}

// procResult is one phase's measurements, per second of the phase.
type procResult struct {
	cycles     int64
	agentSecs  float64
	secs       float64
	serverMs   float64            // the postmaster and its children, from /proc
	byRole     map[string]float64 // serverMs by backend: agents, dashboard, listen, other
	agentsMs   float64            // the agents' process
	fleetMs    float64            // the dashboards' processes
	busy       [2]float64         // each CPU's busy share, %, steal included
	steal      [2]float64         // each CPU's time taken by the host's other guests, %
	activeMs   float64            // pg_stat_database.active_time
	commits    float64            // pg_stat_database.xact_commit
	tuples     float64            // pg_stat_database.tup_returned
	statements []statementCost
	waits      map[string]float64 // running backends by application_name and wait (see busyBackends)
	polls      float64            // per dashboard
	allHeld    []time.Duration
	// relayHeld is, per probe in allHeld's order, when the relay's poll
	// of the server first returned the change.
	relayHeld []time.Duration
	firstHeld []time.Duration // the first dashboard's, likewise
}

func (r procResult) perSecond() float64 { return float64(r.cycles) / r.agentSecs }

// others is the processor time per second that CPU 0 (the server's and the
// agents') gave to neither: the machine's other users.
func (r procResult) others() float64 { return max(r.busy[0]*10-r.serverMs-r.agentsMs, 0) }

// left is the share of CPU 0 that the machine's other users left.
func (r procResult) left() float64 { return 1 - min(r.others()/1000, 0.99) }

// procPhase runs r for d and measures it.
func procPhase(b *testing.B, r procRun, d time.Duration) procResult {
	var agents *fleetProc
	if r.agents != "" {
		agents = startFleetProc(b, "0", "TestFleetAgentsProcess", withParam(pgDSN(b), "application_name="+fleetAgentsApp),
			"CLAIMDECK_FLEET_AGENTS="+r.agents, "CLAIMDECK_FLEET_N="+strconv.Itoa(r.n), "CLAIMDECK_FLEET_FOR="+d.String())
		defer agents.end(b)
		agents.must(b, "start")
	}
	var polls uint64
	var fleetTicks int64
	if r.fleet != nil {
		polls, fleetTicks = r.fleet.polls(b), r.fleet.cpuTicks(b)
	}
	stop := make(chan struct{})
	var out procResult
	var wg sync.WaitGroup
	if r.prober != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out.allHeld = r.prober.run(b, func(id string, at time.Time) (time.Duration, bool) {
				if r.relay == nil {
					last, _, ok := r.fleet.held(b, id, at)
					return last, ok
				}
				fmt.Fprintln(r.relay.in, "probe", id, at.UnixNano())
				last, first, ok := r.fleet.held(b, id, at)
				f := r.relay.await(b, "held", "lost")
				if len(f) < 3 || f[0] != "held" || f[1] != id {
					b.Errorf("probe %s: the relay answered %q", id, f)
					return last, false
				}
				ns, _ := strconv.ParseInt(f[2], 10, 64)
				if ok {
					out.relayHeld = append(out.relayHeld, time.Duration(ns))
					out.firstHeld = append(out.firstHeld, first)
				}
				return last, ok
			}, stop)
		}()
	}
	waits := measureLoad(b, r.master, nil)
	start, backends, stats := time.Now(), serverTicks(b, r.master), r.stats.read()
	cpus, steals := cpuBusy(b)
	var agentTicks int64
	if agents != nil {
		agentTicks = cpuTicks(procStat(b, strconv.Itoa(agents.cmd.Process.Pid)))
		f := agents.must(b, "done")
		out.cycles, _ = strconv.ParseInt(f[1], 10, 64)
		out.agentSecs, _ = strconv.ParseFloat(f[2], 64)
		if out.cycles < fleetCycles && out.agentSecs < d.Seconds() {
			b.Fatalf("the agents stopped after %d cycles: a call failed", out.cycles)
		}
	} else {
		time.Sleep(d)
	}
	close(stop)
	out.waits = waits.end().backends
	out.secs = time.Since(start).Seconds()
	perSec := func(ticks int64) float64 { return float64(ticks) * 1000 / ticksPerSecond / out.secs }
	if agents != nil {
		out.agentsMs = perSec(cpuTicks(procStat(b, strconv.Itoa(agents.cmd.Process.Pid))) - agentTicks)
	}
	roles := backendRoles(b)
	out.byRole = map[string]float64{}
	for pid, ticks := range serverTicks(b, r.master) {
		ms := perSec(ticks - backends[pid])
		out.serverMs += ms
		out.byRole[cmp.Or(roles[pid], "other")] += ms
	}
	busy, steal := cpuBusy(b)
	for i := range busy {
		out.busy[i] = 100 * float64(busy[i]-cpus[i]) / ticksPerSecond / out.secs
		out.steal[i] = 100 * float64(steal[i]-steals[i]) / ticksPerSecond / out.secs
	}
	now := r.stats.read()
	out.activeMs = (now.active - stats.active) / out.secs
	out.commits = float64(now.commits-stats.commits) / out.secs
	out.tuples = float64(now.tuples-stats.tuples) / out.secs
	out.statements = now.since(stats, out.secs)
	wg.Wait()
	if r.fleet != nil {
		out.fleetMs = perSec(r.fleet.cpuTicks(b) - fleetTicks)
		out.polls = float64(r.fleet.polls(b)-polls) / float64(len(r.fleet)) / out.secs
	}
	return out
}

func (r procResult) report(b *testing.B, prefix string) {
	if r.cycles > 0 {
		b.ReportMetric(r.perSecond(), prefix+"cycles/s")
		b.ReportMetric(r.serverMs/r.perSecond(), prefix+"server-ms/cycle")
		b.ReportMetric(r.agentsMs, prefix+"agents-ms/s")
	}
	b.ReportMetric(r.serverMs, prefix+"server-ms/s")
	b.ReportMetric(r.activeMs, prefix+"active-ms/s")
	b.ReportMetric(r.commits, prefix+"commits/s")
	b.ReportMetric(r.tuples, prefix+"tuples/s")
	b.ReportMetric(r.busy[0], prefix+"cpu0-busy-%")
	b.ReportMetric(r.busy[1], prefix+"cpu1-busy-%")
	// This machine is a virtual one: what its host gave other guests.
	b.ReportMetric(r.steal[0], prefix+"cpu0-steal-%")
	b.ReportMetric(r.steal[1], prefix+"cpu1-steal-%")
	// What else ran on CPU 0: the machine's other users, whom the
	// scheduler moves there when CPU 1 is busier.
	b.ReportMetric(r.others(), prefix+"cpu0-others-ms/s")
	roles := make([]string, 0, len(r.byRole))
	for role := range r.byRole {
		roles = append(roles, role)
	}
	sort.Strings(roles)
	var line strings.Builder
	for _, role := range roles {
		fmt.Fprintf(&line, " %s %.1f", role, r.byRole[role])
	}
	// Printed, not logged: a benchmark's log is cut at ten lines.
	fmt.Fprintf(os.Stderr, "%sserver ms/s by backend:%s\n", prefix, line.String())
	waits := slices.Collect(maps.Keys(r.waits))
	sort.Slice(waits, func(i, j int) bool { return r.waits[waits[i]] > r.waits[waits[j]] })
	line.Reset()
	for _, what := range waits[:min(len(waits), 10)] {
		fmt.Fprintf(&line, " %s %.2f;", what, r.waits[what])
	}
	fmt.Fprintf(os.Stderr, "%srunning backends by wait (mean per sample):%s\n", prefix, line.String())
	for _, s := range r.statements {
		fmt.Fprintf(os.Stderr, "%sstatement %.1f ms/s executing, %.1f planning, %.1f calls/s, %.0f rows/s: %.100s\n", prefix, s.ms, s.plan, s.calls, s.rows, s.query)
	}
	if r.polls > 0 {
		b.ReportMetric(r.fleetMs, prefix+"dashboards-ms/s")
		b.ReportMetric(r.polls, prefix+"polls/s/dashboard")
	}
	if len(r.relayHeld) == len(r.allHeld) && len(r.allHeld) > 0 {
		// The server's part of each change, and of the slowest one.
		worst := 0
		for i, d := range r.allHeld {
			if d > r.allHeld[worst] {
				worst = i
			}
		}
		b.ReportMetric(float64(r.relayHeld[worst].Microseconds())/1000, prefix+"change-worst-at-relay-ms")
		b.ReportMetric(float64(r.firstHeld[worst].Microseconds())/1000, prefix+"change-worst-first-dashboard-ms")
		sorted := slices.Sorted(slices.Values(r.relayHeld))
		b.ReportMetric(float64(sorted[len(sorted)/2].Microseconds())/1000, prefix+"change-at-relay-ms-median")
		b.ReportMetric(float64(sorted[len(sorted)-1].Microseconds())/1000, prefix+"change-at-relay-ms-worst")
	}
	reportAllHeld(b, prefix, r.allHeld)
}

// serverTicks is the processor time, in clock ticks, of the postmaster
// and each process it forked, by process id.
func serverTicks(tb testing.TB, master string) map[string]int64 {
	ticks := map[string]int64{}
	for _, pid := range serverPids(tb, master) {
		if f := procStat(tb, pid); f != nil {
			ticks[pid] = cpuTicks(f)
		}
	}
	return ticks
}

// backendRoles tells the fleet's backends apart by pg_stat_activity:
// "agents", "dashboard" (a dashboard's pool) and "listen" (a dashboard's
// LISTEN connection), by process id.
func backendRoles(tb testing.TB) map[string]string {
	ctx := context.Background()
	c, err := pgx.Connect(ctx, pgDSN(tb))
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close(ctx)
	rows, err := c.Query(ctx, `SELECT pid::text, application_name, query ~ '^(UN)?LISTEN ' FROM pg_stat_activity
		WHERE application_name IN ($1, $2)`, fleetAgentsApp, fleetDashboardApp)
	if err != nil {
		tb.Fatal(err)
	}
	roles := map[string]string{}
	var pid, app string
	var listen bool
	if _, err := pgx.ForEachRow(rows, []any{&pid, &app, &listen}, func() error {
		switch {
		case app == fleetAgentsApp:
			roles[pid] = "agents"
		case listen:
			roles[pid] = "listen"
		default:
			roles[pid] = "dashboard"
		}
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
	return roles
}

// cpuBusy is each CPU's busy time in clock ticks (all but idle and
// iowait, steal included), and its steal time (what the host gave its
// other guests while this one had work), from /proc/stat.
func cpuBusy(tb testing.TB) (busy, steal []int64) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 9 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		var ticks int64
		for i, v := range f[1:] {
			n, _ := strconv.ParseInt(v, 10, 64)
			if i != 3 && i != 4 { // idle, iowait
				ticks += n
			}
		}
		n, _ := strconv.ParseInt(f[8], 10, 64)
		busy, steal = append(busy, ticks), append(steal, n)
	}
	if len(busy) < 2 {
		tb.Skip("the fleet needs two CPUs")
	}
	return busy[:2], steal[:2]
}

// pgStats reads PostgreSQL's statistics for the test database on a
// connection of its own.
type pgStats struct {
	tb         testing.TB
	c          *pgx.Conn
	statements bool // pg_stat_statements is loaded
}

// pgStatsRead is one reading of them.
type pgStatsRead struct {
	active          float64 // milliseconds
	commits, tuples int64
	statements      map[int64]statementCost // totals, by queryid
}

// statementCost is what a statement cost the server, as pg_stat_statements
// counts it: milliseconds executing it and planning it (wall time; plan
// time is counted with pg_stat_statements.track_planning on), calls and
// rows.
type statementCost struct {
	query                 string
	ms, plan, calls, rows float64
}

func newPGStats(tb testing.TB) *pgStats {
	ctx := context.Background()
	c, err := pgx.Connect(ctx, pgDSN(tb))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close(ctx) })
	s := &pgStats{tb: tb, c: c}
	_, err = c.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
	if err == nil {
		_, err = c.Exec(ctx, "SELECT 1 FROM pg_stat_statements LIMIT 1")
	}
	if err == nil {
		s.statements = true
	} else {
		tb.Logf("pg_stat_statements not read (%v): per-statement costs are left out", err)
	}
	return s
}

func (s *pgStats) read() pgStatsRead {
	ctx := context.Background()
	var r pgStatsRead
	if err := s.c.QueryRow(ctx, `SELECT active_time, xact_commit, tup_returned FROM pg_stat_database
		WHERE datname = current_database()`).Scan(&r.active, &r.commits, &r.tuples); err != nil {
		s.tb.Fatal(err)
	}
	if !s.statements {
		return r
	}
	rows, err := s.c.Query(ctx, `SELECT queryid, query, total_exec_time, total_plan_time, calls, rows FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`)
	if err != nil {
		s.tb.Fatal(err)
	}
	r.statements = map[int64]statementCost{}
	var id int64
	var c statementCost
	if _, err := pgx.ForEachRow(rows, []any{&id, &c.query, &c.ms, &c.plan, &c.calls, &c.rows}, func() error {
		was := r.statements[id] // a query id may repeat for other users
		r.statements[id] = statementCost{query: c.query, ms: was.ms + c.ms, plan: was.plan + c.plan, calls: was.calls + c.calls, rows: was.rows + c.rows}
		return nil
	}); err != nil {
		s.tb.Fatal(err)
	}
	return r
}

// since is the eight statements that cost most between was and r, per
// second over secs.
func (r pgStatsRead) since(was pgStatsRead, secs float64) []statementCost {
	var all []statementCost
	for id, c := range r.statements {
		p := was.statements[id]
		d := statementCost{query: strings.Join(strings.Fields(c.query), " "),
			ms: (c.ms - p.ms) / secs, plan: (c.plan - p.plan) / secs, calls: (c.calls - p.calls) / secs, rows: (c.rows - p.rows) / secs}
		if d.calls > 0 && !strings.Contains(d.query, "pg_stat_") {
			all = append(all, d)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ms+all[i].plan > all[j].ms+all[j].plan })
	return all[:min(len(all), 8)]
}

// serverPids is the postmaster and every process it forked.
func serverPids(tb testing.TB, master string) []string {
	pids := []string{master}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		if f := procStat(tb, e.Name()); f != nil && f[1] == master {
			pids = append(pids, e.Name())
		}
	}
	return pids
}
