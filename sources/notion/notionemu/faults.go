package notionemu

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"time"
)

// Faults make the server misbehave like a loaded Notion: every request is
// delayed by Latency, and fails with Status with probability Rate.
type Faults struct {
	Latency time.Duration
	// Rate is the probability in [0, 1] that a request fails.
	Rate float64
	// Status is 500, 502, 503, 504 or 529 (StatusServiceOverload).
	Status int
}

// SetFaults replaces the random faults and the latency; the zero Faults
// turns them off. Queued failures from FailNext stay queued.
func (s *Server) SetFaults(f Faults) error {
	if f.Rate < 0 || f.Rate > 1 {
		return fmt.Errorf("notionemu: fault rate %v is not a probability", f.Rate)
	}
	if _, ok := faultCodes[f.Status]; !ok && f.Rate > 0 {
		return fmt.Errorf("notionemu: cannot inject status %d", f.Status)
	}
	if f.Latency < 0 {
		return fmt.Errorf("notionemu: negative latency %v", f.Latency)
	}
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.random = f
	return nil
}

// FailNext makes the next n requests that pass authentication and the rate
// limit fail with status, before any random fault.
func (s *Server) FailNext(n int, status int) error {
	if _, ok := faultCodes[status]; !ok {
		return fmt.Errorf("notionemu: cannot inject status %d", status)
	}
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	for range n {
		s.faults.queue = append(s.faults.queue, status)
	}
	return nil
}

type faultInjector struct {
	mu     sync.Mutex
	random Faults
	queue  []int
}

// delay waits out the configured latency; false means the client gave up.
func (f *faultInjector) delay(ctx context.Context) bool {
	f.mu.Lock()
	d := f.random.Latency
	f.mu.Unlock()
	if d == 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// next returns the failure the current request must answer with, if any.
func (f *faultInjector) next() *apiError {
	f.mu.Lock()
	defer f.mu.Unlock()
	status := 0
	switch {
	case len(f.queue) > 0:
		status, f.queue = f.queue[0], f.queue[1:]
	case f.random.Rate > 0 && rand.Float64() < f.random.Rate:
		status = f.random.Status
	default:
		return nil
	}
	return &apiError{status, faultCodes[status], "notionemu: injected fault."}
}

// Stats counts the requests a Server has received since it started or
// since ResetStats.
type Stats struct {
	Requests int
	// ByEndpoint counts requests by Endpoint… constant.
	ByEndpoint map[string]int
	// ByStatus counts answered requests by HTTP status.
	ByStatus map[int]int
}

// Stats returns a copy of the request counters.
func (s *Server) Stats() Stats {
	return s.stats.snapshot()
}

// ResetStats sets every request counter back to zero.
func (s *Server) ResetStats() {
	s.stats.reset()
}

type statsRecorder struct {
	mu    sync.Mutex
	stats Stats
}

func (r *statsRecorder) begin(endpoint string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats.Requests++
	r.stats.ByEndpoint[endpoint]++
}

func (r *statsRecorder) end(status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats.ByStatus[status]++
}

func (r *statsRecorder) snapshot() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Stats{
		Requests:   r.stats.Requests,
		ByEndpoint: maps.Clone(r.stats.ByEndpoint),
		ByStatus:   maps.Clone(r.stats.ByStatus),
	}
}

func (r *statsRecorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats = Stats{ByEndpoint: map[string]int{}, ByStatus: map[int]int{}}
}
