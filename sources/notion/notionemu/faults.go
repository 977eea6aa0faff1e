package notionemu

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
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
	// Apply lets a failing write take effect first, as a gateway timeout
	// after Notion committed does.
	Apply bool
}

// SetFaults replaces the random faults and the latency; the zero Faults
// turns them off. Queued failures from FailNext stay queued.
func (s *Server) SetFaults(f Faults) error {
	if f.Rate < 0 || f.Rate > 1 {
		return fmt.Errorf("notionemu: fault rate %v is not a probability", f.Rate)
	}
	if _, ok := faultCodes[f.Status]; (!ok || f.Status < 500) && f.Rate > 0 {
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
	return s.Inject(n, Fault{Status: status})
}

// Fault is one injected failure.
type Fault struct {
	// Endpoint is the Endpoint… constant the fault waits for; empty means
	// the next request of any kind.
	Endpoint string
	// Status is 409, 429, 500, 502, 503, 504 or 529.
	Status int
	// Apply makes the request take effect before it answers Status: a
	// write that landed although its client was told it failed.
	Apply bool
	// RetryAfter is a 429's or 529's Retry-After (default 1 s). Notion
	// documents it as "an integer number of seconds" and sends more than 60
	// for its workspace-wide limit
	// (https://developers.notion.com/reference/request-limits).
	RetryAfter time.Duration
	// Reason is a 429's additional_data.rate_limit_reason: which limit was
	// exceeded (ReasonConnection, ReasonWorkspace; default the first).
	Reason string
}

// Inject queues n copies of f, before any random fault.
func (s *Server) Inject(n int, f Fault) error {
	if _, ok := faultCodes[f.Status]; !ok {
		return fmt.Errorf("notionemu: cannot inject status %d", f.Status)
	}
	if f.RetryAfter < 0 {
		return fmt.Errorf("notionemu: negative Retry-After %v", f.RetryAfter)
	}
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	for range n {
		s.faults.queue = append(s.faults.queue, f)
	}
	return nil
}

type faultInjector struct {
	mu     sync.Mutex
	random Faults
	queue  []Fault
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

// next returns the fault the current request to endpoint must answer
// with, if any: the first queued one waiting for it, else a random one.
func (f *faultInjector) next(endpoint string) *Fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, q := range f.queue {
		if q.Endpoint == "" || q.Endpoint == endpoint {
			f.queue = append(f.queue[:i:i], f.queue[i+1:]...)
			return &q
		}
	}
	if f.random.Rate > 0 && rand.Float64() < f.random.Rate {
		return &Fault{Status: f.random.Status, Apply: f.random.Apply && isWrite(endpoint)}
	}
	return nil
}

func isWrite(endpoint string) bool {
	return endpoint == EndpointPageCreate || endpoint == EndpointPageUpdate || endpoint == EndpointCommentCreate
}

func (f *Fault) apiError() *apiError {
	if f.Status == http.StatusConflict {
		// https://developers.notion.com/reference/status-codes
		return newAPIError(f.Status, "conflict_error",
			"Conflict occurred while saving. Please try again.")
	}
	if f.Status == http.StatusTooManyRequests {
		return rateLimited(cmp.Or(f.Reason, ReasonConnection))
	}
	return newAPIError(f.Status, faultCodes[f.Status], "notionemu: injected fault.")
}

// Stats counts the requests a Server has received since it started or
// since ResetStats.
type Stats struct {
	Requests int
	// ByEndpoint counts requests by Endpoint… constant.
	ByEndpoint map[string]int
	// ByStatus counts answered requests by HTTP status.
	ByStatus map[int]int
	// Bytes is the payload served: the bytes of every response body
	// written, errors included, headers not. BytesByEndpoint splits it by
	// Endpoint… constant.
	Bytes           int64
	BytesByEndpoint map[string]int64
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

func (r *statsRecorder) end(endpoint string, status int, bytes int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats.ByStatus[status]++
	r.stats.Bytes += bytes
	r.stats.BytesByEndpoint[endpoint] += bytes
}

func (r *statsRecorder) snapshot() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Stats{
		Requests:   r.stats.Requests,
		ByEndpoint: maps.Clone(r.stats.ByEndpoint),
		ByStatus:   maps.Clone(r.stats.ByStatus),

		Bytes:           r.stats.Bytes,
		BytesByEndpoint: maps.Clone(r.stats.BytesByEndpoint),
	}
}

func (r *statsRecorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats = Stats{ByEndpoint: map[string]int{}, ByStatus: map[int]int{}, BytesByEndpoint: map[string]int64{}}
}
