package notion

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jomei/notionapi"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/notion/notionemu"
)

// seeded opens a source over an ntask database holding n queued tasks.
func seeded(b *testing.B, n int, cfg func(*Config)) (*emulator, *Source) {
	b.Helper()
	emu := newEmulator(b)
	c := emu.config(emu.database(b, notionemu.PresetNtask()), PresetNtask)
	if cfg != nil {
		cfg(&c)
	}
	seed := c
	seed.Rate = -1
	seeder := emu.open(b, seed)
	for i := range n {
		if _, err := seeder.Create(context.Background(), sources.NewTask{Title: fmt.Sprintf("task %04d", i), Priority: i % 5}); err != nil {
			b.Fatal(err)
		}
	}
	return emu, emu.open(b, c)
}

// BenchmarkFirstLoad1000 counts the requests of a first (full) load of a
// 1,000-task database at the emulator. Target: 10.
func BenchmarkFirstLoad1000(b *testing.B) {
	emu, src := seeded(b, 1000, nil)
	b.ResetTimer()
	for range b.N {
		emu.srv.ResetStats()
		d, err := src.Poll(context.Background(), "")
		if err != nil || len(d.Tasks) != 1000 {
			b.Fatalf("%v, %d tasks", err, len(d.Tasks))
		}
	}
	b.ReportMetric(float64(emu.srv.Stats().Requests), "requests/load")
}

// BenchmarkIdlePoll1000 counts the requests of an incremental poll of a
// 1,000-task database where nothing changed. Target: 1.
func BenchmarkIdlePoll1000(b *testing.B) {
	emu, src := seeded(b, 1000, nil)
	emu.advance(10 * time.Minute) // the seeding edits are older than the overlap window
	d, err := src.Poll(context.Background(), "")
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		emu.srv.ResetStats()
		idle, err := src.Poll(context.Background(), d.Cursor)
		if err != nil || len(idle.Tasks) != 0 {
			b.Fatalf("%v, %d tasks", err, len(idle.Tasks))
		}
	}
	b.ReportMetric(float64(emu.srv.Stats().Requests), "requests/poll")
}

// stamps records when each request reached the emulator.
type stamps struct {
	mu  sync.Mutex
	at  []time.Time
	inn http.Handler
}

func (s *stamps) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.at = append(s.at, time.Now())
	s.mu.Unlock()
	s.inn.ServeHTTP(w, r)
}

// busiest is the most requests inside any window.
func (s *stamps) busiest(window time.Duration) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	best, j := 0, 0
	for i := range s.at {
		for s.at[i].Sub(s.at[j]) >= window {
			j++
		}
		best = max(best, i-j+1)
	}
	return best
}

// BenchmarkRateTenAgentsAndDashboard runs 10 agents (claim-next, heartbeat,
// complete) and a dashboard polling every second against one token at the
// default 3 requests/s for 60 s, and reports what the emulator received:
// the busiest second, the busiest 10 s and the rate per minute. None may
// exceed the configured rate.
func BenchmarkRateTenAgentsAndDashboard(b *testing.B) {
	const rate, run = 3.0, 60 * time.Second
	srv := notionemu.New(notionemu.Options{}) // Notion's own 3/s limit: a 429 here would be a failure
	rec := &stamps{inn: srv}
	ts := httptest.NewServer(rec)
	defer ts.Close()
	emu := &emulator{srv: srv, url: ts.URL, token: fmt.Sprintf("secret_bench_%d", time.Now().UnixNano()), rt: http.DefaultTransport}
	srv.AddToken(emu.token)
	cfg := emu.config(emu.database(b, notionemu.PresetNtask()), PresetNtask)
	cfg.Rate, cfg.Settle, cfg.RetryMax = rate, 500*time.Millisecond, 0
	src := emu.open(b, cfg)
	for i := range 20 {
		if _, err := src.Create(context.Background(), sources.NewTask{Title: fmt.Sprintf("t%d", i)}); err != nil {
			b.Fatal(err)
		}
	}
	for range b.N {
		rec.mu.Lock()
		rec.at = nil
		rec.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), run)
		var wg sync.WaitGroup
		var cycles atomic.Int64
		for i := range 10 {
			wg.Add(1)
			go func(agent string) {
				defer wg.Done()
				for ctx.Err() == nil {
					t, err := src.ClaimNext(ctx, sources.ClaimRequest{Agent: agent})
					if err != nil || t == nil {
						continue
					}
					if _, err := src.Heartbeat(ctx, t.ID, t.Claim().Token, 0); err != nil {
						continue
					}
					if _, err := src.Finish(ctx, t.ID, t.Claim().Token, sources.Outcome{State: model.StateReview}); err == nil {
						cycles.Add(1)
					}
				}
			}(fmt.Sprintf("agent-%d", i))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var cur sources.Cursor
			for ctx.Err() == nil {
				if d, err := src.Poll(ctx, cur); err == nil {
					cur = d.Cursor
				}
				_ = sleep(ctx, time.Second)
			}
		}()
		wg.Wait()
		cancel()
		rec.mu.Lock()
		total := len(rec.at)
		rec.mu.Unlock()
		b.ReportMetric(float64(rec.busiest(time.Second)), "max-req/1s")
		b.ReportMetric(float64(rec.busiest(10*time.Second)), "max-req/10s")
		b.ReportMetric(float64(total)/run.Minutes(), "req/min")
		b.ReportMetric(rate*60, "limit-req/min")
		b.ReportMetric(float64(cycles.Load()), "cycles")
		if n := srv.Stats().ByStatus[http.StatusTooManyRequests]; n > 0 {
			b.Errorf("the emulator answered %d requests with 429", n)
		}
	}
}

// BenchmarkContendedClaims drains a 200-task queue with 64 agents (claim
// next, complete), each with a source of its own as separate processes
// would have, at several settle delays, with 5 ms added to every request;
// "shared" runs the 64 agents on one source, as one process would. It
// reports double claims per 100 tasks.
func BenchmarkContendedClaims(b *testing.B) {
	type mode struct {
		name   string
		settle time.Duration
		shared bool
		faults bool // a rate limit answering 429, 409 to writes 2 ms apart, one request in 30 failing with 504 after landing
	}
	modes := []mode{{"shared/settle=25ms", 25 * time.Millisecond, true, false}}
	for _, d := range []time.Duration{-1, 25 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond} {
		modes = append(modes, mode{fmt.Sprintf("separate/settle=%v", max(d, 0)), d, false, false})
	}
	modes = append(modes, mode{"separate/settle=25ms/429+504-after-write", 25 * time.Millisecond, false, true})
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			var doubles, tasks, elapsed float64
			var faulted [3]float64 // answers 429, 409 and 504
			for range b.N {
				emu, src := seeded(b, 200, func(c *Config) { c.Settle = m.settle })
				f := notionemu.Faults{Latency: 5 * time.Millisecond}
				if m.faults {
					f.Rate, f.Status, f.Apply = 1.0/30, http.StatusGatewayTimeout, true
					emu.srv.SetRateLimit(notionemu.RateLimit{PerSecond: 400, Burst: 40})
					emu.srv.SetConflictWindow(2 * time.Millisecond)
				}
				if err := emu.srv.SetFaults(f); err != nil {
					b.Fatal(err)
				}
				agents := make([]*Source, 64)
				for i := range agents {
					agents[i] = src
					if !m.shared {
						cfg := emu.config(string(src.db), PresetNtask)
						cfg.Settle = m.settle
						agents[i] = emu.open(b, cfg)
					}
				}
				claims := sync.Map{}
				var wg sync.WaitGroup
				start := time.Now()
				for i, src := range agents {
					wg.Add(1)
					go func(agent string) {
						defer wg.Done()
						for idle := 0; idle < 3; {
							t, err := src.ClaimNext(context.Background(), sources.ClaimRequest{Agent: agent})
							if err != nil {
								continue
							}
							if t == nil {
								idle++
								continue
							}
							n, _ := claims.LoadOrStore(t.ID, new(atomic.Int64))
							n.(*atomic.Int64).Add(1)
							_, _ = src.Finish(context.Background(), t.ID, t.Claim().Token, sources.Outcome{State: model.StateDone})
						}
					}(fmt.Sprintf("agent-%02d", i))
				}
				wg.Wait()
				elapsed += time.Since(start).Seconds()
				st := emu.srv.Stats().ByStatus
				faulted[0] += float64(st[http.StatusTooManyRequests])
				faulted[1] += float64(st[http.StatusConflict])
				faulted[2] += float64(st[http.StatusGatewayTimeout])
				claims.Range(func(_, v any) bool {
					tasks++
					doubles += float64(v.(*atomic.Int64).Load() - 1)
					return true
				})
			}
			b.ReportMetric(100*doubles/tasks, "double-claims/100tasks")
			b.ReportMetric(tasks/elapsed, "tasks/s")
			b.ReportMetric(faulted[0]/float64(b.N), "429s/op")
			b.ReportMetric(faulted[1]/float64(b.N), "409s/op")
			b.ReportMetric(faulted[2]/float64(b.N), "504s/op")
		})
	}
}

// BenchmarkFirstLoad1000Baseline is the same load through a bare notionapi
// client (only the host rewritten): the cost our transport and decoding
// add is the difference with BenchmarkFirstLoad1000.
func BenchmarkFirstLoad1000Baseline(b *testing.B) {
	emu, src := seeded(b, 1000, nil)
	u, _ := url.Parse(emu.url)
	client := notionapi.NewClient(notionapi.Token(emu.token), notionapi.WithRetry(1),
		notionapi.WithHTTPClient(&http.Client{Transport: redirect{base: u, next: emu.rt}}))
	b.ResetTimer()
	for range b.N {
		emu.srv.ResetStats()
		n := 0
		req := &notionapi.DatabaseQueryRequest{PageSize: 100}
		for {
			res, err := client.Database.Query(context.Background(), notionapi.DatabaseID(src.db), req)
			if err != nil {
				b.Fatal(err)
			}
			n += len(res.Results)
			if !res.HasMore {
				break
			}
			req.StartCursor = res.NextCursor
		}
		if n != 1000 {
			b.Fatalf("%d pages", n)
		}
	}
	b.ReportMetric(float64(emu.srv.Stats().Requests), "requests/load")
}

// redirect only sends requests to the emulator.
type redirect struct {
	base *url.URL
	next http.RoundTripper
}

func (r redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	out.URL.Scheme, out.URL.Host, out.Host = r.base.Scheme, r.base.Host, r.base.Host
	return r.next.RoundTrip(out)
}
