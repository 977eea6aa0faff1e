package tui

import (
	"strings"
	"testing"
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
