package tui

import (
	"strings"
	"testing"
)

// Help and the other dialogs stay inside the body: whatever the size, the
// screen keeps its height and the top bar (with the alarm) stays on top.
// A line as wide as the box used to wrap inside it, one row more than the
// body had, and at 39-40 rows the help pushed the alarm off screen.
func TestDialogsNeverPushTheTopBarOff(t *testing.T) {
	r := newRig(t)
	for _, w := range []int{60, 80, 100, 120, 132} {
		for h := 18; h <= 44; h++ {
			r.size(w, h)
			for _, open := range [][]string{{"?"}, {"7", "enter"}, {"1", "x"}, {"2", "r"}} {
				r.press(open...)
				lines := strings.Split(r.screen(), "\n")
				if len(lines) != h || !strings.Contains(strings.Join(lines[:2], "\n"), "N3 DOWN") {
					t.Fatalf("%dx%d after %v: %d lines, top %q", w, h, open, len(lines), lines[:2])
				}
				r.press("esc")
			}
		}
	}
}

// An empty board says how to add work, in every task view.
func TestAnEmptyBoardSaysHowToAddWork(t *testing.T) {
	r := newRig(t)
	for _, id := range []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13"} {
		r.prod.Remove(id)
	}
	r.staging.Remove("s1")
	r.staging.Remove("s2")
	r.archive.Remove("a1")
	r.poll()
	for _, v := range []string{"1", "2", "3", "6", "7"} {
		r.press(v)
		if s := r.screen(); !strings.Contains(s, `claimdeck create --title "what needs doing"`) {
			t.Fatalf("view %s on an empty board gives no next step:\n%s", v, s)
		}
	}
}
