package model

import (
	"strings"
	"testing"
	"time"
)

func TestCallerNames(t *testing.T) {
	for _, ok := range []string{"SANDMAN", "claude-chat-7K9X", "Åsa", "oncall", "human-factors", "x@mcp-https", ""} {
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
	for _, s := range []string{"SANDMAN", "HUMAN:x", "a@mcp-http", "\u200b", "\xff"} {
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
	})
}
