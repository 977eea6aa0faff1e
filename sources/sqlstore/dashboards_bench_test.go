package sqlstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/hub"
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

// serverCPU is the processor time, in clock ticks, that the postmaster and
// its children (backends, LISTEN connections included, and background
// workers) have used; other servers on the machine are left out.
func serverCPU(tb testing.TB, master string) int64 {
	procs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		tb.Fatal(err)
	}
	var ticks int64
	for _, p := range procs {
		pid := filepath.Base(p)
		f := procStat(tb, pid)
		if f == nil || (pid != master && f[1] != master) {
			continue
		}
		utime, _ := strconv.ParseInt(f[11], 10, 64)
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += utime + stime
	}
	return ticks
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
	if _, err := agent.db.exec(ctx, "ANALYZE "+agent.table); err != nil {
		b.Fatal(err)
	}
	master := postmaster(b, agent)
	floor := idleServerCPU(b, master, idle)

	var wg sync.WaitGroup
	defer wg.Wait()
	latest := make([]atomic.Pointer[hub.Snapshot], dashboards)
	for i := range dashboards {
		s := openPG(b, Config{Table: agent.cfg.Table})
		defer s.Close()
		h := hub.New(hub.Config{Feeds: []hub.Feed{{Source: s}}})
		wg.Add(2)
		go func() { defer wg.Done(); h.Run(ctx) }()
		go func() {
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case snap := <-h.Snapshots():
					latest[i].Store(&snap)
				}
			}
		}()
	}
	all := func(ok func(*hub.Snapshot) bool) {
		for i := range latest {
			for s := latest[i].Load(); s == nil || !ok(s); s = latest[i].Load() {
				time.Sleep(time.Millisecond)
			}
		}
	}
	all(func(s *hub.Snapshot) bool { return s.Len() == rows && !s.Sources[0].Loading })
	busy := idleServerCPU(b, master, idle)

	cpu := serverCPU(b, master)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t, err := agent.ClaimNext(ctx, sources.ClaimRequest{Agent: fmt.Sprintf("fan-%d", i)})
		if err != nil || t == nil {
			b.Fatalf("claim-next: %v, %v", t, err)
		}
		all(func(s *hub.Snapshot) bool {
			for _, task := range s.Sources[0].Tasks {
				if task.ID == t.ID {
					return task.State == model.StateClaimed
				}
			}
			return false
		})
	}
	b.StopTimer()
	b.ReportMetric(float64(serverCPU(b, master)-cpu)*1000/ticksPerSecond/float64(b.N), "server-ms/change")
	b.ReportMetric(floor, "server-idle-ms/s")
	b.ReportMetric((busy-floor)/dashboards, "server-ms/s/dashboard")
	cancel()
}
