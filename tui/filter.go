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
// and a build per changed one.
type hayCache map[*model.Task]string

func (c hayCache) get(t *model.Task) string {
	if s, ok := c[t]; ok {
		return s
	}
	s := strings.ToLower(t.Key + "\x00" + t.Title + "\x00" + t.ID) // no term spans two fields
	c[t] = s
	return s
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
