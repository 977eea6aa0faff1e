package tui

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/sqlstore"
	"github.com/claimdeck/claimdeck/theme"
)

// embeddedQueue is an SQLite queue file of n tasks, as `claimdeck` opens
// it: a quarter claimed by one of eight agents, the rest waiting. The rows
// go in with one statement so that setup does not dominate.
func embeddedQueue(tb testing.TB, n int) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "queue.db")
	ctx := context.Background()
	store, err := sqlstore.Open(ctx, sqlstore.Config{Name: "local", Driver: "sqlite", Path: path, Create: true})
	if err != nil {
		tb.Fatal(err)
	}
	store.Close()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	now := time.Now().UTC()
	ts := func(d time.Duration) string { return now.Add(d).Format("2006-01-02T15:04:05.000Z") }
	if _, err := db.ExecContext(ctx, `WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < ?)
		INSERT INTO governance_tasks (id, title, priority, status, assigned_worker, version, created_at, updated_at, started_at)
		SELECT 'TASK-' || i, 'Rotate the certificates of service ' || (i % 977) || ' in region eu-west',
			CASE i % 4 WHEN 0 THEN 'low' WHEN 1 THEN 'medium' WHEN 2 THEN 'high' ELSE 'critical' END,
			CASE WHEN i % 4 = 0 THEN 'in_progress' ELSE 'pending' END,
			CASE WHEN i % 4 = 0 THEN 'agent-' || (i % 8) END, 0, ?, ?, CASE WHEN i % 4 = 0 THEN ? END FROM g`,
		n, ts(-time.Hour), ts(-time.Minute), ts(-10*time.Minute)); err != nil {
		tb.Fatal(err)
	}
	return path
}

// TestDashboardProcess is the dashboard process BenchmarkStartToFirstFrame
// starts: it opens the queue, builds the hub and the model, prints
// "frame" once the first View shows tasks, then its memory, and exits.
func TestDashboardProcess(t *testing.T) {
	cfg := sqlstore.Config{Name: "local", Driver: "sqlite", Path: os.Getenv("CLAIMDECK_FIRST_FRAME_DB")}
	if table := os.Getenv("CLAIMDECK_FIRST_FRAME_PG_TABLE"); table != "" {
		cfg = sqlstore.Config{Name: "team", Driver: "postgres", DSN: os.Getenv("CLAIMDECK_TEST_PG_DSN"), Table: table}
	}
	if cfg.Path == "" && cfg.Table == "" {
		t.Skip("run by BenchmarkStartToFirstFrame and BenchmarkStartWithHistory")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store, err := sqlstore.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	h := hub.New(hub.Config{Feeds: []hub.Feed{{Source: store, Every: 2 * time.Second}}})
	go h.Run(ctx)
	m, err := New(Options{Hub: h, Styles: theme.New(theme.Options{Mode: theme.Dark})})
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	var apply time.Duration // the dashboard's own part: merge, sort, first View
	for m.board.snap.Len() == 0 {
		s := <-h.Snapshots()
		start := time.Now()
		m.Update(snapshotMsg(s))
		apply = time.Since(start)
	}
	start := time.Now()
	if !strings.Contains(m.View().Content, "TASK-") {
		t.Fatal("the first frame shows no task")
	}
	apply += time.Since(start)
	fmt.Println("frame")
	for loading(m.board.snap) {
		m.Update(snapshotMsg(<-h.Snapshots()))
	}
	m.View()
	fmt.Println("loaded")
	// At rest: the hub goes on polling, nothing changes; resident memory is
	// read after a few polls, as an on-call human would find the process.
	// With CLAIMDECK_CHURN=N, a writer changes N tasks a second meanwhile,
	// for churnFor, as agents at work would.
	wait := restAfterLoad
	if n, _ := strconv.Atoi(os.Getenv("CLAIMDECK_CHURN")); n > 0 && cfg.Path != "" {
		wait = churnFor
		go churn(ctx, t, cfg.Path, n)
	}
	cpu0 := cpuTime()
	for rest := time.After(wait); ; {
		select {
		case s := <-h.Snapshots():
			m.Update(snapshotMsg(s))
			continue
		case <-rest:
		}
		break
	}
	fmt.Println("memory", procStatus("VmRSS"), procStatus("VmHWM"), m.board.snap.Len(), apply.Microseconds(), (cpuTime() - cpu0).Milliseconds())
	// The floor under that figure: the pages of the binary and libraries
	// it touched, and the heap that is still reachable once collected —
	// the dashboard's own rows included, so m is kept alive to the end.
	defer runtime.KeepAlive(m)
	file := procStatus("RssFile")
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Println("floor", file, ms.HeapAlloc>>10, ms.Sys>>10)
	if path := os.Getenv("CLAIMDECK_HEAP_PROFILE"); path != "" {
		// What that live heap holds, for `go tool pprof`.
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
			t.Fatal(err)
		}
	}
}

// churnFor is how long the writer of CLAIMDECK_CHURN changes tasks.
const churnFor = 40 * time.Second

// churn retitles n tasks of the embedded queue a second, each change a
// new version, through its own connection.
func churn(ctx context.Context, t *testing.T, path string, n int) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Error(err)
		return
	}
	defer db.Close()
	for i := 0; ctx.Err() == nil; time.Sleep(time.Second) {
		for range n {
			i++
			if _, err := db.ExecContext(ctx, `UPDATE governance_tasks SET title = 'Retitled ' || ?, version = version + 1,
				updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = 'TASK-' || ?`, i, 1+i*7919%100_000); err != nil && ctx.Err() == nil {
				t.Error(err)
				return
			}
		}
	}
}

// cpuTime is the processor time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// restAfterLoad is how long the dashboard process runs on after loading
// before its resident memory is read.
const restAfterLoad = 5 * time.Second

// procStatus is a /proc/self/status figure in kB, or -1.
func procStatus(field string) int {
	data, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return -1
}

// BenchmarkStartToFirstFrame starts a dashboard process over an embedded
// SQLite queue and times it until its first frame shows tasks (target:
// ≤ 200 ms; the first screen, painted while the rest loads), then reports
// when every task was loaded and drawn (loaded-ms), the process's resident
// memory at rest, restAfterLoad later (rss-MB), and at its peak (peak-MB;
// rest-cpu-s is the processor time spent meanwhile; target: ≤ 200 MB at
// 100,000 tasks), and how much of the first frame was the dashboard's own
// (dashboard-ms: applying the first snapshot and drawing it; the rest is
// the process, the store and the source's first poll). Below rss-MB lie
// file-MB, the pages of the binary it touched, and live-MB, the heap still
// reachable after a collection at the end (go-sys-MB: all the Go runtime
// holds from the system then): resident memory cannot fall below their
// sum whatever the collector does. The process
// is this test binary running TestDashboardProcess: no terminal, otherwise
// the dashboard's start — store, hub, first poll, model, first View.
func BenchmarkStartToFirstFrame(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			firstFrames(b, n, "CLAIMDECK_FIRST_FRAME_DB="+embeddedQueue(b, n))
		})
	}
}

// firstFrames starts the dashboard process b.N times with env added and
// times each start to its first frame, which must show want tasks.
func firstFrames(b *testing.B, want int, env ...string) {
	var rss, peak, apply, cpu, file, live, sys float64
	var loaded time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		cmd := exec.Command(os.Args[0], "-test.run=^TestDashboardProcess$", "-test.v")
		cmd.Env = append(os.Environ(), env...)
		cmd.Stderr = os.Stderr // what the dashboard says of itself, e.g. GODEBUG=gctrace=1
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		lines := bufio.NewScanner(out)
		for lines.Scan() && lines.Text() != "frame" {
		}
		b.StopTimer()
		for lines.Scan() && lines.Text() != "loaded" {
		}
		loaded += time.Since(start)
		for lines.Scan() {
			var kb, hwm, tasks, us, cpuMS, fileKB, liveKB, sysKB int
			if _, err := fmt.Sscanf(lines.Text(), "floor %d %d %d", &fileKB, &liveKB, &sysKB); err == nil {
				file, live, sys = max(file, float64(fileKB)/1024), max(live, float64(liveKB)/1024), max(sys, float64(sysKB)/1024)
			}
			if _, err := fmt.Sscanf(lines.Text(), "memory %d %d %d %d %d", &kb, &hwm, &tasks, &us, &cpuMS); err == nil {
				if tasks != want {
					b.Fatalf("the first frame had %d tasks, want %d", tasks, want)
				}
				rss, peak = max(rss, float64(kb)/1024), max(peak, float64(hwm)/1024)
				apply += float64(us) / 1000
				cpu += float64(cpuMS) / 1000
			}
		}
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(apply/float64(b.N), "dashboard-ms")
	b.ReportMetric(float64(loaded.Milliseconds())/float64(b.N), "loaded-ms")
	b.ReportMetric(rss, "rss-MB")
	b.ReportMetric(peak, "peak-MB")
	b.ReportMetric(cpu/float64(b.N), "rest-cpu-s")
	b.ReportMetric(file, "file-MB")
	b.ReportMetric(live, "live-MB")
	b.ReportMetric(sys, "go-sys-MB")
}

// BenchmarkStartMillionLive is BenchmarkStartToFirstFrame at 1,000,000
// live tasks: apart, as writing the queue alone takes seconds.
func BenchmarkStartMillionLive(b *testing.B) {
	firstFrames(b, 1_000_000, "CLAIMDECK_FIRST_FRAME_DB="+embeddedQueue(b, 1_000_000))
}

// BenchmarkResidentUnderChange is BenchmarkStartToFirstFrame's 100,000
// tasks with a writer changing 200 of them a second for churnFor after
// loading: rss-MB is resident memory then, rest-cpu-s the processor time
// the dashboard spent meanwhile. Run it with GOMEMLIMIT set to see what a
// soft memory limit costs.
func BenchmarkResidentUnderChange(b *testing.B) {
	path := embeddedQueue(b, 100_000)
	firstFrames(b, 100_000, "CLAIMDECK_FIRST_FRAME_DB="+path, "CLAIMDECK_CHURN=200")
}
