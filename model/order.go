package model

import (
	"cmp"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Field is a task field a list can be sorted by; each names the value a
// dashboard column shows, so ascending reads top-down as the column does.
type Field int

// Fields a task list sorts by. FieldNone sorts nothing.
const (
	FieldNone Field = iota
	FieldSource
	FieldKey
	FieldTitle
	FieldClass    // pull-order rank: the class an agent takes first on top
	FieldPriority // lowest first; descending puts urgent on top
	FieldAge      // youngest first (time since created)
	FieldState
	FieldHolder  // AGENT, HUMAN or nobody
	FieldAgent   // the claim's holder name
	FieldRun     // the claim's run id
	FieldNode    // the claim's node
	FieldClaimed // shortest held first (time since claimed)
	FieldBeat    // freshest heartbeat first
	FieldLeft    // lease that runs out first on top; no expiry last
	FieldParked  // shortest parked first (time since last edit)
	FieldReason
	FieldUnblock
	FieldNextCheck // due first; no next check last
	FieldReserved  // who the task is reserved for
)

// Order is a sort of a task list by one field, ascending or descending.
type Order struct {
	Field Field
	Desc  bool
}

// Compare orders a and b by the field, then by source and id (ascending
// either way) so that the order is total and the same on every screen.
func (o Order) Compare(a, b *Task) int {
	c := o.Field.compare(a, b)
	switch {
	case c != 0 && o.Desc:
		return -c
	case c != 0:
		return c
	case a.Source != b.Source: // one source, one string: no byte compared
		return strings.Compare(a.Source, b.Source)
	}
	return strings.Compare(a.ID, b.ID)
}

func (f Field) compare(a, b *Task) int {
	if na, sa, ok := f.Number(a); ok {
		nb, sb, _ := f.Number(b)
		return cmp.Or(cmp.Compare(na, nb), cmp.Compare(sa, sb))
	}
	ta, fold := f.Text(a)
	tb, _ := f.Text(b)
	if fold {
		return compareFold(ta, tb)
	}
	return strings.Compare(ta, tb)
}

// Text is t's value of a text field, and whether it sorts ignoring case
// (compareFold) rather than byte by byte; "" for a field that is not text.
func (f Field) Text(t *Task) (s string, fold bool) {
	switch f {
	case FieldSource:
		return t.Source, false
	case FieldKey:
		return t.DisplayKey(), false
	case FieldTitle:
		return t.Title, true
	case FieldAgent:
		return t.claimRef().Name, false
	case FieldRun:
		return t.claimRef().RunID, false
	case FieldNode:
		return t.claimRef().Node, false
	case FieldReason:
		return t.More().Reason, false
	case FieldUnblock:
		return t.UnblockAction(), false
	case FieldReserved:
		return t.ReservedFor(), false
	}
	return "", false
}

// AppendSortKey appends the bytes a text field's value sorts by: the value
// itself, or with fold each rune lowered as compareFold lowers it (invalid
// UTF-8 as U+FFFD), so that strings.Compare of two keys orders as Compare
// orders their fields. A list of 100k sorts by keys laid side by side
// instead of folding two scattered titles at every comparison.
func AppendSortKey(buf []byte, s string, fold bool) []byte {
	if !fold {
		return append(buf, s...)
	}
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			buf = append(buf, lowerASCII(c))
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		buf = utf8.AppendRune(buf, unicode.ToLower(r))
		i += n
	}
	return buf
}

// Number is t's value of a field that is a number or a time, as n then
// nsec compared in that order (Compare's own order), so that a list of
// 100k can be sorted by packed integers; ok is false for a text field.
func (f Field) Number(t *Task) (n int64, nsec int32, ok bool) {
	switch f {
	case FieldClass:
		return int64(t.Class.Rank()), 0, true
	case FieldPriority:
		return int64(t.Priority), 0, true
	case FieldState:
		return int64(t.State), 0, true
	case FieldHolder:
		return int64(t.claimRef().Holder), 0, true
	case FieldAge:
		return since(t.CreatedAt.Time())
	case FieldClaimed:
		return since(t.claimRef().ClaimedAt.Time())
	case FieldBeat:
		return since(t.claimRef().HeartbeatAt.Time())
	case FieldParked:
		return since(t.EditedAt.Time())
	case FieldLeft:
		return zeroLast(t.claimRef().Expires.Time())
	case FieldNextCheck:
		return zeroLast(t.NextCheckAt())
	}
	return 0, 0, false
}

// compareFold compares a and b as their lower case would, without
// making it: a sort of 100k titles would allocate at every comparison.
func compareFold(a, b string) int {
	for a != "" && b != "" {
		if ca, cb := a[0], b[0]; ca < utf8.RuneSelf && cb < utf8.RuneSelf {
			// ASCII, the usual title: no rune decoded.
			if la, lb := lowerASCII(ca), lowerASCII(cb); la != lb {
				return cmp.Compare(la, lb)
			}
			a, b = a[1:], b[1:]
			continue
		}
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if la, lb := unicode.ToLower(ra), unicode.ToLower(rb); la != lb {
			return cmp.Compare(la, lb)
		}
		a, b = a[na:], b[nb:]
	}
	return cmp.Compare(len(a), len(b))
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// since orders times latest first: the least time since on top.
func since(at time.Time) (int64, int32, bool) {
	return -at.Unix(), -int32(at.Nanosecond()), true
}

// zeroLast orders times earliest first with the zero time (never) last.
func zeroLast(at time.Time) (int64, int32, bool) {
	if at.IsZero() {
		return math.MaxInt64, 0, true
	}
	return at.Unix(), int32(at.Nanosecond()), true
}
