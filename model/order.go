package model

import (
	"cmp"
	"strings"
	"time"
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
	switch f {
	case FieldSource:
		return strings.Compare(a.Source, b.Source)
	case FieldKey:
		return strings.Compare(a.DisplayKey(), b.DisplayKey())
	case FieldTitle:
		return strings.Compare(strings.ToLower(a.Title), strings.ToLower(b.Title))
	case FieldClass:
		return cmp.Compare(a.Class.Rank(), b.Class.Rank())
	case FieldPriority:
		return cmp.Compare(a.Priority, b.Priority)
	case FieldAge:
		return b.CreatedAt.Compare(a.CreatedAt)
	case FieldState:
		return cmp.Compare(a.State, b.State)
	case FieldHolder:
		return cmp.Compare(a.Claim.Holder, b.Claim.Holder)
	case FieldAgent:
		return strings.Compare(a.Claim.Name, b.Claim.Name)
	case FieldRun:
		return strings.Compare(a.Claim.RunID, b.Claim.RunID)
	case FieldNode:
		return strings.Compare(a.Claim.Node, b.Claim.Node)
	case FieldClaimed:
		return b.Claim.ClaimedAt.Compare(a.Claim.ClaimedAt)
	case FieldBeat:
		return b.Claim.HeartbeatAt.Compare(a.Claim.HeartbeatAt)
	case FieldLeft:
		return zeroLast(a.Claim.Expires, b.Claim.Expires)
	case FieldParked:
		return b.EditedAt.Compare(a.EditedAt)
	case FieldReason:
		return strings.Compare(a.Reason, b.Reason)
	case FieldUnblock:
		return strings.Compare(a.UnblockAction, b.UnblockAction)
	case FieldNextCheck:
		return zeroLast(a.NextCheckAt, b.NextCheckAt)
	case FieldReserved:
		return strings.Compare(a.Reservation.For, b.Reservation.For)
	}
	return 0
}

// zeroLast orders times earliest first with the zero time (never) last.
func zeroLast(a, b time.Time) int {
	switch {
	case a.IsZero() && b.IsZero():
		return 0
	case a.IsZero():
		return 1
	case b.IsZero():
		return -1
	}
	return a.Compare(b)
}
