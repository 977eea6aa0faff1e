package tui

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// pace turns durations measured on the wall clock into the time of a
// simulation running faster (the demo), so its columns read in task time:
// a 20 minute lease counts down from 20:00, not from 0:20.
type pace float64

func (p pace) scale(d time.Duration) time.Duration {
	if p <= 1 {
		return d
	}
	return time.Duration(float64(d) * float64(p))
}

func (p pace) ago(t, now time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return span(p.scale(now.Sub(t)))
}

func (p pace) span(d time.Duration) string { return span(p.scale(d)) }

// sped says the tasks' time runs faster than the wall clock: then only
// spans are shown, never a wall-clock time beside a task-time one.
func (p pace) sped() bool { return p > 1 }

// at is when something happened or will, as a time of day on the wall
// clock, or in a sped-up simulation as a span in task time.
func (p pace) at(t, now time.Time, loc *time.Location, layout string) string {
	switch {
	case !p.sped():
		return t.In(loc).Format(layout)
	case t.After(now):
		return "in " + p.span(t.Sub(now))
	}
	return p.ago(t, now) + " ago"
}
func (p pace) clock(d time.Duration) string { return clock(p.scale(d)) }

// ago is a compact age: 42s, 5m, 3h, 2d. Zero times print as a dash.
func ago(t, now time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return span(now.Sub(t))
}

// span is a compact duration; negative spans print with a minus.
func span(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	switch {
	case d < time.Minute:
		return sign + strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		return sign + strconv.Itoa(int(d/time.Minute)) + "m"
	case d < 48*time.Hour:
		return sign + strconv.Itoa(int(d/time.Hour)) + "h"
	}
	return sign + strconv.Itoa(int(d/(24*time.Hour))) + "d"
}

// clock is a countdown: 12:05, 1:02:03, or -0:42 once past.
func clock(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	s := int(d / time.Second)
	if s >= 3600 {
		return sign + strconv.Itoa(s/3600) + ":" + two(s/60%60) + ":" + two(s%60)
	}
	return sign + strconv.Itoa(s/60) + ":" + two(s%60)
}

func two(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// cells is the width of s on screen, as x/ansi measures it. Since
// v0.11.9 (the version Bubble Tea v2 needs) x/ansi segments every
// character into graphemes, ASCII included: three times the cost of a
// frame of the 100k Queue. Printable ASCII is one cell a byte here; only
// the runs of other characters go to x/ansi, each with the ASCII letter
// on either side of it: a combining mark joins the letter before it, a
// prepended mark the one after. Two ASCII letters never share a grapheme.
// Escape sequences, control characters and broken UTF-8 send the whole
// string to x/ansi.
func cells(s string) int {
	ascii := true
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < ' ' || c == 0x7f:
			return ansi.StringWidth(s)
		case c >= 0x80:
			ascii = false
		}
	}
	if ascii {
		return len(s)
	}
	if !utf8.ValidString(s) {
		return ansi.StringWidth(s)
	}
	w, counted := 0, 0 // counted: the bytes of s measured so far
	for i := 0; i < len(s); i++ {
		if s[i] < 0x80 {
			continue
		}
		// The run of other characters, through single ASCII letters
		// between them, and the letter after it.
		j := i
		for j < len(s) && (s[j] >= 0x80 || j+1 < len(s) && s[j+1] >= 0x80) {
			j++
		}
		end := min(j+1, len(s))
		from := max(i-1, counted)
		w += from - counted + ansi.StringWidth(s[from:end])
		counted, i = end, end-1
	}
	return w + len(s) - counted
}

// fit truncates s to width cells (with an ellipsis) and pads it to exactly
// width, measuring cells, never bytes.
func fit(s string, width int) string {
	if width <= 0 {
		return ""
	}
	w := cells(s)
	if w > width {
		s = ansi.Truncate(s, width, "…")
		w = cells(s)
	}
	return s + strings.Repeat(" ", width-w)
}

// fitMiddle is fit for a name: cut in the middle, so that both its start
// and its end (a file's number, its suffix) stay.
func fitMiddle(s string, width int) string {
	w := cells(s)
	if w <= width || width < 5 {
		return fit(s, width)
	}
	tail := (width - 1) / 2
	return ansi.Truncate(s, width-1-tail, "") + "…" + ansi.TruncateLeft(s, w-tail, "")
}

// fitRight is fit aligned right, for numbers.
func fitRight(s string, width int) string {
	if width <= 0 {
		return ""
	}
	w := cells(s)
	if w > width {
		return ansi.Truncate(s, width, "…")
	}
	return strings.Repeat(" ", width-w) + s
}

// orDash shows empty values as a dash.
func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
