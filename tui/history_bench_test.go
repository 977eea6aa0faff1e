package tui

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/sqlstore"
	"github.com/claimdeck/claimdeck/theme"
)

// seedShapedTable is seed 003's table as a team has it before claimdeck:
// no lease columns, times as the seed's NOW() writes them.
const seedShapedTable = `CREATE TABLE %s (
	id TEXT PRIMARY KEY, title TEXT NOT NULL, description TEXT, priority TEXT, task_type TEXT,
	status TEXT NOT NULL DEFAULT 'pending', assigned_worker TEXT,
	started_at %[2]s, completed_at %[2]s, created_at %[2]s NOT NULL)`

// The rows the seed's own SQL leaves behind: done rows completed over the
// past year, then live ones (a quarter in progress, the rest pending). One
// generated INSERT each, in the seed's columns only.
const (
	sqliteDone = `WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < $1)
		INSERT INTO governance_tasks (id, title, priority, status, assigned_worker, created_at, started_at, completed_at)
		SELECT 'DONE-' || i, 'Rotate the certificates of service ' || (i % 977) || ' in region eu-west', 'medium', 'completed',
			'claude-chat-' || (i % 8),
			strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-' || (1 + i % 365) || ' days', '-2 hours'),
			strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-' || (1 + i % 365) || ' days', '-1 hours'),
			strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-' || (1 + i % 365) || ' days') FROM g`
	sqliteLive = `WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < $1)
		INSERT INTO governance_tasks (id, title, priority, status, assigned_worker, created_at, started_at)
		SELECT 'TASK-' || i, 'Rotate the certificates of service ' || (i % 977) || ' in region eu-west',
			CASE i % 4 WHEN 0 THEN 'low' WHEN 1 THEN 'medium' WHEN 2 THEN 'high' ELSE 'critical' END,
			CASE WHEN i % 4 = 0 THEN 'in_progress' ELSE 'pending' END,
			CASE WHEN i % 4 = 0 THEN 'claude-chat-' || (i % 8) ELSE 'claude-chat' END,
			strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1 hours'),
			CASE WHEN i % 4 = 0 THEN strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-10 minutes') END FROM g`
	pgDone = `INSERT INTO %s (id, title, priority, status, assigned_worker, created_at, started_at, completed_at)
		SELECT 'DONE-' || i, 'Rotate the certificates of service ' || (i %% 977) || ' in region eu-west', 'medium', 'completed',
			'claude-chat-' || (i %% 8),
			now() - make_interval(days => 1 + i %% 365, hours => 2),
			now() - make_interval(days => 1 + i %% 365, hours => 1),
			now() - make_interval(days => 1 + i %% 365) FROM generate_series(1, $1::int) AS i`
	pgLive = `INSERT INTO %s (id, title, priority, status, assigned_worker, created_at, started_at)
		SELECT 'TASK-' || i, 'Rotate the certificates of service ' || (i %% 977) || ' in region eu-west',
			(ARRAY['low','medium','high','critical'])[1 + i %% 4],
			CASE WHEN i %% 4 = 0 THEN 'in_progress' ELSE 'pending' END,
			CASE WHEN i %% 4 = 0 THEN 'claude-chat-' || (i %% 8) ELSE 'claude-chat' END,
			now() - interval '1 hour',
			CASE WHEN i %% 4 = 0 THEN now() - interval '10 minutes' END FROM generate_series(1, $1::int) AS i`
)

// seedShapedSQLite writes live and done rows into a seed-shaped SQLite
// file, then migrates it as `claimdeck migrate` would.
func seedShapedSQLite(b *testing.B, live, done int) string {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "queue.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, fmt.Sprintf(seedShapedTable, "governance_tasks", "TEXT")); err != nil {
		b.Fatal(err)
	}
	for _, q := range []struct {
		sql string
		n   int
	}{{sqliteDone, done}, {sqliteLive, live}} {
		if _, err := db.ExecContext(ctx, q.sql, q.n); err != nil {
			b.Fatal(err)
		}
	}
	migrate(b, sqlstore.Config{Name: "local", Driver: "sqlite", Path: path})
	return path
}

// seedShapedPostgres does the same in a fresh schema of the test server and
// returns the table's qualified name.
func seedShapedPostgres(b *testing.B, live, done int) string {
	ctx := context.Background()
	dsn := os.Getenv("CLAIMDECK_TEST_PG_DSN")
	if dsn == "" {
		b.Skip("CLAIMDECK_TEST_PG_DSN is not set (bash .ci/pg-start DIR PORT prints one)")
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	schema := fmt.Sprintf("history_%d_%d", live, done)
	table := schema + ".governance_tasks"
	for _, q := range []string{"DROP SCHEMA IF EXISTS " + schema + " CASCADE", "CREATE SCHEMA " + schema,
		fmt.Sprintf(seedShapedTable, table, "timestamptz")} {
		if _, err := pool.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	b.Cleanup(func() { _, _ = pool.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+schema+" CASCADE") })
	for _, q := range []struct {
		sql string
		n   int
	}{{pgDone, done}, {pgLive, live}} {
		if _, err := pool.Exec(ctx, fmt.Sprintf(q.sql, table), q.n); err != nil {
			b.Fatal(err)
		}
	}
	migrate(b, sqlstore.Config{Name: "team", Driver: "postgres", DSN: dsn, Table: table})
	if _, err := pool.Exec(ctx, "VACUUM ANALYZE "+table); err != nil {
		b.Fatal(err)
	}
	return table
}

func migrate(b *testing.B, cfg sqlstore.Config) {
	ctx := context.Background()
	s, err := sqlstore.Open(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkStartWithHistory starts the dashboard over seed-shaped queues
// of 1,000 to 100,000 live tasks, and over 10,000 live tasks beside
// 1,000,000 done ones (a year of the seed's queue), on SQLite and
// PostgreSQL: start to first frame and resident memory must follow the
// live work, not the history.
func BenchmarkStartWithHistory(b *testing.B) {
	sizes := []struct{ live, done int }{{1_000, 0}, {10_000, 0}, {100_000, 0}, {10_000, 1_000_000}}
	for _, dialect := range []string{"sqlite", "postgres"} {
		for _, size := range sizes {
			live, done := size.live, size.done
			b.Run(fmt.Sprintf("%s/live-%d/done-%d", dialect, live, done), func(b *testing.B) {
				if dialect == "sqlite" {
					firstFrames(b, live, "CLAIMDECK_FIRST_FRAME_DB="+seedShapedSQLite(b, live, done))
				} else {
					firstFrames(b, live, "CLAIMDECK_FIRST_FRAME_PG_TABLE="+seedShapedPostgres(b, live, done))
				}
			})
		}
	}
}

// BenchmarkChangeToScreen times one change, an agent's claim committed
// through its own connection, until the dashboard's model shows it and has
// drawn a frame: on SQLite the data version probe's hint (every
// ProbeEvery), on PostgreSQL the NOTIFY hint. It reports the median and
// the worst of the changes besides the mean.
func BenchmarkChangeToScreen(b *testing.B) {
	sizes := []struct{ live, done int }{{1_000, 0}, {100_000, 0}, {10_000, 1_000_000}}
	for _, dialect := range []string{"sqlite", "postgres"} {
		for _, size := range sizes {
			b.Run(fmt.Sprintf("%s/live-%d/done-%d", dialect, size.live, size.done), func(b *testing.B) {
				cfg := sqlstore.Config{Name: "local", Driver: "sqlite"}
				if dialect == "sqlite" {
					cfg.Path = seedShapedSQLite(b, size.live, size.done)
				} else {
					cfg = sqlstore.Config{Name: "team", Driver: "postgres", DSN: os.Getenv("CLAIMDECK_TEST_PG_DSN"),
						Table: seedShapedPostgres(b, size.live, size.done)}
				}
				changeToScreen(b, cfg)
			})
		}
	}
}

func changeToScreen(b *testing.B, cfg sqlstore.Config) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	viewer, err := sqlstore.Open(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer viewer.Close()
	agent, err := sqlstore.Open(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer agent.Close()
	h := hub.New(hub.Config{Feeds: []hub.Feed{{Source: viewer}}})
	go h.Run(ctx)
	m, err := New(Options{Hub: h, Styles: theme.New(theme.Options{Mode: theme.Dark})})
	if err != nil {
		b.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	for loading(m.board.snap) {
		m.Update(snapshotMsg(<-h.Snapshots()))
	}
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		// Changes come at random moments, a few a second: some meet a
		// hub at rest, some the gathering after the last one's poll.
		time.Sleep(time.Duration(rand.Int64N(int64(300 * time.Millisecond))))
		task, err := agent.ClaimNext(ctx, sources.ClaimRequest{Agent: fmt.Sprintf("bench-%d", i)})
		if err != nil || task == nil {
			b.Fatalf("claim-next: %v, %v", task, err)
		}
		start := time.Now()
		b.StartTimer()
		for !claimedOnScreen(m.board.snap, task.ID) {
			m.Update(snapshotMsg(<-h.Snapshots()))
		}
		m.View()
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2])/1e6, "median-ms")
	b.ReportMetric(float64(took[len(took)-1])/1e6, "worst-ms")
}

func claimedOnScreen(s hub.Snapshot, id string) bool {
	for _, st := range s.Sources {
		for t := range st.Tasks.All() {
			if t.ID == id {
				return t.State == model.StateClaimed
			}
		}
	}
	return false
}
