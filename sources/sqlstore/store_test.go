package sqlstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/sourcetest"
)

// pgDSN is the throwaway cluster .ci/run starts. Outside CI the PostgreSQL
// tests skip; in CI (CI=true) a missing server fails them.
func pgDSN(t testing.TB) string {
	dsn := os.Getenv("CLAIMDECK_TEST_PG_DSN")
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but CLAIMDECK_TEST_PG_DSN is not set: .ci/run must start PostgreSQL")
		}
		t.Skip("PostgreSQL tests skipped: set CLAIMDECK_TEST_PG_DSN (bash .ci/run starts a throwaway cluster and sets it)")
	}
	return dsn
}

var tableSeq atomic.Int64

// freshTable names a table no other test uses.
func freshTable() string {
	return fmt.Sprintf("tasks_%d_%d", os.Getpid(), tableSeq.Add(1))
}

func openSQLite(t testing.TB, cfg Config) *Store {
	t.Helper()
	cfg.Driver = "sqlite"
	if cfg.Path == "" {
		cfg.Path = filepath.Join(t.TempDir(), "queue.db")
	}
	if cfg.Name == "" {
		cfg.Name = "local"
	}
	s, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	return s
}

func openPG(t testing.TB, cfg Config) *Store {
	t.Helper()
	cfg.Driver = "postgres"
	if cfg.DSN == "" {
		cfg.DSN = pgDSN(t)
	}
	if cfg.Table == "" {
		cfg.Table = freshTable()
	}
	if cfg.Name == "" {
		cfg.Name = "governance"
	}
	s, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	return s
}

func TestConformanceSQLite(t *testing.T) {
	sourcetest.Run(t, sourcetest.Harness{
		NewClocked: func(t testing.TB, now func() time.Time) sources.Source {
			return openSQLite(t, Config{Create: true, Now: now})
		},
		Reopen: reopen,
	})
}

func TestConformancePostgres(t *testing.T) {
	pgDSN(t)
	sourcetest.Run(t, sourcetest.Harness{
		New:     func(t testing.TB) sources.Source { return openPG(t, Config{Create: true}) },
		Advance: backdate,
		Reopen:  reopen,
	})
}

// reopen is another process's store: its own connections to the same
// database and table.
func reopen(t testing.TB, src sources.Source) sources.Source {
	other, err := Open(context.Background(), src.(*Store).cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	return other
}

// backdate makes d pass for one row of a PostgreSQL store, which judges
// leases by the server's now(): that clock cannot be moved, so the row's
// claim, lease and reservation times move back by d instead. The kit runs
// SQLite on its injected clock (Config.Now); tests shared by both backends
// that open stores without one backdate on SQLite too.
func backdate(t testing.TB, src sources.Source, id string, d time.Duration) {
	t.Helper()
	s := src.(*Store)
	ctx := context.Background()
	for _, col := range []string{"started_at", "lease_expires_at", "heartbeat_at", "reserved_until"} {
		var at nullTime
		if err := s.db.queryRow(ctx, fmt.Sprintf("SELECT %s FROM %s WHERE id = $1", col, s.table), id).Scan(&at); err != nil {
			t.Fatalf("backdate %s: %v", col, err)
		}
		if at.t.IsZero() {
			continue
		}
		if _, err := s.db.exec(ctx, fmt.Sprintf("UPDATE %s SET %s = $2 WHERE id = $1", s.table, col), id, s.d.timeArg(at.t.Add(-d))); err != nil {
			t.Fatalf("backdate %s: %v", col, err)
		}
	}
}
