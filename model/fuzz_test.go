package model

import (
	"strings"
	"testing"
)

// FuzzParseWords: the parsers of command-line and file values never panic,
// every refusal says what was wanted, and what they accept prints back to
// a word they read as the same value.
func FuzzParseWords(f *testing.F) {
	for _, s := range []string{"", "critical", "URGENT", "7", "-1", "99999999999999999999", "EXPEDITE", "fixed-date", "queued", "done", "stale", "escalated", " high ", "In Progress", "CANCELLED"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if p, err := ParsePriority(s); err == nil {
			if back, err := ParsePriority(PriorityName(p)); err != nil || back != p {
				t.Fatalf("priority %q → %d → %q → %d, %v", s, p, PriorityName(p), back, err)
			}
		} else if !strings.Contains(err.Error(), "want") {
			t.Fatalf("priority refusal does not say what is wanted: %v", err)
		}
		if c, err := ParseClass(s); err == nil {
			if back, _ := ParseClass(c.String()); back != c {
				t.Fatalf("class %q → %s → %s", s, c, back)
			}
		} else if !strings.Contains(err.Error(), "want") {
			t.Fatalf("class refusal does not say what is wanted: %v", err)
		}
		if st, err := ParseState(s); err == nil {
			if back, _ := ParseState(st.String()); back != st {
				t.Fatalf("state %q → %s → %s", s, st, back)
			}
		} else if !strings.Contains(err.Error(), "want") {
			t.Fatalf("state refusal does not say what is wanted: %v", err)
		}
		if st, err := ParseStatus(s); err == nil {
			if back, _ := ParseStatus(st.Contract()); back != st {
				t.Fatalf("status %q → %s → %s", s, st.Contract(), back)
			}
		} else if !strings.Contains(err.Error(), "want") {
			t.Fatalf("status refusal does not say what is wanted: %v", err)
		}
		if l, ok := ParseLevel(s); ok {
			if back, ok := ParseLevel(l.String()); !ok || back != l {
				t.Fatalf("level %q → %s → %s", s, l, back)
			}
		}
	})
}
