package model

import (
	"testing"
	"time"
)

func TestAStampKeepsTheInstantToTheMicrosecond(t *testing.T) {
	zone := time.FixedZone("UTC+2", 2*3600)
	for _, c := range []struct {
		name string
		in   time.Time
		want time.Time
	}{
		{"no time", time.Time{}, time.Time{}},
		{"an instant in a zone", time.Date(2026, 11, 27, 21, 4, 5, 123456789, zone), time.Date(2026, 11, 27, 19, 4, 5, 123456000, time.UTC)},
		{"the epoch, kept a microsecond late", time.Unix(0, 0), time.Unix(0, 1000).UTC()},
		{"before the epoch", time.Date(1969, 7, 20, 20, 17, 40, 0, time.UTC), time.Date(1969, 7, 20, 20, 17, 40, 0, time.UTC)},
		{"a lease to the year 9999", time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)},
		{"past its range", time.Date(400000, 1, 1, 0, 0, 0, 0, time.UTC), time.UnixMicro(1<<63 - 1).UTC()},
		{"before its range", time.Date(-400000, 1, 1, 0, 0, 0, 0, time.UTC), time.UnixMicro(-1<<63 + 1).UTC()},
	} {
		s := StampOf(c.in)
		if got := s.Time(); !got.Equal(c.want) || got.Location() != c.want.Location() {
			t.Errorf("%s: StampOf(%v).Time() = %v, want %v", c.name, c.in, got, c.want)
		}
		if s.IsZero() != c.in.IsZero() {
			t.Errorf("%s: IsZero = %v for %v", c.name, s.IsZero(), c.in)
		}
		if !c.in.IsZero() && StampOf(s.Time()) != s {
			t.Errorf("%s: a Stamp read back as a time and stamped again changed: %d → %d", c.name, s, StampOf(s.Time()))
		}
	}
	a, b := StampOf(time.Date(2026, 1, 1, 0, 0, 0, 1000, time.UTC)), StampOf(time.Date(2026, 1, 1, 0, 0, 0, 2000, time.UTC))
	if !(a < b) || !a.Time().Before(b.Time()) {
		t.Errorf("stamps a microsecond apart do not order: %d, %d", a, b)
	}
}
