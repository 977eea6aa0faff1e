package sqlstore

import (
	"context"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/hub"
)

// BenchmarkSQLiteIdleWatch is a dashboard's cost at rest on a SQLite
// queue of 100,000 tasks: the hub's 2 s poll alone (the source's Watch
// hidden), then the same with the data version probe every 100 ms (the
// default) and every 50 ms, in one run. It
// reports each as a share of one core, from this process's CPU time over
// 10 s each, and how many polls the probe brought about while nothing
// changed (it should be none).
func BenchmarkSQLiteIdleWatch(b *testing.B) {
	s := openSQLite(b, Config{Create: true})
	defer s.Close()
	fill(b, s, 100_000)
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	const span = 10 * time.Second
	for i := 0; i < b.N; i++ {
		for _, every := range []time.Duration{0, 100 * time.Millisecond, 50 * time.Millisecond} {
			watched := every > 0
			var src sources.Source = struct{ sources.Source }{s} // no Watch
			if watched {
				s.cfg.ProbeEvery = every
				src = s
			}
			ctx, cancel := context.WithCancel(context.Background())
			h := hub.New(hub.Config{Feeds: []hub.Feed{{Source: src}}})
			done := make(chan struct{})
			go func() { h.Run(ctx); close(done) }()
			for snap := range h.Snapshots() {
				if len(snap.Sources) > 0 && snap.Sources[0].Polls > 0 && !snap.Sources[0].Loading && snap.Sources[0].Watching == watched {
					break
				}
			}
			var seen atomic.Uint64
			go func() {
				for {
					select { // a dashboard takes every snapshot
					case snap := <-h.Snapshots():
						seen.Store(snap.Sources[0].Polls)
					case <-ctx.Done():
						return
					}
				}
			}()
			time.Sleep(time.Second)
			polls0, c0, t0 := seen.Load(), cpu(), time.Now()
			time.Sleep(span)
			share := float64(cpu()-c0) / float64(time.Since(t0)) * 100
			polls := seen.Load() - polls0
			cancel()
			<-done
			name := "poll-only"
			if watched {
				name = fmt.Sprintf("probe-%dms", every.Milliseconds())
			}
			b.ReportMetric(share, name+"-%core")
			b.ReportMetric(float64(polls)/span.Seconds(), name+"-polls/s")
		}
	}
}
