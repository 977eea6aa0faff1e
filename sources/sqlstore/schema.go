package sqlstore

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/claimdeck/claimdeck/model"
)

// stampColumn holds, on PostgreSQL, the transaction that last wrote the row
// (txid_current: 64 bits, never wraps).
const stampColumn = "claimdeck_xid"

// createSeedTable is seed 003's table as its SQL uses it, for a queue that
// claimdeck starts from nothing (the embedded default).
func (s *Store) createSeedTable(ctx context.Context, q querier) error {
	_, err := q.exec(ctx, s.seedTableSQL())
	return err
}

// seedColumns are the columns of the table seedTableSQL makes.
var seedColumns = []string{"id", "title", "description", "priority", "task_type", "status", "assigned_worker", "created_at", "started_at", "completed_at"}

func (s *Store) seedTableSQL() string {
	ts := "timestamptz"
	if s.d.name == sqlite.name {
		ts = "TEXT"
	}
	return fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
	id TEXT PRIMARY KEY,
	title TEXT NOT NULL,
	description TEXT,
	priority TEXT,
	task_type TEXT,
	status TEXT NOT NULL DEFAULT 'pending',
	assigned_worker TEXT,
	created_at %s NOT NULL DEFAULT (%s),
	started_at %s,
	completed_at %s
)`, s.table, ts, s.d.now, ts, ts)
}

// auditTrail stands, in the columns a store has, for the audit table's
// trail columns (door, result, db_role) and its append-only triggers:
// present once a migration added them.
const auditTrail = "claimdeck_audit.trail"

// columnsOf lists the columns the table has now, and auditTrail when the
// audit table has its trail columns.
func (s *Store) columnsOf(ctx context.Context, q querier) (map[string]bool, error) {
	have, err := s.columnsOfTable(ctx, q, s.plainTable)
	if err != nil || len(have) == 0 {
		return have, err
	}
	have[auditTrail], err = s.auditHasTrail(ctx, q)
	return have, err
}

// auditHasTrail reports whether the audit table (shared by every table of
// the database) has its trail columns already.
func (s *Store) auditHasTrail(ctx context.Context, q querier) (bool, error) {
	audit, err := s.columnsOfTable(ctx, q, "claimdeck_audit")
	return audit["door"] && audit["result"] && audit["db_role"], err
}

func (s *Store) columnsOfTable(ctx context.Context, q querier, table string) (map[string]bool, error) {
	var rows rowsIter
	var err error
	if s.d.name == sqlite.name {
		// With the indexes, by name after a space: a statement may lead
		// SQLite's planner to an index only where the index exists.
		rows, err = q.query(ctx, "SELECT name FROM pragma_table_info($1) UNION ALL SELECT ' ' || name FROM pragma_index_list($1)", table)
	} else {
		schema, name := "", table
		if i := strings.IndexByte(name, '.'); i >= 0 {
			schema, name = name[:i], name[i+1:]
		}
		rows, err = q.query(ctx, `SELECT column_name FROM information_schema.columns
			WHERE table_name = $1 AND ($2 = '' OR table_schema = $2) AND ($2 <> '' OR table_schema = ANY (current_schemas(false)))`, name, schema)
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	have := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		have[strings.ToLower(n)] = true
	}
	return have, rows.Err()
}

// Migrate adds what the full protocol needs to a seed 003 table without
// touching what the seed's SQL relies on: the lease columns, indexes, the
// audit and tombstone tables, and triggers that bump `version` and
// `updated_at` on every change — including the seed's own UPDATEs, which
// know nothing of them — and (PostgreSQL) NOTIFY listeners. It is
// idempotent.
func (s *Store) Migrate(ctx context.Context) error {
	_, err := s.Apply(ctx)
	return err
}

// Migration is what Migrate runs or ran: the statements in order, and the
// columns they add.
type Migration struct {
	Statements []string `json:"statements"`
	AddColumns []string `json:"add_columns"`
	// CreateTable is true when the plan begins by making seed 003's table.
	CreateTable bool `json:"create_table,omitempty"`
}

// Plan returns the statements Migrate would run on the table as it is now,
// reading the schema only. With create, a missing table is planned as
// seed 003's table made first; without, it is an error.
func (s *Store) Plan(ctx context.Context, create bool) (Migration, error) {
	have, err := s.columnsOf(ctx, s.db)
	if err != nil {
		return Migration{}, s.classify("migrate", "", err)
	}
	var m Migration
	if len(have) == 0 {
		if err := s.hidden(ctx); err != nil {
			return Migration{}, err
		}
		if !create {
			return Migration{}, model.Errorf(model.CodeMisconfigured, "migrate", "", "table %s does not exist (claimdeck migrate --create makes seed 003's table and migrates it)", s.plainTable)
		}
		m.CreateTable = true
		m.Statements = append(m.Statements, s.seedTableSQL())
		for _, c := range seedColumns {
			have[c] = true
		}
		if have[auditTrail], err = s.auditHasTrail(ctx, s.db); err != nil {
			return Migration{}, s.classify("migrate", "", err)
		}
	} else if missing := missingRequired(have); len(missing) > 0 {
		return Migration{}, model.Errorf(model.CodeMisconfigured, "migrate", "", "table %s lacks seed 003 columns: %s", s.plainTable, strings.Join(missing, ", "))
	}
	m.AddColumns = addedColumns(have)
	m.Statements = append(m.Statements, s.migration(have)...)
	return m, nil
}

// addedColumns are the protocol's columns the table lacks.
func addedColumns(have map[string]bool) []string {
	out := []string{}
	for _, c := range columns {
		if !have[c.name] {
			out = append(out, c.name)
		}
	}
	return out
}

// Apply runs the migration in one transaction and returns what it ran;
// progress, when set, hears of each statement run.
func (s *Store) Apply(ctx context.Context, progress ...func(done, total int)) (Migration, error) {
	var m Migration
	err := s.db.tx(ctx, func(q querier) error {
		have, err := s.columnsOf(ctx, q)
		if err != nil {
			return err
		}
		if len(have) == 0 {
			return fmt.Errorf("table %s does not exist", s.plainTable)
		}
		if missing := missingRequired(have); len(missing) > 0 {
			return fmt.Errorf("table %s lacks seed 003 columns: %s", s.plainTable, strings.Join(missing, ", "))
		}
		m = Migration{AddColumns: addedColumns(have)}
		stmts := s.migration(have)
		for i, stmt := range stmts {
			if _, err := q.exec(ctx, stmt); err != nil {
				return fmt.Errorf("%w\nin: %s", err, firstLine(stmt))
			}
			m.Statements = append(m.Statements, stmt)
			for _, p := range progress {
				if p != nil {
					p(i+1, len(stmts))
				}
			}
		}
		return nil
	})
	if err != nil {
		return Migration{}, s.classify("migrate", "", err)
	}
	return m, s.loadColumns(ctx)
}

func missingRequired(have map[string]bool) []string {
	var missing []string
	for _, c := range columns {
		if c.required && !have[c.name] {
			missing = append(missing, c.name)
		}
	}
	return missing
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

func (s *Store) migration(have map[string]bool) []string {
	var out []string
	pg := s.d.name == postgres.name
	ts, big := "timestamptz", "bigint"
	if !pg {
		ts, big = "TEXT", "INTEGER"
	}
	for _, c := range columns {
		if have[c.name] {
			continue
		}
		typ := "TEXT"
		switch c.kind {
		case kTime:
			typ = ts
		case kInt:
			typ = big + " NOT NULL DEFAULT 0"
		}
		out = append(out, fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s %s", s.table, c.name, typ))
	}
	if !have["updated_at"] {
		// SQLite cannot add a column with a non-constant default: fill it
		// once, from when each row last moved, so that history stays old.
		last := "COALESCE(completed_at, started_at, created_at)"
		if pg {
			last = "COALESCE(completed_at::timestamptz, started_at::timestamptz, created_at::timestamptz, now())"
		} else {
			last = fmt.Sprintf("COALESCE(strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ', %s), %s)", last, s.d.now)
		}
		out = append(out, fmt.Sprintf("UPDATE %s SET updated_at = %s WHERE updated_at IS NULL", s.table, last))
	}
	idx := strings.ReplaceAll(s.plainTable, ".", "_")
	out = append(out,
		fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s_updated_at_idx ON %s (updated_at)", idx, s.table)+usedBy("the dashboard's incremental poll"),
		fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s_queue_idx ON %s (status, assigned_worker)", idx, s.table)+usedBy("seed 003's own SQL, by status and worker"),
		fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s_parent_idx ON %s (parent_id)", idx, s.table)+usedBy("get (its sub-tasks), complete (none open)"),
		// The pull order itself, over pending rows only, so claim-next walks an
		// index instead of sorting the queue on every claim.
		fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s_pull_idx ON %s (%s) WHERE status = 'pending'", idx, s.table, pullOrder(s.d))+
			usedBy("next, claim (the first queued task), list --status READY --limit N, the dashboard's first screen"),
		// When each claim's lease ends, over claims only: next and claim-next
		// find the dead ones as a range that holds no live claim (pickNext).
		fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s_lease_idx ON %s (%s) WHERE status = 'in_progress'", idx, s.table, s.d.ts("lease_expires_at"))+
			usedBy("next, claim (a claim whose agent's lease is dead)"),
		fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s_seed_lease_idx ON %s (%s) WHERE status = 'in_progress' AND lease_expires_at IS NULL", idx, s.table, s.d.ts("started_at"))+
			usedBy("next, claim (a claim of the seed's SQL whose lease is dead)"),
		// Live work apart from history, so the dashboard's full poll reads
		// the live rows and the recent finished ones, not a year of them.
		fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s_live_idx ON %s (status) WHERE %s", idx, s.table, liveStatus)+usedBy("the dashboard's windowed poll (live work)"),
		// Status first, so history is a range per final status and counting
		// it never leaves the index.
		fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s_finished_idx ON %s (status, updated_at)", idx, s.table)+
			usedBy("the dashboard's windowed poll (recent history, the count of the rest), archive"),
	)
	if pg {
		out = append(out,
			// The transaction that last wrote each row: an incremental poll
			// reads the rows of the transactions its last snapshot did not
			// see, where a time needs an overlap for late commits and reads
			// the whole overlap again on every poll.
			fmt.Sprintf("ALTER TABLE %s ADD COLUMN IF NOT EXISTS %s bigint", s.table, stampColumn),
			fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s_stamp_idx ON %s (%s)", idx, s.table, stampColumn)+usedBy("the dashboard's incremental poll"),
			// Rows written before the migration, or under an older
			// claimdeck's trigger, have no stamp and are found by time.
			fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s_unstamped_idx ON %s (updated_at) WHERE %s IS NULL", idx, s.table, stampColumn)+usedBy("the dashboard's incremental poll (rows written before the stamp)"),
		)
	}
	serial := "bigserial PRIMARY KEY"
	if !pg {
		serial = "INTEGER PRIMARY KEY AUTOINCREMENT"
	}
	out = append(out,
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS claimdeck_audit (
	id %s,
	tbl TEXT NOT NULL,
	task_id TEXT NOT NULL,
	at %s NOT NULL,
	actor TEXT NOT NULL,
	action TEXT NOT NULL,
	reason TEXT,
	detail TEXT,
	before TEXT,
	after TEXT
)`, serial, ts),
		"CREATE INDEX IF NOT EXISTS claimdeck_audit_task_idx ON claimdeck_audit (tbl, task_id)"+usedBy("get (its history)"),
		// The trail by time: stats and the metrics count the team's
		// overrides from it (TrailSince), a range whatever its length.
		"CREATE INDEX IF NOT EXISTS claimdeck_audit_at_idx ON claimdeck_audit (tbl, at, id)"+usedBy("stats and metrics (the team's overrides, from the trail)"),
	)
	if !have[auditTrail] {
		// The trail's own columns: where a request came in, how it ended
		// (applied, or the code it was refused with) and, on PostgreSQL,
		// the database role that wrote the row, set by the server.
		out = append(out,
			"ALTER TABLE claimdeck_audit ADD COLUMN door TEXT",
			"ALTER TABLE claimdeck_audit ADD COLUMN result TEXT",
			"ALTER TABLE claimdeck_audit ADD COLUMN db_role TEXT")
	}
	out = append(out,
		fmt.Sprintf("CREATE TABLE IF NOT EXISTS claimdeck_tombstones (tbl TEXT NOT NULL, task_id TEXT NOT NULL, deleted_at %s NOT NULL)", ts),
		"CREATE INDEX IF NOT EXISTS claimdeck_tombstones_idx ON claimdeck_tombstones (tbl, deleted_at)"+usedBy("the dashboard's incremental poll (deleted rows)"),
	)
	if pg {
		return append(append(out, s.pgTriggers(idx)...), pgAuditTriggers...)
	}
	return append(append(out, s.sqliteTriggers(idx)...), sqliteAuditTriggers...)
}

// The audit table is append-only: the database refuses UPDATE, DELETE
// (and on PostgreSQL TRUNCATE) on it for every role but one that can drop
// the trigger. On PostgreSQL each row carries the role that wrote it,
// session_user, set by the server from the connection: a client cannot
// name another.
var pgAuditTriggers = []string{
	`CREATE OR REPLACE FUNCTION claimdeck_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
	RAISE EXCEPTION 'claimdeck_audit is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END
$f$`,
	"DROP TRIGGER IF EXISTS claimdeck_audit_append_only ON claimdeck_audit",
	"CREATE TRIGGER claimdeck_audit_append_only BEFORE UPDATE OR DELETE ON claimdeck_audit FOR EACH ROW EXECUTE FUNCTION claimdeck_audit_append_only()",
	"DROP TRIGGER IF EXISTS claimdeck_audit_no_truncate ON claimdeck_audit",
	"CREATE TRIGGER claimdeck_audit_no_truncate BEFORE TRUNCATE ON claimdeck_audit FOR EACH STATEMENT EXECUTE FUNCTION claimdeck_audit_append_only()",
	`CREATE OR REPLACE FUNCTION claimdeck_audit_role() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
	NEW.db_role := session_user;
	RETURN NEW;
END
$f$`,
	"DROP TRIGGER IF EXISTS claimdeck_audit_role ON claimdeck_audit",
	"CREATE TRIGGER claimdeck_audit_role BEFORE INSERT ON claimdeck_audit FOR EACH ROW EXECUTE FUNCTION claimdeck_audit_role()",
}

var sqliteAuditTriggers = []string{
	`CREATE TRIGGER IF NOT EXISTS claimdeck_audit_no_update BEFORE UPDATE ON claimdeck_audit
BEGIN
	SELECT RAISE(ABORT, 'claimdeck_audit is append-only: UPDATE refused');
END`,
	`CREATE TRIGGER IF NOT EXISTS claimdeck_audit_no_delete BEFORE DELETE ON claimdeck_audit
BEGIN
	SELECT RAISE(ABORT, 'claimdeck_audit is append-only: DELETE refused');
END`,
}

// usedBy ends an index's statement with a comment naming the calls whose
// statements read it, so that migrate --dry-run's script says which index
// serves what. (claim --task, heartbeat, complete and get find their row by
// the table's primary key, which seed 003's table has.)
// TestAgentStatementsWalkIndexes checks the agents' calls against it.
func usedBy(calls string) string { return " /* used by: " + calls + " */" }

// pgTriggers version every row change: a claimdeck statement bumps the
// version itself; anyone else's UPDATE (the seed's SQL) gets it bumped here.
// Every write is stamped with its time and its transaction.
func (s *Store) pgTriggers(idx string) []string {
	fn := "claimdeck_touch_" + idx
	return []string{
		fmt.Sprintf(`CREATE OR REPLACE FUNCTION %[1]s() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
	IF TG_OP = 'DELETE' THEN
		INSERT INTO claimdeck_tombstones (tbl, task_id, deleted_at) VALUES (%[2]s, OLD.id::text, clock_timestamp());
		RETURN OLD;
	END IF;
	IF TG_OP = 'UPDATE' AND NEW.version = OLD.version THEN
		NEW.version := OLD.version + 1;
		%[3]s;
	END IF;
	NEW.updated_at := clock_timestamp();
	NEW.%[4]s := txid_current();
	RETURN NEW;
END
$f$`, fn, pgString(s.tag), s.foreignStep("clock_timestamp()"), stampColumn),
		fmt.Sprintf("DROP TRIGGER IF EXISTS claimdeck_touch ON %s", s.table),
		fmt.Sprintf("CREATE TRIGGER claimdeck_touch BEFORE INSERT OR UPDATE OR DELETE ON %s FOR EACH ROW EXECUTE FUNCTION %s()", s.table, fn),
		fmt.Sprintf(`CREATE OR REPLACE FUNCTION %s_notify() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
	PERFORM pg_notify(%s, '');
	RETURN NULL;
END
$f$`, fn, pgString(s.channel)),
		fmt.Sprintf("DROP TRIGGER IF EXISTS claimdeck_notify ON %s", s.table),
		fmt.Sprintf("CREATE TRIGGER claimdeck_notify AFTER INSERT OR UPDATE OR DELETE ON %s FOR EACH STATEMENT EXECUTE FUNCTION %s_notify()", s.table, fn),
	}
}

func (s *Store) sqliteTriggers(idx string) []string {
	return []string{
		// Dropped and made again, so that a queue migrated before keeps
		// the seed's steps too.
		"DROP TRIGGER IF EXISTS claimdeck_touch_" + idx,
		fmt.Sprintf(`CREATE TRIGGER claimdeck_touch_%[1]s AFTER UPDATE ON %[2]s FOR EACH ROW WHEN NEW.version = OLD.version
BEGIN
	UPDATE %[2]s SET version = OLD.version + 1, updated_at = %[3]s WHERE id = NEW.id;
	%[4]s;
END`, idx, s.table, sqliteNow, s.foreignStep(sqliteNow)),
		fmt.Sprintf(`CREATE TRIGGER IF NOT EXISTS claimdeck_born_%[1]s AFTER INSERT ON %[2]s FOR EACH ROW WHEN NEW.updated_at IS NULL
BEGIN
	UPDATE %[2]s SET updated_at = %[3]s WHERE id = NEW.id;
END`, idx, s.table, sqliteNow),
		fmt.Sprintf(`CREATE TRIGGER IF NOT EXISTS claimdeck_gone_%[1]s AFTER DELETE ON %[2]s FOR EACH ROW
BEGIN
	INSERT INTO claimdeck_tombstones (tbl, task_id, deleted_at) VALUES ('%[1]s', CAST(OLD.id AS TEXT), %[3]s);
END`, idx, s.table, sqliteNow),
	}
}

// foreignStep notes in the audit trail a status that someone else's
// UPDATE (the seed's SQL) wrote, for the versioning triggers: a claim by
// the new worker, a finish (model.FinishStep) by the old one. A return to
// the pool is no step of its own; heartbeats never change the status.
func (s *Store) foreignStep(now string) string {
	var when strings.Builder
	statuses := slices.Sorted(maps.Keys(stateOfStatus))
	for _, status := range statuses {
		action := model.FinishStep(stateOfStatus[status])
		if stateOfStatus[status] == model.StateClaimed {
			action = model.EventClaim
		}
		if action != "" {
			fmt.Fprintf(&when, " WHEN %s THEN %s", pgString(status), pgString(action))
		}
	}
	action := "CASE NEW.status" + when.String() + " END"
	return fmt.Sprintf(`INSERT INTO claimdeck_audit (tbl, task_id, at, actor, action)
		SELECT %s, CAST(NEW.id AS TEXT), %s,
			COALESCE(CASE WHEN NEW.status = %s THEN NEW.assigned_worker ELSE OLD.assigned_worker END, ''), %s
		WHERE NEW.status IS DISTINCT FROM OLD.status AND %s IS NOT NULL`,
		pgString(s.tag), now, pgString(statusInProgress), action, action)
}

// pgString quotes a validated identifier as a string literal for DDL, where
// parameters are not allowed.
func pgString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
