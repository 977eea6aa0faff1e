package tui

import (
	"strings"
	"testing"
	"time"
)

func TestContainsFoldAgreesWithLowerAndContains(t *testing.T) {
	for _, s := range []string{"", "Rotate TLS", "tls", "xTlS", "Ünïcode TLS", "aaaab", "SERVICE service", "ab"} {
		for _, sub := range []string{"", "t", "tls", "s", "aab", "ünï", "ervice", "b", "abc"} {
			want := strings.Contains(strings.ToLower(s), sub)
			if got := containsFold(s, sub); got != want {
				t.Errorf("containsFold(%q, %q) = %v, want %v", s, sub, got, want)
			}
		}
	}
}

func TestNarrowingIsOnlyClaimedWhenItHolds(t *testing.T) {
	for _, c := range []struct {
		prev, next string
		want       bool
	}{{"tl", "tls", true}, {"agent:a", "agent:al node:n", true}, {"agent", "agent:", false}, {"tls", "tl", false}, {"", "x", true}} {
		if got := narrows(parseFilter(c.prev), parseFilter(c.next)); got != c.want {
			t.Errorf("narrows(%q → %q) = %v, want %v", c.prev, c.next, got, c.want)
		}
	}
}

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
