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
	switch f {
	case FieldSource:
		return strings.Compare(a.Source, b.Source)
	case FieldKey:
		return strings.Compare(a.DisplayKey(), b.DisplayKey())
	case FieldTitle:
		return compareFold(a.Title, b.Title)
	case FieldAgent:
		return strings.Compare(a.Claim.Name, b.Claim.Name)
	case FieldRun:
		return strings.Compare(a.Claim.RunID, b.Claim.RunID)
	case FieldNode:
		return strings.Compare(a.Claim.Node, b.Claim.Node)
	case FieldReason:
		return strings.Compare(a.Reason, b.Reason)
	case FieldUnblock:
		return strings.Compare(a.UnblockAction(), b.UnblockAction())
	case FieldReserved:
		return strings.Compare(a.ReservedFor(), b.ReservedFor())
	}
	return 0
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
		return int64(t.Claim.Holder), 0, true
	case FieldAge:
		return since(t.CreatedAt)
	case FieldClaimed:
		return since(t.Claim.ClaimedAt)
	case FieldBeat:
		return since(t.Claim.HeartbeatAt)
	case FieldParked:
		return since(t.EditedAt)
	case FieldLeft:
		return zeroLast(t.Claim.Expires)
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
