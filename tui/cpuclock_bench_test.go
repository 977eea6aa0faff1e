package tui

import (
	"syscall"
	"testing"
	"time"
)

// cpuClock counts the processor time of the whole process (user and
// system, every thread, the collector's included) while it runs. On a
// shared machine wall time says as much about the neighbours as about
// the code; processor time per op says less about them.
type cpuClock struct {
	b            *testing.B
	start, total time.Duration
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPU(b *testing.B) *cpuClock { return &cpuClock{b: b, start: cpuNow()} }

func (c *cpuClock) stop()   { c.total += cpuNow() - c.start }
func (c *cpuClock) resume() { c.start = cpuNow() }

// report stops the clock and reports its time per op.
func (c *cpuClock) report() {
	c.stop()
	c.b.ReportMetric(float64(c.total.Nanoseconds())/float64(c.b.N), "cpu-ns/op")
}
