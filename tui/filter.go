package tui

import (
	"strings"
	"unicode/utf8"

	"github.com/claimdeck/claimdeck/model"
)

// term is one word of a filter: a field prefix (agent:, state:, source:,
// node:) or free text, matched case-insensitively.
type term struct {
	field string // "" for free text
	value string // lower case
}

var filterFields = []string{"agent", "state", "source", "node"}

// parseFilter splits a filter into terms; every term must match.
func parseFilter(s string) []term {
	var out []term
	for _, w := range strings.Fields(strings.ToLower(s)) {
		t := term{value: w}
		if f, v, ok := strings.Cut(w, ":"); ok {
			for _, known := range filterFields {
				if f == known {
					t = term{field: f, value: v}
				}
			}
		}
		out = append(out, t)
	}
	return out
}

// narrows reports whether every task matching next also matches prev, so
// a keystroke that only adds to the filter can search the rows already
// shown instead of all of them.
func narrows(prev, next []term) bool {
	if len(next) < len(prev) {
		return false
	}
	for i, p := range prev {
		if next[i].field != p.field || !strings.HasPrefix(next[i].value, p.value) {
			return false
		}
	}
	return true
}

// matchRow matches a task view's row: free text against its search text,
// fields against the task.
func matchRow(r row, terms []term) bool {
	t := r.t
	for _, tm := range terms {
		var ok bool
		switch tm.field {
		case "agent":
			ok = containsFold(t.Claim.Name, tm.value) || containsFold(t.Reservation.For, tm.value)
		case "state":
			ok = strings.HasPrefix(t.State.String(), tm.value) || containsFold(t.RawStatus, tm.value)
		case "source":
			ok = containsFold(t.Source, tm.value)
		case "node":
			ok = containsFold(t.Claim.Node, tm.value)
		default:
			ok = strings.Contains(r.hay, tm.value)
		}
		if !ok {
			return false
		}
	}
	return true
}

func matchNode(n *model.Node, terms []term) bool {
	for _, tm := range terms {
		switch tm.field {
		case "", "node":
			if !containsFold(n.Name, tm.value) {
				return false
			}
		case "state":
			if !containsFold(n.Status.String(), tm.value) {
				return false
			}
		}
	}
	return true
}

func matchActivity(a *activity, terms []term) bool {
	for _, tm := range terms {
		var ok bool
		switch tm.field {
		case "source":
			ok = containsFold(a.Source, tm.value)
		case "agent":
			ok = containsFold(a.Actor, tm.value)
		default:
			ok = containsFold(a.Task, tm.value) || containsFold(a.What, tm.value)
		}
		if !ok {
			return false
		}
	}
	return true
}

// containsFold reports whether s contains sub (already lower case),
// ignoring case. A filter keystroke runs it over every task, so for ASCII
// text it neither allocates nor compares byte by byte: it jumps between
// occurrences of sub's first byte in either case.
func containsFold(s, sub string) bool {
	n := len(sub)
	if n == 0 {
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return strings.Contains(strings.ToLower(s), sub)
		}
	}
	first, other := sub[0], sub[0]
	if 'a' <= first && first <= 'z' {
		other = first - 'a' + 'A'
	}
	for i := 0; i+n <= len(s); {
		j := nextOf(s[i:len(s)-n+1], first, other)
		if j < 0 {
			return false
		}
		i += j
		if equalFoldASCII(s[i+1:i+n], sub[1:]) {
			return true
		}
		i++
	}
	return false
}

// nextOf is the index of the first a or b in s, or -1.
func nextOf(s string, a, b byte) int {
	i := strings.IndexByte(s, a)
	if a == b {
		return i
	}
	j := strings.IndexByte(s, b)
	switch {
	case i < 0:
		return j
	case j < 0 || i < j:
		return i
	}
	return j
}

func equalFoldASCII(s, lowerSub string) bool {
	for k := 0; k < len(lowerSub); k++ {
		c := s[k]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lowerSub[k] {
			return false
		}
	}
	return true
}

// hayCache keeps each task's search text (key, title and id in lower
// case) for as long as the task is unchanged. The hub hands out the same
// *model.Task until a task changes, so a snapshot costs a lookup per task
// and a build per changed one. New texts are written into one buffer that
// becomes one string, so a first load of 100k tasks allocates once, not
// twice per task, and a keystroke reads the texts of a sorted pane in
// memory order.
type hayCache struct {
	text map[*model.Task]string // made when a free-text filter first needs it
	live int                    // tasks in the snapshot, as prune last saw them
	buf  []byte                 // lower-case texts being built, reused
	ends []int32                // where each built text ends in buf
	miss []int32                // rows whose text is not cached
	// touched keeps fill's touching loop from being optimized away.
	touched byte
}

// fill gives every row its search text.
func (c *hayCache) fill(rows []row) {
	if c.text == nil {
		// Sized for as many texts as prune lets it hold: no growth between.
		c.text = make(map[*model.Task]string, 2*max(c.live, len(rows))+1024)
	}
	buf, ends, miss := c.buf[:0], c.ends[:0], c.miss[:0]
	for i := range rows {
		if s, ok := c.text[rows[i].t]; ok {
			rows[i].hay = s
			continue
		}
		miss = append(miss, int32(i))
	}
	// New tasks lie all over the heap. Building a text is long enough that
	// the processor waits for each task's cache misses in turn, so a short
	// loop first touches the strings of a block of tasks, letting their
	// misses overlap, and the texts are then built from the cache.
	var fields [hayBlock][3]string
	var touched byte
	for at := 0; at < len(miss); at += hayBlock {
		block := miss[at:min(at+hayBlock, len(miss))]
		for k, i := range block {
			t := rows[i].t
			fields[k] = [3]string{t.Key, t.Title, t.ID}
		}
		for k := range block {
			for _, f := range fields[k] {
				if len(f) > 0 {
					touched ^= f[0] ^ f[len(f)-1]
				}
			}
		}
		for k := range block {
			f := &fields[k]
			buf = appendLower(buf, f[0])
			buf = append(buf, 0) // no term matches across two fields
			buf = appendLower(buf, f[1])
			buf = append(buf, 0)
			buf = appendLower(buf, f[2])
			ends = append(ends, int32(len(buf)))
		}
	}
	c.touched = touched
	if len(miss) > 0 {
		all := string(buf)
		start := int32(0)
		for k, i := range miss {
			s := all[start:ends[k]]
			rows[i].hay = s
			c.text[rows[i].t] = s
			start = ends[k]
		}
	}
	c.buf, c.ends, c.miss = buf[:0], ends[:0], miss[:0]
	if cap(c.buf) > 1<<20 && len(miss) < 1024 {
		c.buf = nil // a first load's buffer is not kept for small polls
	}
}

// hayBlock is how many new tasks fill touches ahead of building their
// texts.
const hayBlock = 64

// appendLower appends s in lower case: copied, then folded in place for
// ASCII, through strings.ToLower otherwise.
func appendLower(buf []byte, s string) []byte {
	start := len(buf)
	buf = append(buf, s...)
	b := buf[start:]
	for i, c := range b {
		if c >= utf8.RuneSelf {
			return append(buf[:start], strings.ToLower(s)...)
		}
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return buf
}

// prune drops the texts of tasks that are gone once they outnumber the
// live ones, and copies the live ones into one fresh buffer: a text keeps
// its whole buffer alive, so without the copy a few long-lived tasks would
// pin every buffer ever built.
func (c *hayCache) prune(live []*model.Task) {
	c.live = len(live)
	if len(c.text) <= 2*len(live)+1024 {
		return
	}
	n := 0
	for _, t := range live {
		n += len(c.text[t])
	}
	var b strings.Builder
	b.Grow(n)
	for _, t := range live {
		b.WriteString(c.text[t])
	}
	all := b.String()
	fresh := make(map[*model.Task]string, 2*len(live)+1024) // no growth before the next prune
	start := 0
	for _, t := range live {
		s, ok := c.text[t]
		if !ok {
			continue
		}
		fresh[t] = all[start : start+len(s)]
		start += len(s)
	}
	c.text = fresh
}

// freeText reports whether any term searches the text rather than a field.
func freeText(terms []term) bool {
	for _, t := range terms {
		if t.field == "" {
			return true
		}
	}
	return false
}
