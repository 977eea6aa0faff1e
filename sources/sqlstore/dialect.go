package sqlstore

import (
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// dialect holds the few fragments in which SQLite and PostgreSQL differ.
// Everything else is one SQL text for both.
type dialect struct {
	name string
	// now is the database clock.
	now string
	// forUpdate locks the row a human action reads (SQLite's BEGIN IMMEDIATE
	// already holds the write lock).
	forUpdate string
	// text casts a column to text for reading (uuid or integer ids).
	text func(col string) string
	// ts makes a time expression comparable (SQLite stores text; julianday
	// compares any of its formats correctly).
	ts func(expr string) string
	// plusMillis adds a parameter holding milliseconds to a time
	// expression; minusMillis subtracts it.
	plusMillis, minusMillis func(base, param string) string
	// digits is a condition that a text expression is a small non-negative
	// integer, and toInt converts it.
	digits func(expr string) string
	toInt  func(expr string) string
	// timeArg is how a Go time is passed as a parameter.
	timeArg func(t time.Time) any
	// res is how finely the column keeps a time timeArg passes: lease and
	// reservation ends are rounded up to it (sources.HoldUntil).
	res time.Duration
	// pending is the condition on pending rows that leads the planner to
	// the pull-order index: SQLite, without statistics, guesses that a
	// status matches few rows and sorts them all instead (300 ms at 100,000).
	pending string
	// held is the same for claimed rows, leading SQLite to the indexes of
	// lease ends (lease_idx, seed_lease_idx) where it would otherwise sort
	// every claim.
	held string
}

// sqliteTime is the one format claimdeck writes times in on SQLite: fixed
// width, so text order is time order, and understood by SQLite's date
// functions and by the seed's NOW().
const sqliteTime = "2006-01-02T15:04:05.000Z"

const sqliteNow = "strftime('%Y-%m-%dT%H:%M:%fZ','now')"

var (
	postgres = dialect{
		name:       "postgres",
		now:        "now()",
		forUpdate:  " FOR UPDATE",
		text:       func(c string) string { return c + "::text" },
		ts:         func(e string) string { return e },
		plusMillis: func(b, p string) string { return fmt.Sprintf("(%s + %s::float8 * interval '1 millisecond')", b, p) },
		minusMillis: func(b, p string) string {
			return fmt.Sprintf("(%s - %s::float8 * interval '1 millisecond')", b, p)
		},
		digits:  func(e string) string { return e + " ~ '^[0-9]{1,9}$'" },
		toInt:   func(e string) string { return e + "::int" },
		timeArg: func(t time.Time) any { return t },
		res:     time.Microsecond,
		pending: "status = 'pending'",
		held:    "status = 'in_progress'",
	}
	sqlite = dialect{
		name:      "sqlite",
		now:       sqliteNow,
		forUpdate: "",
		text:      func(c string) string { return "CAST(" + c + " AS TEXT)" },
		ts:        func(e string) string { return "julianday(" + e + ")" },
		plusMillis: func(b, p string) string {
			return fmt.Sprintf("strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ', %s, '+' || (%s / 1000.0) || ' seconds')", b, p)
		},
		minusMillis: func(b, p string) string {
			return fmt.Sprintf("strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ', %s, '-' || (%s / 1000.0) || ' seconds')", b, p)
		},
		digits: func(e string) string {
			return fmt.Sprintf("(length(%[1]s) BETWEEN 1 AND 9 AND %[1]s NOT GLOB '*[^0-9]*')", e)
		},
		toInt:   func(e string) string { return "CAST(" + e + " AS INTEGER)" },
		timeArg: func(t time.Time) any { return t.UTC().Format(sqliteTime) },
		res:     time.Millisecond,
		pending: "likelihood(status = 'pending', 0.9)",
		held:    "likelihood(status = 'in_progress', 0.9)",
	}
)

// plainIdent: [A-Za-z_][A-Za-z0-9_]{0,62}, checked without a regular
// expression compiled at every start of the binary.
func plainIdent(p string) bool {
	if p == "" || len(p) > 63 || ('0' <= p[0] && p[0] <= '9') {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// quoteTable validates a configured table name ("tasks" or "schema.tasks")
// and quotes it. Table names cannot be parameters, so they are checked
// against a strict pattern instead.
func quoteTable(name string) (string, error) {
	parts := strings.Split(name, ".")
	if len(parts) > 2 {
		return "", fmt.Errorf("table %q: want NAME or SCHEMA.NAME", name)
	}
	for i, p := range parts {
		if !plainIdent(p) {
			return "", fmt.Errorf("table %q: %q is not a plain SQL identifier (letters, digits, underscore)", name, p)
		}
		parts[i] = `"` + p + `"`
	}
	return strings.Join(parts, "."), nil
}

// parseDBTime reads a time the way either driver hands it over.
func parseDBTime(v any) (time.Time, error) {
	switch x := v.(type) {
	case nil:
		return time.Time{}, nil
	case time.Time:
		return x, nil
	case []byte:
		return parseTimeText(string(x))
	case string:
		return parseTimeText(x)
	}
	return time.Time{}, fmt.Errorf("unsupported time value %T", v)
}

var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999-07",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02",
}

func parseTimeText(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("unreadable time %q", s)
}

// nullTime scans a nullable time from either driver.
type nullTime struct {
	t   time.Time
	err error
}

func (n *nullTime) Scan(v any) error {
	n.t, n.err = parseDBTime(v)
	return nil // a bad time marks the task broken instead of failing the poll
}

// ScanTimestamptz is pgx's direct path for a timestamptz column, without
// the value passing through database/sql's; it keeps Scan's rules (an
// infinite time is unreadable).
func (n *nullTime) ScanTimestamptz(v pgtype.Timestamptz) error {
	switch {
	case !v.Valid:
		return n.Scan(nil)
	case v.InfinityModifier != pgtype.Finite:
		return n.Scan(v.InfinityModifier.String())
	}
	return n.Scan(v.Time)
}

// nullText scans a nullable text from either driver: database/sql's
// rules (sql.NullString's, which also take a number SQLite keeps in a
// text column), and on PostgreSQL, where every text column is read as
// text, pgx's direct path, which is most of a poll's scanning otherwise.
type nullText struct{ sql.NullString }

func (n *nullText) ScanText(v pgtype.Text) error {
	n.String, n.Valid = v.String, v.Valid
	return nil
}

// nullInt64 is nullText's counterpart for an integer.
type nullInt64 struct{ sql.NullInt64 }

func (n *nullInt64) ScanInt64(v pgtype.Int8) error {
	n.Int64, n.Valid = v.Int64, v.Valid
	return nil
}
