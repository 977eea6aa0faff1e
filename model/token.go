package model

import "strings"

// tokenShownRunes is how much of a lock token a read shows: enough to tell
// two claims apart, not enough to write with.
const tokenShownRunes = 7

// ShownToken is a lock token as every read shows it (list, get, history,
// MCP reads, the dashboard): a prefix and an ellipsis. The full token is a
// capability; only the answers that hand it over (claim, takeover) and the
// holder's own writes carry it. A short token shows at most half of itself.
func ShownToken(token string) string {
	if token == "" {
		return ""
	}
	r := []rune(token)
	return string(r[:min(tokenShownRunes, len(r)/2)]) + "…"
}

// TokenSeen reports whether expect names this token: the full token, or the
// prefix a read showed (ShownToken), with or without its ellipsis. It is a
// check of what a person saw, not a credential: writes still need the
// full token.
func TokenSeen(token, expect string) bool {
	if token == "" || expect == "" {
		return token == expect
	}
	if expect == token {
		return true
	}
	shown := ShownToken(token)
	return expect == shown || expect == strings.TrimSuffix(shown, "…")
}

// WriterName is who a holder write is recorded as in a task's trail: the
// caller's own agent name, else its run, else "unnamed holder". It never
// falls back to the claim's holder: whoever has the token can write, and
// the trail must not say the holder did what another caller did.
func WriterName(agent, run string) string {
	agent, run = strings.TrimSpace(agent), strings.TrimSpace(run)
	switch {
	case agent != "" && run != "":
		return agent + " (run " + run + ")"
	case agent != "":
		return agent
	case run != "":
		return "run " + run
	}
	return "unnamed holder"
}
