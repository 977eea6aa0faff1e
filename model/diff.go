package model

import (
	"fmt"
	"time"
)

// Changes lists, in words, what differs between the task a human saw and
// the task as it is now: the answer to "why was my action refused?".
func Changes(seen, now *Task) []string {
	var out []string
	add := func(what, a, b string) {
		if a != b {
			out = append(out, fmt.Sprintf("%s %s → %s", what, orDash(a), orDash(b)))
		}
	}
	add("state", seen.State.String(), now.State.String())
	add("holder", holderLabel(seen.Claim()), holderLabel(now.Claim()))
	add("run", seen.Claim().RunID, now.Claim().RunID)
	if seen.Claim().Token != now.Claim().Token && seen.Claim().Holder == now.Claim().Holder && seen.Claim().Name == now.Claim().Name {
		out = append(out, "lock token changed (re-claimed)")
	}
	if !seen.Claim().Expires.Time().Equal(now.Claim().Expires.Time()) && seen.Claim().Token == now.Claim().Token {
		out = append(out, "renewed since you looked: the lease was extended by a heartbeat to "+now.Claim().Expires.Time().UTC().Format(time.RFC3339))
	}
	add("reserved for", seen.ReservedFor(), now.ReservedFor())
	if len(out) == 0 && seen.Version != now.Version {
		out = append(out, "the task was edited")
	}
	return out
}

func holderLabel(c Claim) string {
	if !c.Held() {
		return ""
	}
	if c.Name == "" {
		return c.Holder.String()
	}
	return c.Holder.String() + " " + c.Name
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
