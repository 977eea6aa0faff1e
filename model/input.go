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

// Text limits, in bytes of UTF-8 (characters, for plain ASCII). Each is
// what every backend can store and read back whole: Notion keeps at most
// 200,000 characters a property, a lock-directory file is read up to
// 1 MiB with all of a task's texts and its history in it (JSON may
// escape a byte as six), SQL has no limit of its own.
const (
	MaxTitle       = 2000
	MaxDescription = 64 << 10
	MaxReason      = 4 << 10 // reasons, unblock actions
	MaxArtifacts   = 16 << 10
	MaxComment     = 16 << 10
)

// CheckBounded is CheckText with a length limit: one of the Max… above.
func CheckBounded(field, s string, limit int) error {
	if err := CheckText(field, s); err != nil {
		return err
	}
	if len(s) > limit {
		return fmt.Errorf("%s is %d bytes, over the limit of %d: shorten it (every backend must be able to read it back whole)", field, len(s), limit)
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
