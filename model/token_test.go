package model

import (
	"strings"
	"testing"
)

func TestAReadShowsATokenPrefixNotEnoughToWriteWith(t *testing.T) {
	for _, c := range []struct{ token, shown string }{
		{"", ""},
		{"3669b0a9-7c1d-4f29-9149-c92b531e5c8e", "3669b0a…"},
		{"tok-r-17", "tok-…"},
		{"ab", "a…"},
		{"x", "…"},
		{"ééééééééééééééééé", "ééééééé…"},
	} {
		got := ShownToken(c.token)
		if got != c.shown {
			t.Errorf("ShownToken(%q) = %q, want %q", c.token, got, c.shown)
		}
		if c.token != "" && (got == c.token || !strings.HasSuffix(got, "…")) {
			t.Errorf("ShownToken(%q) = %q shows the whole token", c.token, got)
		}
		if !TokenSeen(c.token, got) || !TokenSeen(c.token, c.token) {
			t.Errorf("TokenSeen(%q) refuses the full token or the prefix %q", c.token, got)
		}
	}
	if TokenSeen("3669b0a9-7c1d-4f29-9149-c92b531e5c8e", "3669b0a9-7c1d-4f29-9149-c92b531e5c8f") || TokenSeen("3669b0a9-7c1d", "") || TokenSeen("", "3669") {
		t.Error("TokenSeen accepts another token")
	}
}

func TestAHolderWriteIsRecordedAsItsCaller(t *testing.T) {
	for _, c := range []struct{ agent, run, want string }{
		{"AGENT_B", "runB", "AGENT_B (run runB)"},
		{"AGENT_B", "", "AGENT_B"},
		{" ", "runB", "run runB"},
		{"", "", "unnamed holder"},
	} {
		if got := WriterName(c.agent, c.run); got != c.want {
			t.Errorf("WriterName(%q, %q) = %q, want %q", c.agent, c.run, got, c.want)
		}
	}
}
