package cli_test

import (
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

// seed003SQLite is seed 003's table as a team made it, with one row.
const seed003SQLite = `CREATE TABLE governance_tasks (
	id TEXT PRIMARY KEY, title TEXT NOT NULL, description TEXT, priority TEXT, task_type TEXT,
	status TEXT NOT NULL DEFAULT 'pending', assigned_worker TEXT,
	created_at TEXT NOT NULL DEFAULT (datetime('now')), started_at TEXT, completed_at TEXT);
INSERT INTO governance_tasks (id, title, priority, assigned_worker) VALUES ('t1', 'first', 'high', 'claude-chat');`

func execSQLite(t *testing.T, path, script string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(script); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// sqliteSchema is every table, index and trigger of the file as SQLite
// keeps them.
func sqliteSchema(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT type, name, COALESCE(sql, '') FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var typ, name, text string
		if err := rows.Scan(&typ, &name, &text); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %s: %s\n", typ, name, text)
	}
	return b.String()
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// migrate --dry-run on a team's SQLite file prints a script and leaves the
// file byte for byte as it was; that script, run by SQLite itself on a
// copy, gives the very schema migrate makes; and migrate says what it added.
func TestMigrateDryRunPrintsTheExactSQLAndChangesNothingSQLite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	team, copyOf := filepath.Join(dir, "team.db"), filepath.Join(dir, "copy.db")
	execSQLite(t, team, seed003SQLite)
	execSQLite(t, copyOf, seed003SQLite)
	conf := filepath.Join(dir, "config.yaml")
	body := fmt.Sprintf("actor: alice\naudit_log: %s/audit.jsonl\nsources:\n  - name: gov\n    kind: sqlite\n    path: %s\n    table: governance_tasks\n", dir, team)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	schema, sum := sqliteSchema(t, team), fileSum(t, team)

	code, script := cmdtest.RunOut(conf, "migrate", "--dry-run")
	if code != 0 {
		t.Fatalf("migrate --dry-run exited %d: %s", code, script)
	}
	for _, want := range []string{"BEGIN;", `ALTER TABLE "governance_tasks" ADD COLUMN lock_token TEXT;`, "CREATE TRIGGER", "claimdeck_audit", "Adds columns: lock_token", "COMMIT;"} {
		if !strings.Contains(script, want) {
			t.Errorf("the dry run's SQL lacks %q:\n%s", want, script)
		}
	}
	if sqliteSchema(t, team) != schema || fileSum(t, team) != sum {
		t.Fatal("migrate --dry-run changed the file")
	}
	if _, err := os.Stat(team + "-wal"); err == nil {
		t.Fatal("migrate --dry-run left a WAL beside the file")
	}

	execSQLite(t, copyOf, script)
	c := &cmdtest.CLI{T: t, Conf: conf, Dir: dir}
	var did struct {
		AddedColumns []string `json:"added_columns"`
		Statements   int      `json:"statements"`
		Applied      []string `json:"applied"`
	}
	code, out := cmdtest.RunOut(conf, "migrate")
	if code != 0 {
		t.Fatalf("migrate exited %d: %s", code, out)
	}
	mustJSON(t, out, &did)
	if len(did.AddedColumns) == 0 || did.AddedColumns[0] != "lock_token" || did.Statements != len(did.Applied) || did.Statements < 10 {
		t.Errorf("migrate does not say what it did: %+v", did)
	}
	if got, want := sqliteSchema(t, copyOf), sqliteSchema(t, team); got != want {
		t.Errorf("the printed SQL makes another schema than migrate:\nscript:\n%s\nmigrate:\n%s", got, want)
	}
	if _, again := cmdtest.RunOut(conf, "migrate", "--dry-run"); !strings.Contains(again, "Adds no columns") {
		t.Errorf("a dry run after migrate still adds columns:\n%s", again)
	}
	if r := c.Run(0, "get", "--task", "t1"); r.Task.Title != "first" {
		t.Errorf("the team's row after migrate: %+v", r.Task)
	}
}

// The same on PostgreSQL: the schema pg_dump shows is unchanged by the dry
// run, and the printed script run by psql on a twin database gives the
// schema migrate makes.
func TestMigrateDryRunPrintsTheExactSQLAndChangesNothingPostgres(t *testing.T) {
	t.Parallel()
	team, psql := freshPGDatabase(t, "dryrun_team")
	twin, _ := freshPGDatabase(t, "dryrun_twin")
	const ddl = `CREATE TABLE governance_tasks (id TEXT PRIMARY KEY, title TEXT NOT NULL, description TEXT, priority TEXT,
		task_type TEXT, status TEXT NOT NULL DEFAULT 'pending', assigned_worker TEXT,
		created_at timestamptz NOT NULL DEFAULT now(), started_at timestamptz, completed_at timestamptz);
		INSERT INTO governance_tasks (id, title, priority, assigned_worker) VALUES ('t1', 'first', 'high', 'claude-chat')`
	psql(team, ddl)
	psql(twin, ddl)
	dump := func(dsn string) string {
		out, err := exec.Command("pg_dump", "--schema-only", "--no-owner", dsn).CombinedOutput()
		if err != nil {
			t.Fatalf("pg_dump: %v\n%s", err, out)
		}
		var keep []string
		for _, l := range strings.Split(string(out), "\n") {
			if !strings.HasPrefix(l, "--") && !strings.HasPrefix(l, "\\restrict") && !strings.HasPrefix(l, "\\unrestrict") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "config.yaml")
	body := fmt.Sprintf("actor: alice\naudit_log: %s/audit.jsonl\nsources:\n  - name: gov\n    kind: postgres\n    dsn: %s\n", dir, team)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	before := dump(team)
	code, script := cmdtest.RunOut(conf, "migrate", "--dry-run")
	if code != 0 || !strings.Contains(script, "claimdeck_xid") || !strings.Contains(script, "NOTIFY") && !strings.Contains(script, "pg_notify") {
		t.Fatalf("migrate --dry-run exited %d:\n%s", code, script)
	}
	if dump(team) != before {
		t.Fatal("migrate --dry-run changed the database's schema")
	}
	path := filepath.Join(dir, "plan.sql")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("psql", twin, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("psql -f the dry run's SQL: %v\n%s", err, out)
	}
	if code, out := cmdtest.RunOut(conf, "migrate"); code != 0 {
		t.Fatalf("migrate exited %d: %s", code, out)
	}
	if got, want := dump(twin), dump(team); got != want {
		t.Errorf("the printed SQL makes another schema than migrate:\nscript:\n%s\nmigrate:\n%s", got, want)
	}
}

func mustJSON(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
}
