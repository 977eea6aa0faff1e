package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// Seed 003's statements, verbatim but for the ids.
const (
	seedFind = `SELECT id, title, description, priority, task_type 
FROM governance_tasks 
WHERE status = 'pending' 
  AND assigned_worker = 'claude-chat'
ORDER BY CASE priority 
  WHEN 'critical' THEN 1 
  WHEN 'high' THEN 2 
  WHEN 'medium' THEN 3 
  WHEN 'low' THEN 4 
  ELSE 5 END, 
created_at 
LIMIT 5;`
	seedClaim = `UPDATE governance_tasks 
SET assigned_worker = 'claude-chat-7K9X', 
    status = 'in_progress',
    started_at = NOW()
WHERE id = 'TASK_ID_HERE' 
  AND status = 'pending';`
	seedComplete = `UPDATE governance_tasks 
SET status = 'completed',
    completed_at = NOW()
WHERE id = 'TASK_ID_HERE';`
)

func seedSQL(stmt, id string) string { return strings.ReplaceAll(stmt, "TASK_ID_HERE", id) }

// seedDB runs the seed's SQL the way a seed agent does: by hand, outside
// claimdeck — psql for PostgreSQL, a plain database/sql handle for SQLite.
type seedDB interface {
	exec(t *testing.T, q string) int64
	ids(t *testing.T, q string) []string
}

type psql struct{ dsn string }

func (p psql) run(t *testing.T, q string) string {
	t.Helper()
	out, err := exec.Command("psql", p.dsn, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", q).CombinedOutput()
	if err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	return string(out)
}

func (p psql) exec(t *testing.T, q string) int64 {
	t.Helper()
	out, err := exec.Command("psql", p.dsn, "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", q).CombinedOutput()
	if err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	var n int64
	for _, f := range strings.Fields(string(out)) {
		if v, err := parseInt(f); err == nil {
			n = v // "UPDATE 1": the row count is the last number
		}
	}
	return n
}

func (p psql) ids(t *testing.T, q string) []string {
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(p.run(t, q)), "\n") {
		if line != "" {
			ids = append(ids, strings.SplitN(line, "|", 2)[0])
		}
	}
	return ids
}

type plainSQL struct{ db *sql.DB }

func (p plainSQL) exec(t *testing.T, q string) int64 {
	t.Helper()
	res, err := p.db.Exec(q)
	if err != nil {
		t.Fatalf("seed SQL: %v", err)
	}
	n, _ := res.RowsAffected()
	return n
}

func (p plainSQL) ids(t *testing.T, q string) []string {
	t.Helper()
	rows, err := p.db.Query(q)
	if err != nil {
		t.Fatalf("seed SQL: %v", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		var a, b, c, d sql.NullString
		if err := rows.Scan(&id, &a, &b, &c, &d); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

func parseInt(s string) (int64, error) {
	var n int64
	if s == "" {
		return 0, errors.New("empty")
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, errors.New("not a number")
		}
		n = n*10 + int64(c-'0')
	}
	return n, nil
}

// A table as a seed 003 team has it: no claimdeck columns, a few rows.
const seedTable = `CREATE TABLE governance_tasks (
	id TEXT PRIMARY KEY,
	title TEXT NOT NULL,
	description TEXT,
	priority TEXT,
	task_type TEXT,
	status TEXT NOT NULL DEFAULT 'pending',
	assigned_worker TEXT,
	started_at TIMESTAMPTZ,
	completed_at TIMESTAMPTZ,
	created_at TIMESTAMPTZ NOT NULL DEFAULT (NOW())
);
INSERT INTO governance_tasks (id, title, priority, status, assigned_worker, created_at) VALUES
	('abc-123-456', 'Draft the data retention policy', 'low', 'pending', 'claude-chat', NOW()),
	('abc-123-457', 'Review vendor contracts', 'critical', 'pending', 'claude-chat', NOW()),
	('abc-123-458', 'Summarize board minutes', 'high', 'pending', 'claude-chat', NOW()),
	('abc-123-459', 'Odd row', 'medium', 'wip', 'claude-chat', NOW());
INSERT INTO governance_tasks (id, title, priority, status, assigned_worker, created_at, started_at, completed_at) VALUES
	('abc-122-001', 'File last year''s minutes', 'low', 'completed', 'claude-chat-OLD1', '2025-10-01T09:00:00.000Z', '2025-10-01T09:05:00.000Z', '2025-10-01T10:00:00.000Z');`

func TestSeed003InteropSQLite(t *testing.T) {
	seed, cfg := seedSQLite(t)
	testSeedInterop(t, seed, cfg)
}

// seedSQLite is a seed 003 table in a fresh SQLite file, as a team has it.
func seedSQLite(t *testing.T) (seedDB, Config) {
	registerFunctions() // the seed's NOW(), as a store opened first would have it
	path := t.TempDir() + "/governance.db"
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, stmt := range strings.SplitAfter(strings.ReplaceAll(seedTable, "TIMESTAMPTZ", "TEXT"), ";") {
		if strings.TrimSpace(stmt) != "" {
			if _, err := db.Exec(stmt); err != nil {
				t.Fatalf("%v in %s", err, stmt)
			}
		}
	}
	return plainSQL{db}, Config{Driver: "sqlite", Path: path, Name: "local"}
}

func TestSeed003InteropPostgres(t *testing.T) {
	seed, cfg := seedPostgres(t)
	testSeedInterop(t, seed, cfg)
}

// seedPostgres is a seed 003 table in a schema of its own on the test
// cluster, reached as the seed reaches it: by psql.
func seedPostgres(t *testing.T) (seedDB, Config) {
	dsn := pgDSN(t)
	if _, err := exec.LookPath("psql"); err != nil {
		t.Fatal("psql is needed to run the seed's SQL by hand")
	}
	schema := strings.ReplaceAll(freshTable(), "tasks", "seed")
	p := psql{dsn: dsn}
	p.run(t, "CREATE SCHEMA "+schema)
	t.Cleanup(func() { p.run(t, "DROP SCHEMA "+schema+" CASCADE") })
	// The seed names its table unqualified: give this test its own schema.
	scopedDSN := dsn + "&options=-csearch_path%3D" + schema
	scoped := psql{dsn: scopedDSN}
	scoped.run(t, seedTable)
	return scoped, Config{Driver: "postgres", DSN: scopedDSN, Name: "governance"}
}

// A row a seed agent claimed with the seed's own UPDATE before claimdeck
// was migrated has no audit row for its claim; the trail of the takeover
// and the release that follow still names whom each was from.
func TestTrailNamesWhomAnOverrideOfAClaimMadeBeforeMigrateWasFrom(t *testing.T) {
	for name, open := range map[string]func(*testing.T) (seedDB, Config){"sqlite": seedSQLite, "postgres": seedPostgres} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			seed, cfg := open(t)
			if n := seed.exec(t, seedSQL(seedClaim, "abc-123-457")); n != 1 {
				t.Fatalf("the seed's claim: rowCount = %d, want 1", n)
			}
			cfg.SeedTimeout = time.Hour
			s, err := Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			seen, err := s.Get(ctx, "abc-123-457")
			if err != nil {
				t.Fatal(err)
			}
			taken, err := s.Takeover(ctx, seen.ID, sources.Human{Actor: "bob", Reason: "looping", Expect: seen.Version, Seen: seen})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.ForceRelease(ctx, seen.ID, sources.Human{Actor: "carol", Reason: "back to the pool", Expect: taken.Version, Seen: taken}); err != nil {
				t.Fatal(err)
			}
			trail, err := s.Get(ctx, seen.ID)
			if err != nil {
				t.Fatal(err)
			}
			var steps []string
			for _, e := range trail.More().History {
				steps = append(steps, e.Action+" by "+e.Actor+" ("+e.Detail+")")
			}
			got := strings.Join(steps, " | ")
			for _, want := range []string{"takeover by bob (was claimed by claude-chat-7K9X)", "force-release by carol (was claimed by HUMAN:bob)"} {
				if !strings.Contains(got, want) {
					t.Fatalf("the trail lacks %q:\n%s", want, got)
				}
			}
		})
	}
}

func testSeedInterop(t *testing.T, seed seedDB, cfg Config) {
	ctx := context.Background()
	cfg.SeedTimeout = time.Hour
	s, err := Open(ctx, cfg)
	if err != nil {
		t.Fatalf("open a seed table: %v", err)
	}
	defer s.Close()
	if s.Migrated() {
		t.Fatal("a bare seed table reported as migrated")
	}
	d, err := s.Poll(ctx, "")
	if err != nil || len(d.Tasks) != 5 {
		t.Fatalf("reading an unmigrated seed table: %d tasks, %v", len(d.Tasks), err)
	}
	for _, task := range d.Tasks {
		if task.ID == "abc-122-001" {
			if task.State != model.StateDone {
				t.Fatalf("last year's completed row read as %s", task.State)
			}
		} else if task.ID == "abc-123-459" {
			if task.More().Problem == "" || !strings.Contains(task.More().Problem, `"wip"`) {
				t.Fatalf("a status outside the vocabulary must be named: %q", task.More().Problem)
			}
		} else if task.State != model.StateQueued {
			t.Fatalf("%s read as %s", task.ID, task.State)
		}
	}
	_, err = s.Claim(ctx, "abc-123-457", sources.ClaimRequest{Agent: "a"})
	if model.CodeOf(err) != model.CodeMisconfigured || !strings.Contains(err.Error(), "claimdeck migrate") {
		t.Fatalf("claim on an unmigrated table: %v, want MISCONFIGURED telling to migrate", err)
	}

	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate is idempotent, the second run said: %v", err)
	}
	if got := seed.ids(t, seedFind); !slices.Equal(got, []string{"abc-123-457", "abc-123-458", "abc-123-456"}) {
		t.Fatalf("after migrate the seed's own query returns %v", got)
	}
	// Migrating keeps history old: last year's row stays out of a day's window.
	d, err = s.Poll(ctx, "", sources.PollOption{FinishedAfter: time.Now().Add(-24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if index(d.Tasks)["abc-122-001"] != nil || d.Archived != 1 || len(d.Tasks) != 4 {
		t.Fatalf("a day's window after migrate: %d tasks (last year's row in: %v), %d archived; want 4 and 1",
			len(d.Tasks), index(d.Tasks)["abc-122-001"] != nil, d.Archived)
	}
	old, err := s.Archive(ctx, sources.ArchiveQuery{Before: time.Now().Add(-24 * time.Hour), Text: "minutes"})
	if err != nil || len(old) != 1 || old[0].ID != "abc-122-001" || old[0].EditedAt.Time().Year() != 2025 {
		t.Fatalf("the archive after migrate: %v, %v; want last year's row, last changed then", old, err)
	}

	// A seed agent claims with the seed's SQL; claimdeck sees the claim.
	if n := seed.exec(t, seedSQL(seedClaim, "abc-123-457")); n != 1 {
		t.Fatalf("the seed's claim: rowCount = %d, want 1", n)
	}
	if n := seed.exec(t, seedSQL(seedClaim, "abc-123-457")); n != 0 {
		t.Fatalf("the seed's second claim: rowCount = %d, want 0", n)
	}
	d2, err := s.Poll(ctx, d.Cursor)
	if err != nil {
		t.Fatal(err)
	}
	claimed := index(d2.Tasks)["abc-123-457"]
	if claimed == nil || claimed.State != model.StateClaimed || claimed.Claim().Name != "claude-chat-7K9X" || claimed.Claim().Holder != model.HolderAgent {
		t.Fatalf("the seed's claim in the next incremental poll: %+v", claimed)
	}
	if lease := claimed.Claim().Expires.Time().Sub(claimed.Claim().ClaimedAt.Time()); lease != time.Hour {
		t.Fatalf("a seed claim's lease = started_at + %v, want the configured 1h", lease)
	}
	_, err = s.Claim(ctx, "abc-123-457", sources.ClaimRequest{Agent: "ORACLE"})
	if model.CodeOf(err) != model.CodeConflict {
		t.Fatalf("claiming over a live seed claim: %v, want CONFLICT", err)
	}

	// A human releases it; the seed's query finds it again.
	seen, err := s.Get(ctx, "abc-123-457")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ForceRelease(ctx, seen.ID, sources.Human{Actor: "alice", Reason: "worker gone", Expect: seen.Version}); err != nil {
		t.Fatalf("force-release of a seed claim: %v", err)
	}
	if got := seed.ids(t, seedFind); !slices.Contains(got, "abc-123-457") {
		t.Fatalf("after force-release the seed's query does not find the task: %v", got)
	}

	// claimdeck claims; the seed completes with its own SQL.
	mine, err := s.ClaimNext(ctx, sources.ClaimRequest{Agent: "claude-chat-AB3C"})
	if err != nil || mine == nil || mine.ID != "abc-123-457" {
		t.Fatalf("claim-next = %v, %v; want the critical task", mine, err)
	}
	if n := seed.exec(t, seedSQL(seedComplete, mine.ID)); n != 1 {
		t.Fatalf("the seed's complete: rowCount = %d", n)
	}
	if got, _ := s.Get(ctx, mine.ID); got.State != model.StateDone || got.Held() {
		t.Fatalf("after the seed's complete: %s held=%v", got.State, got.Held())
	}
	// The seed's own claim and complete are in the trail beside claimdeck's
	// steps, noted by the versioning trigger.
	trail, err := s.Get(ctx, mine.ID)
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, e := range trail.More().History {
		steps = append(steps, e.Action+" by "+e.Actor)
	}
	if got, want := strings.Join(steps, " | "), "claim by claude-chat-7K9X | force-release by alice | claim by claude-chat-AB3C | complete by claude-chat-AB3C"; got != want {
		t.Fatalf("trail after the seed's claim and complete:\n got %s\nwant %s", got, want)
	}
	if _, err := s.Heartbeat(ctx, mine.ID, mine.Claim().Token, 0); model.CodeOf(err) != model.CodeLostLock {
		t.Fatalf("heartbeat after the seed completed the task: %v, want LOST_LOCK", err)
	}

	// A hand-off takes the task out of the seed's pool until it is claimed.
	high, _ := s.Get(ctx, "abc-123-458")
	if _, err := s.Handoff(ctx, high.ID, sources.Handoff{Human: sources.Human{Actor: "alice", Expect: high.Version}, To: "ORACLE"}); err != nil {
		t.Fatal(err)
	}
	if got := seed.ids(t, seedFind); slices.Contains(got, "abc-123-458") {
		t.Fatalf("a task handed to ORACLE is still in the seed's pool: %v", got)
	}
	if next, _ := s.Next(ctx, "ORACLE"); next == nil || next.ID != "abc-123-458" {
		t.Fatalf("next for ORACLE = %v", next)
	}
}

func index(ts []*model.Task) map[string]*model.Task {
	m := map[string]*model.Task{}
	for _, t := range ts {
		m[t.ID] = t
	}
	return m
}

func TestIncrementalPoll(t *testing.T) {
	for name, open := range map[string]func(testing.TB, Config) *Store{"sqlite": openSQLite, "postgres": openPG} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, Config{Create: true, Overlap: time.Millisecond})
			defer s.Close()
			a, _ := s.Create(ctx, sources.NewTask{Title: "a"})
			b, _ := s.Create(ctx, sources.NewTask{Title: "b"})
			time.Sleep(10 * time.Millisecond) // past the overlap window, which re-reads the latest changes
			d, err := s.Poll(ctx, "")
			if err != nil || !d.Full || len(d.Tasks) != 2 {
				t.Fatalf("full poll: %d tasks, full=%v, %v", len(d.Tasks), d.Full, err)
			}
			time.Sleep(10 * time.Millisecond)
			idle, err := s.Poll(ctx, d.Cursor)
			if err != nil || idle.Full || len(idle.Tasks) != 0 || len(idle.Removed) != 0 {
				t.Fatalf("idle poll: %d tasks, %d removed, full=%v, %v", len(idle.Tasks), len(idle.Removed), idle.Full, err)
			}
			if _, err := s.Claim(ctx, a.ID, sources.ClaimRequest{Agent: "x"}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.db.exec(ctx, "DELETE FROM "+s.table+" WHERE id = $1", b.ID); err != nil {
				t.Fatal(err)
			}
			d2, err := s.Poll(ctx, idle.Cursor)
			if err != nil || len(d2.Tasks) != 1 || d2.Tasks[0].ID != a.ID || !slices.Equal(d2.Removed, []string{b.ID}) {
				t.Fatalf("poll after a claim and a delete: tasks %v removed %v, %v", len(d2.Tasks), d2.Removed, err)
			}
		})
	}
}

func TestListenNotify(t *testing.T) {
	s, hints, other, cancel := watched(t, Config{Create: true})
	ctx := context.Background()
	time.Sleep(200 * time.Millisecond) // let LISTEN register
	for len(hints) > 0 {
		<-hints
	}
	if _, err := other.Exec(ctx, "INSERT INTO "+s.table+" (id, title, status, assigned_worker) VALUES ('n1', 'from elsewhere', 'pending', 'claude-chat')"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-hints:
	case <-time.After(5 * time.Second):
		t.Fatal("no NOTIFY hint within 5 s of a change made by another connection")
	}
	cancel()
	for range hints { // the channel closes when the context ends
	}
}
