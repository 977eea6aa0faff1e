package sqlstore

import (
	"fmt"
	"strings"

	"github.com/claimdeck/claimdeck/model"
)

// statements are the SQL texts of one store, rendered once per dialect,
// table and set of columns. Every value is a parameter; only the validated
// table name and fixed fragments are spliced in.
type statements struct {
	cols       string
	get        string
	full       string
	changed    string
	tombstones string
	now        string
	// stamped: the table's rows carry the transaction that last wrote them
	// (stampColumn), and mark reads the poll's clock and which transactions
	// its snapshot does not see: those from xmax on and those in progress.
	// changed then takes both, and a time for rows without a stamp.
	stamped    bool
	mark       string
	history    string
	trailSince string
	insert     string
	next       string
	claim      string
	claimNext  string
	pickNext   string
	claimNote  string
	heartbeat  string
	finish     string
	finishNote string
	agentHand  string
	lockRow    string
	takeover   string
	release    string
	cancel     string
	handoff    string
	audit      string
	openSubs   string
	live       string
	first      string
	archived   string
	archive    string
	subtasks   string
}

// finalStatuses are the statuses stateOfStatus reads as final, as an SQL
// list: the partial indexes and every query over history share this text.
const finalStatuses = "('completed', 'failed', 'canceled', 'cancelled')"

// liveStatus is the predicate of the partial index over live rows: a
// query uses that index only when it repeats this text. (NULL is neither,
// and is found through the indexes that lead with status.)
const liveStatus = "status NOT IN " + finalStatuses

// clocked is the store's dialect with its time read from Config.Now when
// the store has one: every statement that writes or judges a time uses it.
func (s *Store) clocked() dialect {
	d := s.d
	if s.clock != "" {
		d.now = "claimdeck_clock('" + s.clock + "')" // a uuid of ours, not input
	}
	return d
}

func (s *Store) statements(have map[string]bool) statements {
	d, t := s.clocked(), s.table
	if d.name == sqlite.name && !have[" "+strings.ToLower(strings.ReplaceAll(s.plainTable, ".", "_"))+"_lease_idx"] {
		// Migrated before lease_idx: told that most rows are claimed,
		// SQLite would scan the table for a dead lease instead of finding
		// the claims through queue_idx.
		d.held = "status = 'in_progress'"
	}
	cols := selectList(d, have)
	st := statements{
		cols:       cols,
		get:        fmt.Sprintf("SELECT %s FROM %s WHERE id = $1", cols, t),
		full:       fmt.Sprintf("SELECT %s FROM %s", cols, t),
		changed:    fmt.Sprintf("SELECT %s FROM %s WHERE updated_at >= $1", cols, t),
		tombstones: "SELECT task_id FROM claimdeck_tombstones WHERE tbl = $1 AND deleted_at >= $2",
		now:        "SELECT " + d.now,
		history:    "SELECT at, actor, action, reason, detail, door, result FROM claimdeck_audit WHERE tbl = $1 AND task_id = $2 ORDER BY id",
		// The table's trail from a time on, oldest first: one range of
		// claimdeck_audit_at_idx, whatever the trail's length before it.
		trailSince: "SELECT task_id, at, actor, action, reason, detail, door, result FROM claimdeck_audit WHERE tbl = $1 AND at >= $2 ORDER BY at, id LIMIT $3",
		audit: fmt.Sprintf(`INSERT INTO claimdeck_audit (tbl, task_id, at, actor, action, reason, detail, before, after, door, result)
			VALUES ($1, $2, %s, $3, $4, $5, $6, $7, $8, $9, $10)`, d.now),
	}
	if d.name == postgres.name && have[stampColumn] {
		st.stamped = true
		st.mark = "SELECT now(), txid_snapshot_xmax(s), ARRAY(SELECT txid_snapshot_xip(s)) FROM txid_current_snapshot() s"
		// One scan over three index ranges: a UNION ALL of three took
		// twice as long, most of it planning. Poll runs it on the plan
		// made without the values (generic), once per connection, since
		// planning it anew at every poll (~0.2 ms) was most of a poll's
		// server time. So each branch is a range with both ends given
		// (the in-progress ones from $4, their least): the planner then
		// estimates a short range and scans the indexes whatever the
		// table's statistics say, where xid = ANY($2) alone, on a table
		// filled in one transaction, is estimated at every row.
		st.changed = fmt.Sprintf(`SELECT %[1]s FROM %[2]s WHERE (%[3]s >= $1 AND %[3]s <= 9223372036854775807)
			OR (%[3]s >= $4 AND %[3]s < $1 AND %[3]s = ANY($2))
			OR (%[3]s IS NULL AND updated_at >= $3 AND updated_at <= 'infinity')`,
			cols, t, stampColumn)
	}
	if !have["version"] {
		return st // unmigrated: read-only until Migrate
	}
	now := d.now
	bump := "version = version + 1, updated_at = " + now
	clearLock := "lock_token = NULL, lease_expires_at = NULL, heartbeat_at = NULL, holder_kind = NULL, run_id = NULL, node = NULL"
	clearReservation := "reserved_for = NULL, reserved_until = NULL, reserved_by = NULL, handoff_reason = NULL, handoff_priority = NULL"
	order := "ORDER BY " + pullOrder(d)

	// Parameters of a claim: $1 agent, $2 run, $3 node, $4 token, $5 lease
	// ms, $6 pool, $7 seed lease ms, $8 grace ms, $9 audit tag, $10 the
	// door (the trail's), then $11 id (claim) or nothing (claim-next).
	claimSet := fmt.Sprintf(`status = 'in_progress', assigned_worker = $1, started_at = %[1]s, lock_token = $4,
		lease_expires_at = %[2]s, heartbeat_at = %[1]s, holder_kind = 'AGENT', run_id = $2, node = $3,
		%[3]s, reason = NULL, unblock_action = NULL, next_check_at = NULL, escalation = NULL, review_by = NULL, %[4]s`,
		now, d.plusMillis(now, "$5"), clearReservation, bump)
	claimable := fmt.Sprintf("(%s OR %s)", eligible(d, "$1", "$6"), staleLease(d, "$7", "$8"))
	// A claim's trail entry is model.ClaimEvent's: a claimable row still in
	// progress is a rescue, and its dead holder the row's worker before it;
	// the detail keeps the run ($2): "from A4; run r-9", "run r-9".
	claimNote := func(idExpr, worker, status, from string) string {
		return fmt.Sprintf(`INSERT INTO claimdeck_audit (tbl, task_id, at, actor, action, door, detail)
		SELECT $9, %[1]s, %[2]s, $1, CASE WHEN %[3]s = 'in_progress' THEN '%[4]s' ELSE '%[5]s' END, CAST($10 AS TEXT),
			CASE WHEN %[3]s = 'in_progress' THEN 'from ' || %[6]s || COALESCE('; run ' || CAST($2 AS TEXT), '') ELSE 'run ' || CAST($2 AS TEXT) END FROM %[7]s`,
			idExpr, now, status, model.ActionRescue, model.EventClaim, worker, from)
	}

	st.insert = fmt.Sprintf(`INSERT INTO %s (id, title, description, priority, task_type, status, assigned_worker, created_at, class, parent_id, version, updated_at)
		VALUES ($1, $2, $3, $4, $5, $9, $6, %s, $7, $8, 0, %s) RETURNING %s`, t, now, now, cols)
	// Live work and recent history ($1, the horizon): each branch walks an
	// index that holds no old history, so a year of it costs nothing.
	st.live = fmt.Sprintf(`SELECT %[1]s FROM %[2]s WHERE %[3]s
		UNION ALL SELECT %[1]s FROM %[2]s WHERE status IS NULL
		UNION ALL SELECT %[1]s FROM %[2]s WHERE status IN %[4]s AND updated_at >= $1`, cols, t, liveStatus, finalStatuses)
	// The first screen of the Queue, from the pull-order index ($1 rows).
	st.first = fmt.Sprintf("SELECT %s FROM %s WHERE %s %s LIMIT $1", cols, t, d.pending, order)
	st.archived = fmt.Sprintf("SELECT count(*) FROM %s WHERE status IN %s AND updated_at < $1", t, finalStatuses)
	// $1 horizon, $2 status ('' for any final one), $3 LIKE pattern, $4 limit.
	st.archive = fmt.Sprintf(`SELECT %[1]s FROM %[2]s WHERE status IN %[3]s AND updated_at < $1
		AND ($2 = '' OR status = $2 OR ($2 = 'canceled' AND status = 'cancelled'))
		AND ($3 = '' OR lower(%[4]s) LIKE $3 ESCAPE '\' OR lower(title) LIKE $3 ESCAPE '\')
		ORDER BY updated_at DESC, %[5]s LIMIT $4`, cols, t, finalStatuses, d.text("id"), idOrder(d))
	openSub := fmt.Sprintf("SELECT 1 FROM %s sub WHERE sub.parent_id = %%s AND sub.status NOT IN %s", t, finalStatuses)
	st.openSubs = "SELECT count(*) FROM (" + fmt.Sprintf(openSub, "$1") + ") open_subtasks"
	st.subtasks = fmt.Sprintf("SELECT %s FROM %s WHERE parent_id = $1 ORDER BY created_at, id", cols, t)
	// next shows what claim-next would take, by the same pick: each kind of
	// candidate from its own index, the better of the two.
	st.next = fmt.Sprintf("WITH %s SELECT %s FROM %s WHERE id = (SELECT cand FROM first)", pickNext(d, t, "$1", "$2", "$3", "$4", ""), cols, t)
	byID := fmt.Sprintf("id = $11 AND %s", claimable)
	if d.name == postgres.name {
		// One statement: lock the row, note the claim, claim. SKIP LOCKED
		// lets concurrent claim-next calls pass over each other's row
		// instead of queueing behind it; the queued and the rescuable
		// candidates are picked apart so that each walks its own index.
		claimFrom := func(from, lock string) string {
			return fmt.Sprintf(`WITH %s c AS (SELECT id AS claim_id, status AS was_status, assigned_worker AS was_worker FROM %s %s),
				note AS (%s)
				UPDATE %s SET %s FROM c WHERE id = c.claim_id RETURNING %s`,
				from, t, lock, claimNote("claim_id::text", "was_worker", "was_status", "c"), t, claimSet, cols)
		}
		st.claim = claimFrom("", "WHERE "+byID+" FOR UPDATE")
		st.claimNext = claimFrom(pickNext(d, t, "$1", "$6", "$7", "$8", " FOR UPDATE SKIP LOCKED")+",", "WHERE id = (SELECT cand FROM first)")
	} else {
		// SQLite runs one writer at a time: in one transaction the pick
		// chooses the row once, and the note and the claim write it by id.
		st.pickNext = "WITH " + pickNext(d, t, "$1", "$6", "$7", "$8", "") + " SELECT cand FROM first"
		st.claimNote = claimNote(d.text("id"), "assigned_worker", "status", t) + " WHERE " + byID
		st.claim = fmt.Sprintf(`UPDATE %s SET %s WHERE %s RETURNING %s`, t, claimSet, byID, cols)
	}
	// model.TokenCurrent: the token names the claim and its lease still runs.
	holder := fmt.Sprintf("id = $1 AND lock_token = $2 AND status = 'in_progress' AND (holder_kind = 'HUMAN' OR %s > %s)",
		d.ts("lease_expires_at"), d.ts(now))
	st.heartbeat = fmt.Sprintf(`UPDATE %s SET lease_expires_at = CASE WHEN holder_kind = 'HUMAN' THEN NULL ELSE %s END,
		heartbeat_at = %s, escalation = NULL, %s WHERE %s RETURNING %s`, t, d.plusMillis(now, "$3"), now, bump, holder, cols)
	// $3 status, $4 reason, $5 unblock action, $6 next check, $7 artifacts, $8 final?,
	// $9 the task id as text when completing (sub-tasks must be closed), else NULL,
	// $10 audit tag, $11 the trail's action (model.FinishStep), $12 and $13
	// the caller as the trail names it (model.TokenWriter: the writer, or,
	// when $13 is 1, the holder — the row's worker — followed by $12), $14
	// the door the trail records.
	finishable := fmt.Sprintf("%s AND (CAST($9 AS TEXT) IS NULL OR NOT EXISTS (%s))", holder, fmt.Sprintf(openSub, "CAST($9 AS TEXT)"))
	writer := func(worker string) string {
		return fmt.Sprintf("CASE WHEN $13 = 1 THEN COALESCE(%[1]s, '') || CAST($12 AS TEXT) ELSE COALESCE(NULLIF(CAST($12 AS TEXT), ''), %[1]s, '') END", worker)
	}
	// review_by is the fact the self-approval rule reads: who sent the
	// task to Review, stored by the write that moved it there.
	finishSet := func(worker string) string {
		return fmt.Sprintf(`status = $3, reason = $4, unblock_action = $5, next_check_at = $6,
		artifacts = COALESCE($7, artifacts), completed_at = CASE WHEN $8 = 1 THEN %s ELSE completed_at END,
		review_by = CASE WHEN $3 = '%s' THEN %s END, %s, %s`,
			now, statusReview, writer(worker), clearLock, bump)
	}
	// The holder who parks or ends the claim is the row's worker before it.
	finishNote := func(idExpr, worker, from string) string {
		return fmt.Sprintf(`INSERT INTO claimdeck_audit (tbl, task_id, at, actor, action, reason, door)
		SELECT $10, %s, %s, %s, $11, $4, CAST($14 AS TEXT) FROM %s`, idExpr, now, writer(worker), from)
	}
	if d.name == postgres.name {
		// As the claim: lock the row, note the step, write, in one statement.
		st.finish = fmt.Sprintf(`WITH c AS (SELECT id AS claim_id, assigned_worker AS was_worker FROM %[1]s WHERE %[2]s FOR UPDATE),
			note AS (%[3]s)
			UPDATE %[1]s SET %[4]s FROM c WHERE id = c.claim_id RETURNING %[5]s`,
			t, finishable, finishNote("claim_id::text", "was_worker", "c"), finishSet("c.was_worker"), cols)
	} else {
		st.finishNote = finishNote(d.text("id"), "assigned_worker", t) + " WHERE " + finishable
		st.finish = fmt.Sprintf("UPDATE %s SET %s WHERE %s RETURNING %s", t, finishSet("assigned_worker"), finishable, cols)
	}
	st.agentHand = fmt.Sprintf("UPDATE %s SET %s WHERE %s RETURNING %s", t, handoffSet(d, 3, clearLock, bump), holder, cols)
	st.lockRow = fmt.Sprintf("SELECT %s FROM %s WHERE id = $1%s", cols, t, d.forUpdate)
	st.takeover = fmt.Sprintf(`UPDATE %[1]s SET status = 'in_progress', assigned_worker = $2, started_at = %[2]s, lock_token = $3,
		lease_expires_at = NULL, heartbeat_at = %[2]s, holder_kind = 'HUMAN', run_id = NULL, node = NULL, %[3]s, %[4]s
		WHERE id = $1 RETURNING %[5]s`, t, now, clearReservation, bump, cols)
	st.release = fmt.Sprintf(`UPDATE %s SET status = 'pending', assigned_worker = $2, started_at = NULL, %s, %s, %s
		WHERE id = $1 RETURNING %s`, t, clearLock, clearReservation, bump, cols)
	st.cancel = fmt.Sprintf(`UPDATE %s SET status = 'canceled', reason = $2, completed_at = %s, %s, %s, %s
		WHERE id = $1 RETURNING %s`, t, now, clearLock, clearReservation, bump, cols)
	st.handoff = fmt.Sprintf("UPDATE %s SET %s WHERE id = $1 RETURNING %s", t, handoffSet(d, 2, clearLock, bump), cols)
	return st
}

// pickNext is the one choice of next and claim-next (model.Next in SQL), as
// common table expressions ending in "first", whose cand is the id of the
// first claimable task in pull order, if any: the best eligible row, a walk
// of the pull-order index over pending rows (pull_idx) that stops at its
// first match, and the best claim whose agent's lease is dead, from the
// range of dead leases in lease_idx and of dead seed claims in
// seed_lease_idx, which hold no live claim. An OR of the conditions could
// use no index: it scans and sorts the whole table.
// The parameters name the agent, the pool, the seed's lease and the grace
// in milliseconds; lock (claim-next on PostgreSQL) is appended to each
// candidate's SELECT.
func pickNext(d dialect, t, agent, pool, seedMs, graceMs, lock string) string {
	order := "ORDER BY " + pullOrder(d)
	cand := func(name, where string) string {
		return fmt.Sprintf("%s AS (SELECT id AS cand, %s FROM %s WHERE %s %s LIMIT 1%s)", name, sortKeys(d), t, where, order, lock)
	}
	return cand("queued", eligible(d, agent, pool)) + ", " + cand("dead", deadLease(d, graceMs)) + ", " + cand("dead_seed", deadSeedLease(d, seedMs, graceMs)) +
		", first AS (SELECT cand FROM (SELECT * FROM queued UNION ALL SELECT * FROM dead UNION ALL SELECT * FROM dead_seed) candidates " + keyOrder + " LIMIT 1)"
}

// handoffSet releases a task and reserves it. Its six parameters, from $first
// on: target worker, reserved for, reservation ms, by, reason, priority.
func handoffSet(d dialect, first int, clearLock, bump string) string {
	p := func(i int) string { return fmt.Sprintf("$%d", first+i) }
	return fmt.Sprintf(`status = 'pending', assigned_worker = %s, started_at = NULL, %s,
		reserved_for = %s, reserved_until = %s, reserved_by = %s, handoff_reason = %s, handoff_priority = %s, %s`,
		p(0), clearLock, p(1), d.plusMillis(d.now, p(2)), p(3), p(4), p(5), bump)
}

// eligible is model.EligibleFor in SQL: seed 003's pending rows in the pool,
// or reserved for this agent, or whose reservation has run out.
func eligible(d dialect, agent, pool string) string {
	now := d.ts(d.now)
	return fmt.Sprintf(`(%[5]s AND COALESCE(holder_kind, '') <> 'HUMAN' AND (
		(reserved_for IS NULL AND (COALESCE(assigned_worker, '') IN ('', %[2]s) OR lower(assigned_worker) = lower(%[1]s)))
		OR reserved_for = 'ANY' OR lower(reserved_for) = lower(%[1]s) OR %[3]s <= %[4]s))`,
		agent, pool, d.ts("reserved_until"), now, d.pending)
}

// staleLease is model.Rescuable in SQL: an agent's lease that ended at
// least graceMs ago. Rows claimed by the seed's SQL have no lease column;
// their lease is started_at + seedMs.
func staleLease(d dialect, seedMs, graceMs string) string {
	return "(" + deadLease(d, graceMs) + " OR " + deadSeedLease(d, seedMs, graceMs) + ")"
}

// deadLease is staleLease for a claim with a lease: one that ended graceMs
// ago or more, a range of lease_idx (an index on the same expression).
func deadLease(d dialect, graceMs string) string {
	return fmt.Sprintf("(%s AND COALESCE(holder_kind, 'AGENT') = 'AGENT' AND %s <= %s)",
		d.held, d.ts("lease_expires_at"), d.ts(d.minusMillis(d.now, graceMs)))
}

// deadSeedLease is staleLease for a claim the seed's SQL made, without a
// lease: started seedMs + graceMs ago or more, a range of seed_lease_idx.
func deadSeedLease(d dialect, seedMs, graceMs string) string {
	return fmt.Sprintf("(%s AND lease_expires_at IS NULL AND COALESCE(holder_kind, 'AGENT') = 'AGENT' AND %s <= %s)",
		d.held, d.ts("started_at"), d.ts(d.minusMillis(d.minusMillis(d.now, seedMs), graceMs)))
}

// pullOrder is model.PullCompare in SQL; the migration indexes exactly
// these expressions.
func pullOrder(d dialect) string {
	return fmt.Sprintf("(%s), (%s) DESC, updated_at, (%s)", classRank, priorityRank(d), idOrder(d))
}

// sortKeys selects pullOrder's keys, so that the best queued and the best
// rescuable candidate can be compared in keyOrder.
func sortKeys(d dialect) string {
	return fmt.Sprintf("(%s) AS k1, (%s) AS k2, updated_at AS k3, (%s) AS k4", classRank, priorityRank(d), idOrder(d))
}

// keyOrder is pullOrder over sortKeys.
const keyOrder = "ORDER BY k1, k2 DESC, k3, k4"

// classRank mirrors model.Class.Rank over model.ParseClass.
const classRank = `CASE upper(replace(trim(COALESCE(class, '')), '-', '_'))
	WHEN 'EXPEDITE' THEN 1 WHEN 'FIXED_DATE' THEN 2 WHEN 'FIXEDDATE' THEN 2 WHEN 'INTANGIBLE' THEN 4 ELSE 3 END`

// priorityRank mirrors rowPriority.
func priorityRank(d dialect) string {
	p := "lower(trim(COALESCE(" + d.text("priority") + ", '')))"
	return fmt.Sprintf(`CASE %[1]s WHEN 'critical' THEN 4 WHEN 'high' THEN 3 WHEN 'urgent' THEN 3
		WHEN 'medium' THEN 2 WHEN 'normal' THEN 2 WHEN 'low' THEN 1
		ELSE CASE WHEN %[2]s THEN %[3]s ELSE 0 END END`, p, d.digits(p), d.toInt(p))
}

// idOrder sorts ids bytewise, as Go compares strings.
func idOrder(d dialect) string {
	if d.name == postgres.name {
		return `id::text COLLATE "C"`
	}
	return "CAST(id AS TEXT)"
}
