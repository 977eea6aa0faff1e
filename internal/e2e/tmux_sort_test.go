package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The demo in tmux sorts the Queue by priority with shift+P, reverses it
// with P again, sorts by age through the ctrl-p palette, and goes back to
// pull order with s.
func TestTmuxColumnSortAndReversal(t *testing.T) {
	rank := map[string]int{"low": 1, "medium": 2, "high": 3, "critical": 4}
	// priorities reads the PRI column's words of the rows on screen, top down.
	priorities := func(s string) []int {
		var out []int
		for _, l := range strings.Split(s, "\n")[3:] {
			for _, w := range strings.Fields(l) {
				if r, ok := rank[w]; ok {
					out = append(out, r)
					break
				}
			}
		}
		return out
	}
	for _, sz := range [][2]int{{120, 40}, {80, 24}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			p := startTmux(t, sz[0], sz[1], "demo", "--seed", "1", "--speed", "600")
			// The first frame can come before the demo has seeded its queue.
			p.await("the Queue in pull order, seeded", func(s string) bool {
				return strings.Contains(s, "sort: pull order") && !strings.Contains(s, " 0 shown")
			})
			p.keys("P")
			s := p.await("the Queue by priority", func(s string) bool { return strings.Contains(s, "PRI↑") })
			if pr := priorities(s); len(pr) < 2 || !slices.IsSorted(pr) {
				t.Fatalf("P: priorities %v are not ascending:\n%s", pr, s)
			}
			p.keys("P")
			s = p.await("the sort reversed", func(s string) bool { return strings.Contains(s, "sort: pri descending") })
			if pr := priorities(s); len(pr) < 2 || !slices.IsSortedFunc(pr, func(a, b int) int { return b - a }) {
				t.Fatalf("P again: priorities %v are not descending:\n%s", pr, s)
			}
			p.keys("C-p", "s", "r", "t", "Enter", "a", "g", "e", "Space", "d", "e", "s", "c", "Enter")
			p.await("the Queue by age from the palette", func(s string) bool { return strings.Contains(s, "AGE↓") })
			p.keys("s")
			s = p.await("pull order again", func(s string) bool { return strings.Contains(s, "sort: pull order") })
			for i, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
				if n := len([]rune(l)); n > sz[0] || i >= sz[1] {
					t.Fatalf("line %d overflows the %dx%d terminal: %q", i, sz[0], sz[1], l)
				}
			}
			p.keys("q")
		})
	}
}
