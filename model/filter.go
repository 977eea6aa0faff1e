package model

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Filter is a parsed filter expression: words that must all match. A word
// is free text, a field prefix (agent:, state:, source:, node:), or a
// comparison (level>=urgent, age>30m, stuck>1h, prio>=high); a leading !
// negates it. The dashboard's / and the CLI's --filter read the same
// language through ParseFilter, so a runbook's filter selects what the
// operator sees.
type Filter struct {
	Terms []Term
}

// Term is one word of a filter.
type Term struct {
	Field string // "" for free text, else one of FilterFields
	Op    string // ":" for a text field; "=", ">", ">=", "<", "<=" for a comparison
	Value string // lower case, as typed after the field and operator
	Not   bool
	num   int64 // a comparison's level, priority or nanoseconds
	field int   // 1 + the index of Field in FilterFields; 0 for free text
}

// FilterFields are the field names a filter knows, text fields first.
var FilterFields = []string{"agent", "state", "source", "node", "level", "age", "stuck", "prio"}

// ParseFilter reads a filter expression. An error names the word to fix
// and what it may be instead.
func ParseFilter(s string) (Filter, error) {
	var f Filter
	for _, w := range strings.Fields(strings.ToLower(s)) {
		if i := strings.IndexFunc(w, unicode.IsControl); i >= 0 {
			return Filter{}, fmt.Errorf("filter: %q holds the control character %U; type the words without it", w, []rune(w[i:])[0])
		}
		t, err := parseTerm(w)
		if err != nil {
			return Filter{}, err
		}
		f.Terms = append(f.Terms, t)
	}
	return f, nil
}

func parseTerm(w string) (Term, error) {
	word := w
	var t Term
	if strings.HasPrefix(w, "!") {
		t.Not, w = true, w[1:]
		if w == "" {
			return Term{}, errors.New(`filter: "!" needs a word after it, e.g. !agent:bot`)
		}
	}
	name, op, value := splitTerm(w)
	if op == "" {
		t.Value = w
		return t, nil
	}
	field := -1
	for i, f := range FilterFields {
		if f == name {
			field = i
		}
	}
	if field < 0 {
		if !isWord(name) {
			t.Value = w // text such as a time of day or an arrow, not a field
			return t, nil
		}
		return Term{}, fmt.Errorf("filter: %q: unknown field %q (want one of %s)", word, name, strings.Join(FilterFields, ", "))
	}
	t.Field, t.Op, t.Value, t.field = name, op, value, field+1
	if field+1 <= fieldNode {
		if op != ":" {
			return Term{}, fmt.Errorf("filter: %q: %s is text, compare it with %s:", word, name, name)
		}
		return t, nil
	}
	if op == ":" {
		t.Op = "="
	}
	var err error
	switch name {
	case "level":
		l, ok := ParseLevel(value)
		if !ok || value == "" {
			err = fmt.Errorf("unknown level %q (want stale, urgent, notify or escalated)", value)
		}
		t.num = int64(l)
	case "prio":
		var p int
		if value == "" {
			err = errors.New("no priority (want a number or critical, high, medium, low)")
		} else {
			p, err = ParsePriority(value)
		}
		t.num = int64(p)
	default:
		var d time.Duration
		d, err = parseAge(value)
		t.num = int64(d)
	}
	if err != nil {
		return Term{}, fmt.Errorf("filter: %q: %w", word, err)
	}
	return t, nil
}

// splitTerm cuts field, operator and value at the first ':', '<', '>' or
// '='; op is "" when the word has none.
func splitTerm(w string) (name, op, value string) {
	i := strings.IndexAny(w, ":<>=")
	if i < 0 {
		return w, "", ""
	}
	name, rest := w[:i], w[i:]
	for _, o := range []string{">=", "<=", ":", ">", "<", "="} {
		if strings.HasPrefix(rest, o) {
			return name, o, rest[len(o):]
		}
	}
	return name, rest[:1], rest[1:]
}

func isWord(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}

// parseAge reads a Go duration (90s, 30m, 1h30m) or whole days (2d).
func parseAge(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		if d, err := strconv.Atoi(n); err == nil && d >= 0 && d < 1e5 {
			return time.Duration(d) * 24 * time.Hour, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("unknown duration %q (want e.g. 90s, 30m, 2h or 1d)", s)
	}
	return d, nil
}

// NeedsText reports whether a term searches a task's text (key, title, id).
func (f Filter) NeedsText() bool {
	for _, t := range f.Terms {
		if t.Field == "" {
			return true
		}
	}
	return false
}

// NeedsStanding reports whether a term reads the task's Classification.
func (f Filter) NeedsStanding() bool {
	for _, t := range f.Terms {
		switch t.Field {
		case "level", "stuck", "node":
			return true
		}
	}
	return false
}

// Narrows reports whether every task matching f also matches prev, so a
// keystroke that only adds to a filter can search the rows already shown.
func (f Filter) Narrows(prev Filter) bool {
	if len(f.Terms) < len(prev.Terms) {
		return false
	}
	for i, p := range prev.Terms {
		n := f.Terms[i]
		if n == p {
			continue
		}
		// A longer text narrows a text term, and widens a negated one.
		if n.Field != p.Field || n.Op != p.Op || n.Not || p.Not || (n.Field != "" && n.Op != ":") || !strings.HasPrefix(n.Value, p.Value) {
			return false
		}
	}
	return true
}

// Match reports whether a task passes every term. c is the task's standing
// (Classify), read only when NeedsStanding.
func (f Filter) Match(t *Task, c *Classification, now time.Time) bool {
	for i := range f.Terms {
		if f.Terms[i].match(t, c, now) == f.Terms[i].Not {
			return false
		}
	}
	return true
}

// The fields as Term.field numbers them, in FilterFields' order.
const (
	fieldText = iota
	fieldAgent
	fieldState
	fieldSource
	fieldNode
	fieldLevel
	fieldAge
	fieldStuck
	fieldPrio
)

// match switches on a number, not Field: it runs once per task and term
// on every keystroke.
// Select is the tasks that pass the filter at now; standing classifies a
// task, called only when the filter reads a task's standing.
func (f Filter) Select(tasks []*Task, standing func(*Task) Classification, now time.Time) []*Task {
	need := f.NeedsStanding()
	var out []*Task
	for _, t := range tasks {
		var c Classification
		if need {
			c = standing(t)
		}
		if f.Match(t, &c, now) {
			out = append(out, t)
		}
	}
	return out
}

func (tm *Term) match(t *Task, c *Classification, now time.Time) bool {
	switch tm.field {
	case fieldText:
		return MatchesText(t, tm.Value)
	case fieldAgent:
		return ContainsFold(t.claimRef().Name, tm.Value) || ContainsFold(t.ReservedFor(), tm.Value)
	case fieldState:
		return strings.HasPrefix(t.State.String(), tm.Value) || ContainsFold(t.RawStatus, tm.Value)
	case fieldSource:
		return ContainsFold(t.Source, tm.Value)
	case fieldNode:
		return ContainsFold(t.claimRef().Node, tm.Value) || (c.Placement.Node != "" && ContainsFold(c.Placement.Node, tm.Value))
	case fieldLevel:
		return compare(int64(c.Level), tm.Op, tm.num)
	case fieldPrio:
		return compare(int64(t.Priority), tm.Op, tm.num)
	case fieldStuck:
		return compare(int64(c.Stuck), tm.Op, tm.num)
	default: // fieldAge
		if t.CreatedAt.IsZero() {
			return false
		}
		return compare(int64(now.Sub(t.CreatedAt.Time())), tm.Op, tm.num)
	}
}

func compare(a int64, op string, b int64) bool {
	switch op {
	case ">":
		return a > b
	case ">=":
		return a >= b
	case "<":
		return a < b
	case "<=":
		return a <= b
	}
	return a == b
}

// MatchesText reports whether a free word (lower case) is in the task's key,
// title or id, in any case. Each field is searched on its own, so no word
// matches across two.
func MatchesText(t *Task, word string) bool {
	return ContainsFold(t.Key, word) || ContainsFold(t.Title, word) || ContainsFold(t.ID, word)
}

// ContainsFold reports whether s contains sub (already lower case),
// ignoring case: strings.Contains(strings.ToLower(s), sub), without the
// copy. A snapshot's filter runs it over every task, so it first looks for
// sub with ASCII letters folded, which needs no allocation; only when that
// fails on text outside ASCII does it lower the text. A match found that
// way is a match in the lowered text too: sub is valid UTF-8 and lower
// case, so the bytes matched are whole runes that lowering leaves alone.
func ContainsFold(s, sub string) bool {
	if len(sub) == 0 || indexFoldASCII(s, sub) {
		return true
	}
	return !isASCII(s) && strings.Contains(strings.ToLower(s), sub)
}

// isASCII reports whether every byte of s is below 0x80, eight at a time.
func isASCII(s string) bool {
	for ; len(s) >= 8; s = s[8:] {
		w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		if w&0x8080808080808080 != 0 {
			return false
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// indexFoldASCII reports whether s holds sub with s's ASCII letters
// folded to lower case. It jumps between the places where sub's first byte
// occurs, in either case, each found by one IndexByte (vectorized) that
// resumes where the last left off.
func indexFoldASCII(s, sub string) bool {
	n, first := len(sub), sub[0]
	other := first
	if 'a' <= first && first <= 'z' {
		other = first - 'a' + 'A'
	}
	end := len(s) - n + 1 // a match starts before end
	if end <= 0 {
		return false
	}
	s1, s2 := s[:end], s[:end]
	lo, up := nextAt(s1, first, 0), nextAt(s2, other, 0)
	for {
		i := lo
		if i < 0 || up >= 0 && up < i {
			i = up
		}
		if i < 0 {
			return false
		}
		if equalFoldASCII(s[i+1:i+n], sub[1:]) {
			return true
		}
		if i == lo {
			lo = nextAt(s1, first, i+1)
		}
		if i == up {
			up = nextAt(s2, other, i+1)
		}
	}
}

// nextAt is the index of the first b in s at or after from, or -1.
func nextAt(s string, b byte, from int) int {
	if j := strings.IndexByte(s[from:], b); j >= 0 {
		return from + j
	}
	return -1
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
