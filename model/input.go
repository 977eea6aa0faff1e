package model

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// The bounds of what a caller may ask for. A lease over a week hides a
// dead holder for longer than anyone watches. Priorities are stored as
// 32-bit integers (PostgreSQL integer, Notion's exact numbers).
const (
	MaxLease    = 7 * 24 * time.Hour
	MinPriority = math.MinInt32
	MaxPriority = math.MaxInt32
)

// CheckText refuses text no backend stores faithfully: invalid UTF-8
// (PostgreSQL rejects it, SQLite keeps the bytes, files replace them) and
// NUL bytes (PostgreSQL rejects them, C tools cut at them).
func CheckText(field, s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s is not valid UTF-8: send text encoded as UTF-8", field)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return fmt.Errorf("%s contains a NUL byte: remove it", field)
	}
	return nil
}

// CheckLease refuses a negative lease or one over MaxLease; zero asks for
// the default and passes.
func CheckLease(d time.Duration) error {
	if d >= 0 && d <= MaxLease {
		return nil
	}
	return fmt.Errorf("lease %s is out of range (want a positive duration up to %s, or none for the default)", d, MaxLease)
}

// CheckPriority refuses a priority the backends cannot store.
func CheckPriority(p int) error {
	if p < MinPriority || p > MaxPriority {
		return fmt.Errorf("priority %d is out of range (want a number from %d to %d)", p, MinPriority, MaxPriority)
	}
	return nil
}
