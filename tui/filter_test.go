package tui

import (
	"testing"
	"time"
)

func TestSparkline(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	cases := []struct {
		lat   []time.Duration
		width int
		want  string
	}{
		{nil, 12, ""},
		{ms(1, 2, 3), 12, "▁▁▁"}, // jitter on a fast node stays flat
		{ms(0, 25, 50), 12, "▁▄█"},
		{ms(100, 200, 400), 12, "▂▄█"},
		{ms(900, 0, 25, 50), 3, "▁▄█"}, // only the last width pings count
	}
	for _, c := range cases {
		if got := sparkline(c.lat, c.width); got != c.want {
			t.Errorf("sparkline(%v, %d) = %q, want %q", c.lat, c.width, got, c.want)
		}
	}
}
