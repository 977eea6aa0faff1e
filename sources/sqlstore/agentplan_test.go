package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// agentStatement is one statement an agent's call runs, with arguments
// that make the planner plan it as the call does, and the indexes its plan
// must use (each name less the table's prefix).
type agentStatement struct {
	call, what, sql string
	args            []any
	uses            []string
}

// agentStatements are the statements of next, claim (claim-next), claim
// --task, heartbeat, complete, get and list --status READY --limit 20, as
// the store renders them for its dialect, on a queue filled by fillQueue:
// queued is a pending task, held one in progress, parent one with
// sub-tasks.
func agentStatements(t testing.TB, s *Store, queued, held, parent string) []agentStatement {
	t.Helper()
	st, _ := s.stmts()
	claim, err := s.claimArgs(sources.ClaimRequest{Agent: "plan-agent"})
	if err != nil {
		t.Fatal(err)
	}
	with := func(id string) []any { return append(claim[:len(claim):len(claim)], id) }
	finish, _ := s.finishArgs(held, "tok-"+held, statusCompleted, sources.Outcome{State: model.StateDone, Writer: "plan-agent", Door: model.DoorNtask})
	pick := []string{"pull_idx", "lease_idx", "seed_lease_idx"} // pickNext's three candidates
	out := []agentStatement{
		{"next", "next", st.next, []any{"plan-agent", s.cfg.Pool, s.cfg.SeedTimeout.Milliseconds(), s.cfg.Grace.Milliseconds()}, append(pick, "pkey")},
		{"claim --task", "the claim", st.claim, with(queued), []string{"pkey"}},
		{"heartbeat", "heartbeat", st.heartbeat, []any{held, "tok-" + held, int64(60000)}, []string{"pkey"}},
		{"complete", "the finish", st.finish, finish, []string{"pkey", "parent_idx"}},
		{"get", "the row", st.get, []any{queued}, []string{"pkey"}},
		{"get", "its history", st.history, []any{s.tag, queued}, []string{"claimdeck_audit_task_idx"}},
		{"get", "its open sub-tasks", st.openSubs, []any{parent}, []string{"parent_idx"}},
		{"get", "its sub-tasks", st.subtasks, []any{parent}, []string{"parent_idx"}},
		{"list --status READY --limit 20", "the first 20 queued", st.first, []any{20}, []string{"pull_idx"}},
		{"stats, metrics", "the trail of the last hour", st.trailSince, []any{s.tag, s.d.timeArg(time.Now().Add(-time.Hour)), sources.TrailLimit}, []string{"claimdeck_audit_at_idx"}},
	}
	if st.claimNote != "" { // SQLite: the pick, then the trail's note and the write by id
		return append(out,
			agentStatement{"claim", "the pick", st.pickNext, claim, pick},
			agentStatement{"claim", "its note", st.claimNote, with(queued), []string{"pkey"}},
			agentStatement{"claim", "the claim", st.claim, with(queued), []string{"pkey"}},
			agentStatement{"claim --task", "its note", st.claimNote, with(queued), []string{"pkey"}},
			agentStatement{"complete", "its note", st.finishNote, finish, []string{"pkey", "parent_idx"}},
		)
	}
	return append(out, agentStatement{"claim", "claim-next", st.claimNext, claim, append(pick, "pkey")})
}

// fillQueue is fill's n pending tasks made a working queue: every 100th
// claimed by a live agent (every 1,000th one whose lease is dead), every
// 1,000th + 50 claimed by the seed's SQL (no lease) an hour ago, one in
// ten of the rest completed, ten sub-tasks of bench-7. The writes bump the
// version, so no trail is written.
func fillQueue(tb testing.TB, s *Store, n int) {
	tb.Helper()
	fill(tb, s, n)
	ctx := context.Background()
	num := s.d.toInt("substr(" + s.d.text("id") + ", 7)")
	now := s.d.now
	for _, q := range []string{
		fmt.Sprintf(`UPDATE %s SET status = 'in_progress', lock_token = 'tok-' || id, holder_kind = 'AGENT', assigned_worker = 'agent-' || id,
			started_at = %s, heartbeat_at = %s, lease_expires_at = %s, version = version + 1 WHERE %s %% 100 = 0`,
			s.table, now, now, s.d.plusMillis(now, "600000"), num),
		fmt.Sprintf("UPDATE %s SET lease_expires_at = %s, version = version + 1 WHERE %s %% 1000 = 0", s.table, s.d.minusMillis(now, "3600000"), num),
		fmt.Sprintf(`UPDATE %s SET status = 'in_progress', assigned_worker = 'seed-' || id, started_at = %s, version = version + 1 WHERE %s %% 1000 = 50`,
			s.table, s.d.minusMillis(now, "3600000"), num),
		fmt.Sprintf("UPDATE %s SET status = 'completed', completed_at = %s, version = version + 1 WHERE %s %% 10 = 5", s.table, now, num),
		fmt.Sprintf("UPDATE %s SET parent_id = 'bench-7', version = version + 1 WHERE %s BETWEEN 10 AND 19", s.table, num),
	} {
		if _, err := s.db.exec(ctx, q); err != nil {
			tb.Fatalf("%v\n%s", err, q)
		}
	}
}

// Every statement of an agent's call reads what it needs through indexes
// the migration makes: no scan of a table, no sort of more than the two
// candidates of a pick or one task's sub-tasks or history. So a call costs
// the same on a queue of any size. SQLite plans as on a freshly migrated
// queue (no statistics) and after ANALYZE; PostgreSQL after ANALYZE of
// 100,000 rows, so that its choice is the one a real queue gets.
func TestAgentStatementsWalkIndexes(t *testing.T) {
	const n = 100_000
	t.Run("sqlite", func(t *testing.T) {
		s := openSQLite(t, Config{Create: true})
		defer s.Close()
		fillQueue(t, s, n)
		checkSQLitePlans(t, s, "no statistics")
		if _, err := s.db.exec(context.Background(), "ANALYZE"); err != nil {
			t.Fatal(err)
		}
		checkSQLitePlans(t, s, "after ANALYZE")
	})
	t.Run("sqlite migrated before lease_idx", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "queue.db")
		s := openSQLite(t, Config{Create: true, Path: path})
		fillQueue(t, s, 10_000)
		if _, err := s.db.exec(context.Background(), "DROP INDEX "+s.tag+"_lease_idx"); err != nil {
			t.Fatal(err)
		}
		s.Close()
		s = openSQLite(t, Config{Path: path})
		defer s.Close()
		st, _ := s.stmts()
		plan := sqlitePlan(t, s, st.next, "plan-agent", s.cfg.Pool, s.cfg.SeedTimeout.Milliseconds(), s.cfg.Grace.Milliseconds())
		if !strings.Contains(plan, "USING INDEX "+s.tag+"_queue_idx (status=?)") || strings.Contains(plan, "SCAN "+s.tag+"\n") {
			t.Errorf("without lease_idx, next does not find the claims through queue_idx:\n%s", plan)
		}
	})
	t.Run("postgres", func(t *testing.T) {
		s := openPG(t, Config{Create: true})
		defer s.Close()
		fillQueue(t, s, n)
		// A trail as a month of work leaves it: a row per task, spread
		// over 30 days, so that the planner weighs a task's history and
		// the last hour's trail on what a real table holds.
		for _, q := range []string{
			fmt.Sprintf(`INSERT INTO claimdeck_audit (tbl, task_id, at, actor, action)
				SELECT %s, id, now() - (row_number() OVER ()) * interval '26 seconds', 'agent', 'claim' FROM %s`, pgString(s.tag), s.table),
			"ANALYZE " + s.table, "ANALYZE claimdeck_audit",
		} {
			if _, err := s.db.exec(context.Background(), q); err != nil {
				t.Fatalf("%v\n%s", err, q)
			}
		}
		checkPGPlans(t, s)
	})
}

// sqliteFullScan is a plan line that reads a whole table: a SCAN of a
// table (the tasks table, its alias sub, the audit trail) without an index.
var sqliteFullScan = regexp.MustCompile(`^SCAN (\S+)$`)

func checkSQLitePlans(t *testing.T, s *Store, when string) {
	ctes := map[string]bool{"queued": true, "dead": true, "dead_seed": true, "candidates": true, "first": true}
	for _, a := range agentStatements(t, s, "bench-5", "bench-100", "bench-7") {
		lines := sqlitePlanLines(t, s, a.sql, a.args...)
		var plan strings.Builder
		for _, l := range lines {
			plan.WriteString(l.detail + "\n")
		}
		fail := func(format string, args ...any) {
			t.Errorf("%s (%s), %s: %s; the plan:\n%s", a.call, when, a.what, fmt.Sprintf(format, args...), plan.String())
		}
		for _, l := range lines {
			if m := sqliteFullScan.FindStringSubmatch(l.detail); m != nil && !ctes[m[1]] {
				fail("a scan of all of %s", m[1])
			}
			if !strings.HasPrefix(l.detail, "USE TEMP B-TREE") {
				continue
			}
			// A sort is of what its siblings read: the candidates of a pick,
			// the dead claims in a range of lease ends, or the rows one
			// equality on a task's own key finds.
			bounded := false
			for _, sib := range lines {
				if sib.parent == l.parent && (sib.detail == "SCAN candidates" || strings.Contains(sib.detail, "(parent_id=?)") ||
					strings.Contains(sib.detail, "lease_idx (<expr><?)")) {
					bounded = true
				}
			}
			if !bounded {
				fail("%s over more than one task's rows", l.detail)
			}
		}
		for _, idx := range a.uses {
			name := s.tag + "_" + idx
			switch {
			case idx == "pkey":
				name = "sqlite_autoindex_" + s.tag + "_1"
			case strings.HasPrefix(idx, "claimdeck_"):
				name = idx
			}
			if !strings.Contains(plan.String(), "INDEX "+name+" ") && !strings.HasSuffix(strings.TrimSpace(plan.String()), "INDEX "+name) &&
				!strings.Contains(plan.String(), "INDEX "+name+"\n") {
				fail("%s is not used", name)
			}
		}
	}
}

// pgNode is a node of EXPLAIN (FORMAT JSON).
type pgNode struct {
	Type      string   `json:"Node Type"`
	Relation  string   `json:"Relation Name"`
	Index     string   `json:"Index Name"`
	IndexCond string   `json:"Index Cond"`
	Plans     []pgNode `json:"Plans"`
}

func (n pgNode) walk(fn func(n pgNode)) {
	fn(n)
	for _, c := range n.Plans {
		c.walk(fn)
	}
}

func checkPGPlans(t *testing.T, s *Store) {
	ctx := context.Background()
	table := s.plainTable
	for _, a := range agentStatements(t, s, "bench-5", "bench-100", "bench-7") {
		var raw string
		if err := s.db.queryRow(ctx, "EXPLAIN (FORMAT JSON) "+a.sql, a.args...).Scan(&raw); err != nil {
			t.Fatalf("%s, %s: %v", a.call, a.what, err)
		}
		var plans []struct{ Plan pgNode }
		if err := json.Unmarshal([]byte(raw), &plans); err != nil || len(plans) != 1 {
			t.Fatalf("%s, %s: %v\n%s", a.call, a.what, err, raw)
		}
		root := plans[0].Plan
		var text strings.Builder
		s.db.tx(ctx, func(q querier) error { // the plan as a person reads it, for a failure
			rows, err := q.query(ctx, "EXPLAIN "+a.sql, a.args...)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var l string
				_ = rows.Scan(&l)
				text.WriteString(l + "\n")
			}
			return nil
		})
		fail := func(format string, args ...any) {
			t.Errorf("%s, %s: %s; the plan:\n%s", a.call, a.what, fmt.Sprintf(format, args...), text.String())
		}
		var used []string
		root.walk(func(n pgNode) {
			if n.Index != "" {
				used = append(used, n.Index)
			}
			if strings.HasPrefix(n.Type, "Seq Scan") || n.Type == "Bitmap Heap Scan" && n.Relation == table {
				fail("%s of %s", n.Type, n.Relation)
			}
			if n.Type != "Sort" {
				return
			}
			// A sort is of the candidates of a pick, of the dead claims in a
			// range of lease ends, of the rows one equality on a task's own
			// key finds, or of the trail's rows in a range of times (a
			// bitmap scan of claimdeck_audit_at_idx, which the planner
			// picks over the index's order on some statistics).
			inTimeRange := false
			n.walk(func(c pgNode) {
				inTimeRange = inTimeRange || c.Index == "claimdeck_audit_at_idx" && strings.Contains(c.IndexCond, "at >=")
			})
			n.walk(func(c pgNode) {
				if c.Relation != "" && !strings.Contains(c.IndexCond, "parent_id =") && !strings.Contains(c.IndexCond, "task_id =") &&
					!strings.HasSuffix(c.Index, "lease_idx") && !(inTimeRange && c.Relation == "claimdeck_audit") {
					fail("a sort of %s's rows found by %s %s", c.Relation, c.Type, c.IndexCond)
				}
			})
		})
		for _, idx := range a.uses {
			name := table + "_" + idx
			if strings.HasPrefix(idx, "claimdeck_") {
				name = idx
			}
			if !slices.Contains(used, name) {
				fail("%s is not used (%v)", name, used)
			}
		}
	}
}

// planLine is a line of EXPLAIN QUERY PLAN: what it does, under which.
type planLine struct {
	parent int
	detail string
}

// sqlitePlanLines is EXPLAIN QUERY PLAN of sql.
func sqlitePlanLines(t *testing.T, s *Store, sql string, args ...any) []planLine {
	t.Helper()
	rows, err := s.db.query(context.Background(), "EXPLAIN QUERY PLAN "+sql, args...)
	if err != nil {
		t.Fatalf("%v\nin: %s", err, sql)
	}
	defer rows.Close()
	var lines []planLine
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, planLine{parent, detail})
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// sqlitePlan is EXPLAIN QUERY PLAN of sql, a line a step.
func sqlitePlan(t *testing.T, s *Store, sql string, args ...any) string {
	var b strings.Builder
	for _, l := range sqlitePlanLines(t, s, sql, args...) {
		b.WriteString(l.detail + "\n")
	}
	return b.String()
}
