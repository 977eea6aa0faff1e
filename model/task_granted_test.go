package model

import (
	"testing"
	"time"
)

// TestGrantedIsTheClaimsOwnLease: from the last sign of life to the
// expiry, whatever the policy says; zero when either is unknown.
func TestGrantedIsTheClaimsOwnLease(t *testing.T) {
	at := time.Date(2026, 12, 6, 3, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		c    Claim
		want time.Duration
	}{
		{"a 2-minute lease at claim", Claim{ClaimedAt: StampOf(at), Expires: StampOf(at.Add(2 * time.Minute))}, 2 * time.Minute},
		{"renewed by a heartbeat", Claim{ClaimedAt: StampOf(at), HeartbeatAt: StampOf(at.Add(time.Hour)), Expires: StampOf(at.Add(time.Hour + 20*time.Minute))}, 20 * time.Minute},
		{"no expiry", Claim{ClaimedAt: StampOf(at)}, 0},
		{"no claim time", Claim{Expires: StampOf(at)}, 0},
		{"expiry before the claim", Claim{ClaimedAt: StampOf(at), Expires: StampOf(at.Add(-time.Minute))}, 0},
	}
	for _, c := range cases {
		if got := c.c.Granted(); got != c.want {
			t.Errorf("%s: Granted() = %v, want %v", c.name, got, c.want)
		}
	}
}
