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

// unnamedWriter is WriterName's answer for a caller that gave no name.
var unnamedWriter = WriterName("", "")

// TokenWriter is who a holder write is recorded as, given the claim's
// holder: the writer's own name (WriterName), or — when it gave none, or
// none was passed — the holder the token belongs to, said so: the token
// names the claim, so the trail never says "unnamed holder" of a claim it
// can name.
func TokenWriter(writer, holder string) string {
	text, afterHolder := TokenWriterParts(writer)
	holder = strings.TrimSpace(holder)
	switch {
	case holder == "" && text == "":
		return ""
	case holder == "":
		return strings.TrimSpace(writer)
	case afterHolder:
		return holder + text
	case text == "":
		return holder
	}
	return text
}

// TokenWriterParts is TokenWriter for a store that knows the holder only
// inside its own write (SQL): the text to record, and whether it follows
// the holder's name (text "" and false: the holder alone).
func TokenWriterParts(writer string) (text string, afterHolder bool) {
	writer = strings.TrimSpace(writer)
	const tail = " (by its token; the caller gave no name)"
	switch {
	case writer == unnamedWriter:
		return tail, true
	case strings.HasPrefix(writer, unnamedWriter+" via "):
		return tail + strings.TrimPrefix(writer, unnamedWriter), true
	}
	return writer, false
}
