package sourcetest

import (
	"sync"
	"time"
)

// clock is the time a clocked source reads, moved by the kit by hand: a
// lease or a reservation runs out the moment the kit says so.
type clock struct {
	mu sync.Mutex
	at time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = c.at.Add(d)
}

// now is the time the source under test reads.
func (k *kit) now() time.Time {
	if k.clock != nil {
		return k.clock.Now()
	}
	return time.Now()
}

// wait lets d pass for the source: at once on a clocked source, by sleeping
// on one that reads the real clock.
func (k *kit) wait(d time.Duration) {
	if k.clock != nil {
		k.clock.advance(d)
		return
	}
	time.Sleep(d)
}
