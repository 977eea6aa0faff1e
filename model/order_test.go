package model

import (
	"strings"
	"testing"
	"time"
)

func TestOrderCompare(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	old := &Task{Source: "a", ID: "1", Priority: 1, CreatedAt: t0, Claim: Claim{Expires: t0.Add(time.Hour)}}
	young := &Task{Source: "a", ID: "2", Priority: 3, CreatedAt: t0.Add(time.Hour)}
	twin := &Task{Source: "b", ID: "0", Priority: 3, CreatedAt: t0.Add(time.Hour)}
	cases := []struct {
		name  string
		order Order
		a, b  *Task
		want  int
	}{
		{"a lower priority comes first ascending", Order{Field: FieldPriority}, old, young, -1},
		{"an urgent task comes first descending", Order{Field: FieldPriority, Desc: true}, old, young, 1},
		{"the youngest task has the least age", Order{Field: FieldAge}, young, old, -1},
		{"a lease without expiry goes last", Order{Field: FieldLeft}, young, old, 1},
		{"equal fields fall back to source, then id", Order{Field: FieldPriority}, young, twin, -1},
		{"the tie-break stays ascending when descending", Order{Field: FieldPriority, Desc: true}, young, twin, -1},
		{"titles compare without case", Order{Field: FieldTitle}, &Task{Title: "alpha"}, &Task{Title: "Beta"}, -1},
		{"a title before its longer self", Order{Field: FieldTitle}, &Task{Title: "Rotate"}, &Task{Title: "rotate certs"}, -1},
	}
	for _, c := range cases {
		if got := c.order.Compare(c.a, c.b); got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, got, c.want)
		}
	}
}

func TestCompareFoldOrdersAsLowerCase(t *testing.T) {
	words := []string{"", "a", "A", "ab", "Ab", "b", "B", "Zeta", "zz", "é", "É", "éa", "Z", "_", "[", "ä1", "a\xff"}
	for _, a := range words {
		for _, b := range words {
			want := strings.Compare(strings.ToLower(a), strings.ToLower(b))
			if got := compareFold(a, b); got != want {
				t.Errorf("compareFold(%q, %q) = %d, want %d", a, b, got, want)
			}
		}
	}
}
