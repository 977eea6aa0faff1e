package model

import (
	"strings"

	"golang.org/x/text/unicode/norm"
	"testing"
	"time"
)

func TestCallerNames(t *testing.T) {
	for _, ok := range []string{"SANDMAN", "claude-chat-7K9X", "Åsa", "oncall", "human-factors", "x@mcp-https", "", "Алиса", "Ελένη", "Işık", "小明"} {
		if err := CheckCallerName("the agent name", ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for bad, want := range map[string]string{
		"HUMAN:alice": "HUMAN:", "human:alice": "HUMAN:", " HUMAN:alice": "HUMAN:",
		"oncall@mcp-http": "@mcp-http", "oncall@MCP-HTTP": "@mcp-http",
		"SAND\u200bMAN": "U+200B", "\ufeffSANDMAN": "U+FEFF", "SAND\u202eNAM": "U+202E", "a\u2066b": "U+2066",
		"a\nb": "U+000A", "a\u2028b": "U+2028", "a\u200db": "U+200D", "a\u00adb": "U+00AD",
		"caf\xe9": "UTF-8",
		// Look-alikes of the reserved words, and names that draw as nothing.
		"HU\u041cAN:alice": "U+041C CYRILLIC CAPITAL LETTER EM", "\uff28\uff35\uff2d\uff21\uff2e:alice": "U+FF28 FULLWIDTH LATIN CAPITAL LETTER H",
		"HUMAN\uff1aalice": "U+FF1A FULLWIDTH COLON", "alice@mcp\u2010http": "U+2010 HYPHEN", "\u2800": "U+2800 BRAILLE PATTERN BLANK",
		"\u3164": "U+3164 HANGUL FILLER", "a\u3000b": "U+3000 IDEOGRAPHIC SPACE", "a\ufe0fb": "U+FE0F VARIATION SELECTOR-16",
		"claimdeck \u00b7 review \u00b7 by carol \u00b7 ": "U+00B7 MIDDLE DOT", "w1 via oncall": `"via"`, "w1 (run r-1)": `"(run"`,
		"\u0397\u03a5\u039c\u0391\u039d:x": "U+0397 GREEK CAPITAL LETTER ETA",
		"e\u0301clair":                     "NFKC",
	} {
		err := CheckCallerName("the agent name", bad)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want a refusal naming %s", bad, err, want)
		}
	}
	// The server's own label passes CheckName: it is how the trail names a client.
	if err := CheckName("the actor", "oncall"+ViaHTTP); err != nil {
		t.Fatal(err)
	}
}

func TestPersonHeld(t *testing.T) {
	for _, c := range []struct {
		declared, name, run string
		lease               time.Duration
		want                bool
	}{
		{"HUMAN", "alice", "", 0, true},
		{"AGENT", "HUMAN:alice", "", 0, false},
		{"", "HUMAN:alice", "", 0, true},
		{"", "HUMAN:alice", "", 100 * 365 * 24 * time.Hour, true},
		{"", "HUMAN:alice", "run-1", 0, false},
		{"", "HUMAN:alice", "", 20 * time.Minute, false},
		{"", "SANDMAN", "", 0, false},
	} {
		if got := PersonHeld(c.declared, c.name, c.run, c.lease); got != c.want {
			t.Errorf("PersonHeld(%q, %q, %q, %s) = %v, want %v", c.declared, c.name, c.run, c.lease, got, c.want)
		}
	}
}

func FuzzCheckCallerName(f *testing.F) {
	for _, s := range []string{"SANDMAN", "HUMAN:x", "a@mcp-http", "\u200b", "\xff", "HU\u041cAN:x", "a@mcp\u2010http", "\u2800", "Алиса"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if CheckCallerName("n", s) != nil {
			return
		}
		for _, r := range s {
			if invisible(r) {
				t.Fatalf("%q passed with %U", s, r)
			}
		}
		if strings.HasPrefix(strings.ToUpper(strings.TrimSpace(s)), HumanPrefix) {
			t.Fatalf("%q passed", s)
		}
		// What passes reads as itself: no compatibility form, no blank, no
		// separator, and no look-alike of the reserved words.
		if norm.NFKC.String(s) != s {
			t.Fatalf("%q passed but is not NFKC", s)
		}
		for _, r := range s {
			if Blank(r) || trailSeparators[r] {
				t.Fatalf("%q passed with %s", s, RuneName(r))
			}
		}
		sk := Skeleton(strings.TrimSpace(s))
		if strings.HasPrefix(sk, HumanPrefix) || strings.HasSuffix(sk, strings.ToUpper(ViaHTTP)) {
			t.Fatalf("%q passed but reads as %q", s, sk)
		}
	})
}
