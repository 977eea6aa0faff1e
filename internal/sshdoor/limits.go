package sshdoor

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// attempts counts the keys each remote address offered in a sliding
// window; past the limit, its keys are refused unchecked and its new
// connections closed, until the window slides past.
type attempts struct {
	limit  int
	window time.Duration
	mu     sync.Mutex
	by     map[string][]time.Time
	told   map[string]time.Time // when an address was last said to be spent
}

// attemptsPrune is how many addresses are kept before the ones with no
// attempt in the window are dropped.
const attemptsPrune = 4096

func newAttempts(limit int, window time.Duration) *attempts {
	return &attempts{limit: limit, window: window, by: map[string][]time.Time{}, told: map[string]time.Time{}}
}

// try counts one attempt from host at now, and reports whether it is
// within the limit.
func (a *attempts) try(host string, now time.Time) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.by) >= attemptsPrune {
		for h, ts := range a.by {
			if len(a.recent(ts, now)) == 0 {
				delete(a.by, h)
				delete(a.told, h)
			}
		}
	}
	ts := a.recent(a.by[host], now)
	if len(ts) >= a.limit {
		a.by[host] = ts
		return false
	}
	a.by[host] = append(ts, now)
	return true
}

// spent reports whether host has no attempt left at now, and whether
// this is the first time it is said in a window.
func (a *attempts) spent(host string, now time.Time) (spent, first bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.recent(a.by[host], now)) < a.limit {
		return false, false
	}
	if told, ok := a.told[host]; ok && now.Sub(told) < a.window {
		return true, false
	}
	a.told[host] = now
	return true, true
}

// recent is ts without the attempts older than the window.
func (a *attempts) recent(ts []time.Time, now time.Time) []time.Time {
	i := 0
	for i < len(ts) && now.Sub(ts[i]) >= a.window {
		i++
	}
	return ts[i:]
}

// inputClock is a session's input, remembering when the person last
// typed (or clicked, or pasted).
type inputClock struct {
	r    io.Reader
	last atomic.Int64 // unix nanoseconds
}

func newInputClock(r io.Reader) *inputClock {
	c := &inputClock{r: r}
	c.last.Store(time.Now().UnixNano())
	return c
}

func (c *inputClock) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.last.Store(time.Now().UnixNano())
	}
	return n, err
}

// since is how long ago the last input came.
func (c *inputClock) since(now time.Time) time.Duration {
	return now.Sub(time.Unix(0, c.last.Load()))
}

// watchIdle calls idle once when in has had no input for timeout, unless
// ctx ends first.
func watchIdle(ctx context.Context, in *inputClock, timeout time.Duration, idle func()) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if quiet := in.since(now); quiet < timeout {
				t.Reset(timeout - quiet)
				continue
			}
			idle()
			return
		}
	}
}
