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

// serverCPU is the processor time, in clock ticks, every postgres process
// of this machine has used: the test server's backends, LISTEN
// connections included, and its background workers.
func serverCPU(tb testing.TB) int64 {
	procs, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		tb.Fatal(err)
	}
	var ticks int64
	for _, p := range procs {
		data, err := os.ReadFile(p)
		if err != nil {
			continue // the process ended
		}
		s := string(data)
		open, shut := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || shut < open || s[open+1:shut] != "postgres" {
			continue
		}
		f := strings.Fields(s[shut+2:])
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
func idleServerCPU(tb testing.TB, d time.Duration) float64 {
	before := serverCPU(tb)
	time.Sleep(d)
	return float64(serverCPU(tb)-before) * 1000 / ticksPerSecond / d.Seconds()
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
	floor := idleServerCPU(b, idle)

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
	busy := idleServerCPU(b, idle)

	cpu := serverCPU(b)
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
	b.ReportMetric(float64(serverCPU(b)-cpu)*1000/ticksPerSecond/float64(b.N), "server-ms/change")
	b.ReportMetric(floor, "server-idle-ms/s")
	b.ReportMetric((busy-floor)/dashboards, "server-ms/s/dashboard")
	cancel()
}
