package model

import (
	"strings"
	"testing"
	"time"
)

func TestOrderCompare(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	old := (&Task{Source: "a", ID: "1", Priority: 1, CreatedAt: StampOf(t0)}).WithClaim(Claim{Expires: StampOf(t0.Add(time.Hour))})
	young := &Task{Source: "a", ID: "2", Priority: 3, CreatedAt: StampOf(t0.Add(time.Hour))}
	twin := &Task{Source: "b", ID: "0", Priority: 3, CreatedAt: StampOf(t0.Add(time.Hour))}
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

// FuzzSortKeyOrdersAsCompare: two text values order by their sort keys
// exactly as Compare orders them, folded (titles) or not, in any script and
// in invalid UTF-8.
func FuzzSortKeyOrdersAsCompare(f *testing.F) {
	for _, c := range [][2]string{{"Rotate", "rotate"}, {"\u212a", "k"}, {"\u212ax", "k"}, {"a\xff", "a\ufffd"}, {"İx", "i"}, {"ab", "abc"}, {"Z", "a"}, {"é", "E"}} {
		f.Add(c[0], c[1])
	}
	sign := func(n int) int { return min(max(n, -1), 1) }
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, fold := range []bool{true, false} {
			want := strings.Compare(a, b)
			if fold {
				want = compareFold(a, b)
			}
			got := strings.Compare(string(AppendSortKey(nil, a, fold)), string(AppendSortKey(nil, b, fold)))
			if sign(got) != sign(want) {
				t.Fatalf("fold=%v: %q against %q: keys order %d, Compare %d", fold, a, b, got, want)
			}
		}
	})
}
