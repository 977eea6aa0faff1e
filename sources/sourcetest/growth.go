package sourcetest

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"
)

// Timed runs call and returns its wall time, failing tb on an error: a
// growth benchmark's step, which times the call alone.
func Timed(tb testing.TB, what string, call func() error) time.Duration {
	start := time.Now()
	err := call()
	d := time.Since(start)
	if err != nil {
		tb.Fatalf("%s: %v", what, err)
	}
	return d
}

// SizeLabel names a queue size as growth metrics do: 1k, 100k, 1M.
func SizeLabel(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1_000 && n%1_000 == 0:
		return fmt.Sprintf("%dk", n/1_000)
	}
	return strconv.Itoa(n)
}

// ReportGrowth reports the median of each size's times (walls[k] were
// measured at sizes[k], smallest first) in per units named unit, and their
// growth: the largest size's median over the smallest's.
func ReportGrowth(b *testing.B, sizes []int, walls [][]time.Duration, prefix, unit string, per time.Duration) {
	med := make([]float64, len(sizes))
	for k, n := range sizes {
		ws := slices.Clone(walls[k])
		slices.Sort(ws)
		med[k] = float64(ws[len(ws)/2]) / float64(per)
		b.ReportMetric(med[k], prefix+SizeLabel(n)+"-"+unit)
	}
	last := len(sizes) - 1
	b.ReportMetric(med[last]/med[0], prefix+SizeLabel(sizes[last])+"/"+SizeLabel(sizes[0]))
}
