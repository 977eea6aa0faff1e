package cli_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

func TestCopyIsFaithfulOnEveryBackend(t *testing.T) {
	team, yaml := teamIfAny(t, "faithful")
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource+yaml+
		"  - name: locks\n    kind: lockdir\n    path: DIR/locks\n"+
		"  - name: back\n    kind: sqlite\n    path: DIR/back.db\n"+
		"  - name: locks2\n    kind: lockdir\n    path: DIR/locks2\n")
	if team != "" {
		c.Run(0, "--source", "team", "--create", "migrate")
	}
	c.Run(0, "--source", "back", "--create", "migrate")
	local := filepath.Join(c.Dir, "queue.db")
	seed := openDB(t, "sqlite", local)
	for _, q := range []string{
		`INSERT INTO governance_tasks (id, title, description, priority, task_type, status, assigned_worker, created_at) VALUES
			('abc-123-456', 'Audit IAM roles', 'every role, every account', 'high', 'security', 'pending', 'claude-chat', '2026-02-01T02:00:00.000Z'),
			('abc-123-457', 'Rotate keys', NULL, 'critical', 'ops', 'pending', 'claude-chat', '2026-02-01T02:01:00.000Z'),
			('abc-123-458', 'Write the runbook', 'for on-call', 'medium', 'docs', 'pending', 'claude-chat', '2026-02-01T02:02:00.000Z'),
			('abc-123-459', 'Tag the release', NULL, 'low', 'release', 'pending', 'claude-chat', '2026-02-01T02:03:00.000Z')`,
		// The seed's claim, completion and failure, word for word.
		`UPDATE governance_tasks SET assigned_worker = 'claude-chat-7K9X', status = 'in_progress', started_at = '2026-02-01T02:10:00.000Z' WHERE id = 'abc-123-457' AND status = 'pending'`,
		`UPDATE governance_tasks SET assigned_worker = 'claude-chat-AB3C', status = 'in_progress', started_at = '2026-02-01T02:11:00.000Z' WHERE id = 'abc-123-458' AND status = 'pending'`,
		`UPDATE governance_tasks SET status = 'completed', completed_at = '2026-02-01T02:40:00.000Z' WHERE id = 'abc-123-458'`,
		`UPDATE governance_tasks SET assigned_worker = 'claude-chat-7K9X', status = 'in_progress', started_at = '2026-02-01T02:12:00.000Z' WHERE id = 'abc-123-459' AND status = 'pending'`,
		`UPDATE governance_tasks SET status = 'failed' WHERE id = 'abc-123-459'`,
	} {
		if _, err := seed.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	mk := func(title string) string {
		return c.Run(0, "--source", "local", "create", "--title", title, "--priority", "high", "--description", "d "+title).Task.PageID
	}
	claim := func(id, agent string) string {
		return c.Run(0, "--source", "local", "claim", "--task", id, "--agent-name", agent, "--run-id", "run-"+agent, "--lease", "1h").Task.LockToken
	}
	live := mk("index rebuild")
	claim(live, "SANDMAN")
	done := mk("vpc module")
	c.Run(0, "--source", "local", "complete", "--task", done, "--lock-token", claim(done, "ORACLE"), "--artifacts", "https://git.example/pr/7")
	blocked := mk("dns cutover")
	c.Run(0, "--source", "local", "block", "--task", blocked, "--lock-token", claim(blocked, "ORACLE"), "--reason", "waiting on the registrar",
		"--unblock-action", "registrar confirms", "--next-check-at", "2026-12-01T09:00:00Z")
	failed := mk("flaky migration")
	c.Run(0, "--source", "local", "fail", "--task", failed, "--lock-token", claim(failed, "SANDMAN"), "--reason", "schema drift")
	human := mk("held by a person")
	c.Run(0, "--source", "local", "takeover", "--yes", "--task", human)
	c.Run(0, "--source", "local", "comment", "--task", live, "--body", "halfway")

	want := dumpSQL(t, seed)
	for _, id := range []string{"abc-123-457", "abc-123-458", "abc-123-459"} {
		if r := want.rows[id]; r["task_type"] == "NULL" || r["started_at"] == "NULL" || !strings.HasPrefix(r["assigned_worker"], "claude-chat-") {
			t.Fatalf("the seed's row %s is not what the test means to copy: %v", id, r)
		}
	}

	if team != "" {
		cliCopy(c, 0, "--from", "local", "--to", "team")
		same(t, "SQLite → PostgreSQL", want, dumpSQL(t, openDB(t, "pgx", team)))
	}

	cliCopy(c, 0, "--from", "local", "--to", "locks")
	cliCopy(c, 0, "--from", "locks", "--to", "back")
	same(t, "SQLite → lock directory → SQLite", want, dumpSQL(t, openDB(t, "sqlite", filepath.Join(c.Dir, "back.db"))))

	cliCopy(c, 0, "--from", "locks", "--to", "locks2")
	a, b := dumpFiles(t, filepath.Join(c.Dir, "locks")), dumpFiles(t, filepath.Join(c.Dir, "locks2"))
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Errorf("lock directory → lock directory: the files differ\nwas:\n%s\nnow:\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
	for _, dir := range []string{"locks", "locks2"} {
		entries, _ := os.ReadDir(filepath.Join(c.Dir, dir))
		for _, e := range entries {
			if fi, err := e.Info(); err == nil && fi.Mode().Perm()&0o077 != 0 {
				t.Errorf("%s/%s is %v in a new lock directory: a live token readable by others", dir, e.Name(), fi.Mode().Perm())
			}
		}
	}
}

// A target holding a finished task with the id of one being copied: the
// dry run finds it, the copy refuses, and neither writes a thing. A
// conflict that appears between the plan and the writes (another process)
// leaves the target as it was too.
func TestCopyConflictLeavesTheTargetUnchanged(t *testing.T) {
	team, yaml := teamIfAny(t, "conflict")
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource+yaml+
		"  - name: locks\n    kind: lockdir\n    path: DIR/locks\n"+
		"  - name: other\n    kind: sqlite\n    path: DIR/other.db\n")
	targets := []string{"other", "locks"}
	if team != "" {
		c.Run(0, "--source", "team", "--create", "migrate")
		targets = append(targets, "team")
	}
	c.Run(0, "--source", "other", "--create", "migrate")
	var ids []string
	for i := range 6 {
		ids = append(ids, c.Run(0, "--source", "local", "create", "--title", fmt.Sprint("task ", i)).Task.PageID)
	}
	slices.Sort(ids)
	for _, target := range targets {
		t.Run(target, func(t *testing.T) {
			dst := cliOpen(c, target)
			ctx := context.Background()
			// The fifth id, already finished in the target.
			if err := dst.(sources.Importer).ImportAll(ctx, []*model.Task{{ID: ids[4], Title: "old", State: model.StateDone, CreatedAt: model.StampOf(time.Now())}}, nil); err != nil {
				t.Fatal(err)
			}
			before := everything(t, dst)
			for _, args := range [][]string{{"--dry-run"}, {}} {
				r := cliCopy(c, 2, append([]string{"--from", "local", "--to", target}, args...)...)
				if r.Error.Code != "CONFLICT" || !strings.Contains(r.Error.Message, ids[4]) {
					t.Fatalf("copy %v over a finished task with the same id: %+v", args, r.Error)
				}
				if after := everything(t, dst); after != before {
					t.Fatalf("copy %v changed the target:\n%s\nwas:\n%s", args, after, before)
				}
			}
			// The copy that stopped at "5 of 6": written past the plan's
			// check (as when another process writes the id in between), the
			// fifth task is refused and the four before it are taken back.
			src := cliOpen(c, "local")
			var plan sources.CopyPlan
			for _, id := range ids {
				full, err := src.Get(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				plan.Tasks = append(plan.Tasks, full)
			}
			n, err := plan.Apply(ctx, dst, nil)
			if model.CodeOf(err) != model.CodeConflict || n != 0 {
				t.Fatalf("a copy meeting the id on its fifth task: %d, %v; want 0 and CONFLICT", n, err)
			}
			if after := everything(t, dst); after != before {
				t.Fatalf("a copy refused part-way changed the target:\n%s\nwas:\n%s", after, before)
			}
		})
	}
}

// teamIfAny is a fresh PostgreSQL database and its source entry "team"
// when the throwaway cluster is there; without it the PostgreSQL half of a
// test is left out, the rest still runs.
func teamIfAny(t *testing.T, name string) (dsn, yaml string) {
	if os.Getenv("CLAIMDECK_TEST_PG_DSN") == "" && os.Getenv("CI") != "true" {
		t.Log("CLAIMDECK_TEST_PG_DSN unset: PostgreSQL left out")
		return "", ""
	}
	dsn, _ = freshPGDatabase(t, name)
	return dsn, "  - name: team\n    kind: postgres\n    dsn: " + dsn + "\n"
}

type sqlDump struct {
	rows  map[string]map[string]string
	trail []string
}

func openDB(t *testing.T, driver, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// dumpSQL reads every column of every row of governance_tasks, and every
// event of claimdeck's audit table, times as instants to the millisecond
// (SQLite keeps milliseconds).
func dumpSQL(t *testing.T, db *sql.DB) sqlDump {
	t.Helper()
	rows, err := db.Query("SELECT * FROM governance_tasks")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	d := sqlDump{rows: map[string]map[string]string{}}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		r := map[string]string{}
		for i, col := range cols {
			if col == "version" || col == "updated_at" || col == "claimdeck_stamp" {
				continue
			}
			r[col] = sqlValue(vals[i])
		}
		d.rows[r["id"]] = r
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	ev, err := db.Query("SELECT task_id, at, actor, action, COALESCE(reason, ''), COALESCE(detail, '') FROM claimdeck_audit")
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	for ev.Next() {
		var id, actor, action, reason, detail string
		var at any
		if err := ev.Scan(&id, &at, &actor, &action, &reason, &detail); err != nil {
			t.Fatal(err)
		}
		d.trail = append(d.trail, strings.Join([]string{id, sqlValue(at), actor, action, reason, detail}, " | "))
	}
	slices.Sort(d.trail)
	return d
}

func sqlValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case time.Time:
		return x.UTC().Truncate(time.Millisecond).Format(time.RFC3339Nano)
	case []byte:
		return sqlValue(string(x))
	case string:
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999-07:00", "2006-01-02 15:04:05"} {
			if at, err := time.Parse(layout, x); err == nil {
				return sqlValue(at)
			}
		}
		return x
	}
	return fmt.Sprint(v)
}

func same(t *testing.T, what string, want, got sqlDump) {
	t.Helper()
	for id, w := range want.rows {
		g, ok := got.rows[id]
		if !ok {
			t.Errorf("%s: row %s missing", what, id)
			continue
		}
		for col, v := range w {
			if g[col] != v {
				t.Errorf("%s: row %s column %s is %q, was %q", what, id, col, g[col], v)
			}
		}
	}
	if len(got.rows) != len(want.rows) {
		t.Errorf("%s: %d rows, was %d", what, len(got.rows), len(want.rows))
	}
	if strings.Join(got.trail, "\n") != strings.Join(want.trail, "\n") {
		t.Errorf("%s: the trail is\n%s\nwas\n%s", what, strings.Join(got.trail, "\n"), strings.Join(want.trail, "\n"))
	}
}

// dumpFiles is every task file of a lock directory: name and content.
func dumpFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == "tasks.json" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e.Name()+": "+string(data))
	}
	return out
}

// everything is every task of a source as Get reads it, in id order.
func everything(t *testing.T, src sources.Source) string {
	t.Helper()
	d, err := src.Poll(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, task := range d.Tasks {
		full, err := src.Get(context.Background(), task.ID)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %s %s %q %d", full.ID, full.Version, full.State, full.Title, len(full.More().History)))
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// A copy cut short is finished with --resume: the tasks the target holds
// as the origin does are skipped, the rest copied; without --resume they
// are a conflict, and a task the target holds otherwise stays one.
func TestCopyResume(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource+"  - name: locks\n    kind: lockdir\n    path: DIR/locks\n")
	first := c.Run(0, "--source", "local", "create", "--title", "first").Task.PageID
	cliCopy(c, 0, "--from", "local", "--to", "locks")
	second := c.Run(0, "--source", "local", "create", "--title", "second").Task.PageID
	if r := cliCopy(c, 2, "--from", "local", "--to", "locks"); !strings.Contains(r.Error.Message, "--resume") {
		t.Fatalf("a second copy without --resume: %+v", r.Error)
	}
	var out, errOut strings.Builder
	cmdtest.Program(context.Background(), []string{"--config", c.Conf, "copy", "--from", "local", "--to", "locks", "--resume"}, strings.NewReader(""), &out, &errOut)
	var r struct {
		Copied  int              `json:"copied"`
		Already []string         `json:"already_copied"`
		Tasks   []map[string]any `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(out.String()), &r); err != nil || r.Copied != 1 || len(r.Already) != 1 || r.Already[0] != first || r.Tasks[0]["id"] != second {
		t.Fatalf("copy --resume: %v %+v\n%s%s", err, r, out.String(), errOut.String())
	}
	c.Run(0, "--source", "locks", "update", "--task", second, "--title", "changed there")
	if r := cliCopy(c, 2, "--from", "local", "--to", "locks", "--resume"); !strings.Contains(r.Error.Message, second) {
		t.Fatalf("--resume over a task the target changed: %+v", r.Error)
	}
}
