package model

import (
	"fmt"
	"strings"
	"time"
	"unicode"
)

// ViaHTTP ends the name every action of a remote MCP client is recorded
// under: NAME@mcp-http. Only the server adds it; no caller may name
// itself so.
const ViaHTTP = "@mcp-http"

// CheckName refuses a name that reads as something it is not: text that
// is not text (CheckText), control characters (a newline would forge a
// trail line) and invisible ones — zero-width spaces and joiners, the
// byte-order mark, bidirectional controls — which make two different names
// look the same on every screen.
func CheckName(field, s string) error {
	if err := CheckText(field, s); err != nil {
		return err
	}
	for i, r := range s {
		if invisible(r) {
			return fmt.Errorf("%s contains an invisible or control character (%U at byte %d): type the name in plain characters", field, r, i)
		}
	}
	return nil
}

// invisible is a character that shows as nothing, or moves what follows.
func invisible(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.In(r, unicode.Zl, unicode.Zp)
}

// CheckCallerName is CheckName for a name a caller gives itself (an
// agent's name, the configured actor, an MCP client's name, a hand-off's
// target): it may not look like another name (checkLookalikes: no
// compatibility forms, blank glyphs, trail separators or letters of
// another script drawn as Latin ones beside Latin letters), nor start with
// HumanPrefix, which is how a person's claim is recorded, nor end with
// ViaHTTP, which is how a remote client's actions are recorded — in any
// case and as it reads on screen (Skeleton).
func CheckCallerName(field, s string) error {
	if err := CheckName(field, s); err != nil {
		return err
	}
	if err := checkLookalikes(field, s); err != nil {
		return err
	}
	t := Skeleton(strings.TrimSpace(s))
	switch {
	case strings.HasPrefix(t, HumanPrefix):
		return fmt.Errorf("%s %q may not start with %s: that is how a person's claim is recorded (a person takes a task over instead)", field, s, HumanPrefix)
	case strings.HasSuffix(t, strings.ToUpper(ViaHTTP)):
		return fmt.Errorf("%s %q may not end with %s: that is how a remote MCP client's actions are recorded", field, s, ViaHTTP)
	}
	return nil
}

// PersonHeld is the one reading of who holds a claim a store recorded:
// the store's declared kind (HUMAN or AGENT) when it keeps one, else the
// HumanPrefix of the name. A prefixed name with an agent's marks — a run
// id, or a lease of at most MaxLease — is an agent that named itself
// HUMAN:… (binaries before CheckCallerName accepted it): it is read as the
// agent it is, its lease expires and the sweep sees it. A person's claim
// carries no run and no lease, or one a century long.
func PersonHeld(declared, name, run string, lease time.Duration) bool {
	switch strings.ToUpper(strings.TrimSpace(declared)) {
	case "HUMAN":
		return true
	case "AGENT":
		return false
	}
	if !strings.HasPrefix(name, HumanPrefix) {
		return false
	}
	return strings.TrimSpace(run) == "" && (lease <= 0 || lease > MaxLease)
}
