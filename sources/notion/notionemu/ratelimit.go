package notionemu

import (
	"math"
	"sync"
	"time"
)

// RateLimit is a per-token request budget: a token bucket that refills at
// PerSecond and holds at most Burst requests.
type RateLimit struct {
	// PerSecond is the sustained average rate; 0 or less disables limiting.
	PerSecond float64
	// Burst is how many requests a full bucket allows at once; at least 1.
	Burst int
	// Window, when set, replaces the bucket with fixed windows of this
	// length holding PerSecond×Window requests each: a 429's Retry-After is
	// then the time left in the window, up to a minute and more, as Notion
	// answers when an integration has spent its budget
	// (https://developers.notion.com/reference/request-limits: "respecting
	// the Retry-After response header value, which is set as an integer
	// number of seconds").
	Window time.Duration
}

// DefaultRateLimit is Notion's documented average of three requests per
// second per integration, with a modest burst.
var DefaultRateLimit = RateLimit{PerSecond: 3, Burst: 10}

// SetRateLimit replaces the rate limit and refills every token's bucket.
func (s *Server) SetRateLimit(limit RateLimit) {
	s.limiter.set(limit)
}

// SetWorkspaceLimit replaces the budget every token of the workspace
// shares; the zero RateLimit turns it off.
func (s *Server) SetWorkspaceLimit(limit RateLimit) {
	s.workspace.set(limit)
}

// workspaceKey is the one bucket of the workspace limiter: the emulator
// is one workspace.
const workspaceKey = "workspace"

type bucket struct {
	tokens float64
	at     time.Time // last refill; with a Window, when the window opened
}

type limiter struct {
	mu      sync.Mutex
	limit   RateLimit
	buckets map[string]*bucket
}

func newLimiter(limit RateLimit) *limiter {
	l := &limiter{}
	l.set(limit)
	return l
}

func (l *limiter) set(limit RateLimit) {
	l.mu.Lock()
	defer l.mu.Unlock()
	limit.Burst = max(limit.Burst, 1)
	l.limit = limit
	l.buckets = map[string]*bucket{}
}

// allow spends one request from token's bucket. When the bucket is empty it
// returns how long until a request would be allowed, in whole seconds as
// the Retry-After header carries it, never less than one.
func (l *limiter) allow(token string, now time.Time) (retryAfter time.Duration, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.limit.PerSecond <= 0 {
		return 0, true
	}
	if l.limit.Window > 0 {
		return l.windowed(token, now)
	}
	burst := float64(l.limit.Burst)
	b, found := l.buckets[token]
	if !found {
		b = &bucket{tokens: burst, at: now}
		l.buckets[token] = b
	}
	if elapsed := now.Sub(b.at).Seconds(); elapsed > 0 {
		b.tokens = math.Min(burst, b.tokens+elapsed*l.limit.PerSecond)
		b.at = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return 0, true
	}
	seconds := math.Max(1, math.Ceil((1-b.tokens)/l.limit.PerSecond))
	return time.Duration(seconds) * time.Second, false
}

// windowed counts requests in fixed windows; the caller holds l.mu.
func (l *limiter) windowed(token string, now time.Time) (time.Duration, bool) {
	b, found := l.buckets[token]
	if !found || now.Sub(b.at) >= l.limit.Window {
		b = &bucket{tokens: math.Max(1, math.Floor(l.limit.PerSecond*l.limit.Window.Seconds())), at: now}
		l.buckets[token] = b
	}
	if b.tokens >= 1 {
		b.tokens--
		return 0, true
	}
	left := b.at.Add(l.limit.Window).Sub(now)
	return max(time.Second, left.Round(time.Second)), false
}
