package lincheck_test

import (
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/sources/sourcetest/lincheck"
)

// Where only a claim of a named task rescues (Notion: claim --task takes a
// dead holder's claim, next leaves it out), a claim --task past the lease
// and the grace is legal, the same claim by claim-next is not, and neither
// is legal where nothing rescues.
func TestRescueByIDOnly(t *testing.T) {
	at := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return at.Add(time.Duration(n) * time.Millisecond) }
	history := func(kind lincheck.Kind) []lincheck.Op {
		claimed := func(token string, call, ret int) lincheck.Seen {
			return lincheck.Seen{Task: "x", State: "claimed", Holder: "AGENT", Token: token, Expires: ms(call).Add(lease).Truncate(time.Second)}
		}
		return []lincheck.Op{
			{Client: 1, Kind: lincheck.Create, Task: "x", Call: ms(0), Return: ms(1), Result: lincheck.OK},
			{Client: 1, Kind: lincheck.Claim, Task: "x", Agent: "A", Lease: lease, Call: ms(2), Return: ms(3), Result: lincheck.OK, Seen: []lincheck.Seen{claimed("t1", 2, 3)}},
			// past the lease (3 s) and the grace (2 s)
			{Client: 2, Kind: kind, Task: "x", Agent: "B", Lease: lease, Call: ms(6000), Return: ms(6001), Result: lincheck.OK, Seen: []lincheck.Seen{claimed("t2", 6000, 6001)}},
		}
	}
	byID := lincheck.Rules{Grace: grace, RescueByID: true, Lease: lease, Resolution: time.Second, Timeout: time.Minute}
	none := byID
	none.RescueByID = false
	for _, c := range []struct {
		name  string
		kind  lincheck.Kind
		rules lincheck.Rules
		legal bool
	}{
		{"claim --task where a named claim rescues", lincheck.Claim, byID, true},
		{"claim-next where only a named claim rescues", lincheck.ClaimNext, byID, false},
		{"claim --task where nothing rescues", lincheck.Claim, none, false},
	} {
		if rep := lincheck.Check(history(c.kind), c.rules); rep.Linearizable() != c.legal {
			t.Errorf("%s: %s, want linearizable %v", c.name, rep, c.legal)
		}
	}
}
