package sqlstore

import (
	"regexp"
	"strings"
	"testing"
)

// identPattern is the rule plainIdent implements by hand.
var identPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

func FuzzPlainIdent(f *testing.F) {
	for _, s := range []string{"", "tasks", "_t", "9t", "t9", "a-b", "é", "x y", strings.Repeat("a", 63), strings.Repeat("a", 64), "a\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := plainIdent(s), identPattern.MatchString(s); got != want {
			t.Fatalf("plainIdent(%q) = %v, the pattern says %v", s, got, want)
		}
	})
}
