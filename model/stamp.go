package model

import (
	"math"
	"time"
)

// Stamp is an instant to the microsecond in 8 bytes, where a time.Time
// takes 24: a task keeps five of them, and at a million live tasks the
// difference is 80 MB (TestTaskSize).
//
// What it drops, no door shows: the zone, as every door shows a time in
// the zone it chooses (the dashboard's In(loc), the command line's and the
// backends' UTC); the monotonic reading, as these instants come from
// other processes; and a time's digits past the microsecond, which
// PostgreSQL does not keep either (Notion keeps milliseconds). Its range,
// nearly 300,000 years either way, holds a lease written to expire in the
// year 9999, which the dashboard calls what it is.
//
// The zero Stamp is the zero time.Time; the Unix epoch itself is kept one
// microsecond late, as it would otherwise read as no time at all.
type Stamp int64

var (
	stampMin = time.UnixMicro(math.MinInt64 + 1)
	stampMax = time.UnixMicro(math.MaxInt64)
)

// StampOf is t as a Stamp.
func StampOf(t time.Time) Stamp {
	switch {
	case t.IsZero():
		return 0
	case t.Before(stampMin):
		return math.MinInt64 + 1
	case t.After(stampMax):
		return math.MaxInt64
	}
	if n := t.UnixMicro(); n != 0 {
		return Stamp(n)
	}
	return 1
}

// Time is the instant in UTC; the zero time.Time for the zero Stamp.
func (s Stamp) Time() time.Time {
	if s == 0 {
		return time.Time{}
	}
	return time.UnixMicro(int64(s)).UTC()
}

// IsZero reports whether s holds no time.
func (s Stamp) IsZero() bool { return s == 0 }

// String is the instant as time.Time prints it.
func (s Stamp) String() string { return s.Time().String() }
