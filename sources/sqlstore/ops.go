package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

func (s *Store) scanOne(sc rowScanner) (*model.Task, error) {
	var r row
	if err := sc.Scan(r.dest()...); err != nil {
		return nil, err
	}
	return r.task(s.cfg.Name, s.cfg.Pool, s.cfg.SeedTimeout), nil
}

func (s *Store) scanAll(rows rowsIter, err error) ([]*model.Task, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*model.Task
	// One row and one destination list for every row: each Scan assigns
	// every column, and task copies what it keeps.
	var r row
	dest := r.dest()
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		if len(out) == cap(out) {
			// Doubled rather than append's quarter at a time: a first
			// read of a million rows leaves its own size in garbage, not
			// four times it, and the dashboard's peak follows the garbage.
			out = slices.Grow(out, max(len(out), 256))
		}
		out = append(out, r.task(s.cfg.Name, s.cfg.Pool, s.cfg.SeedTimeout))
	}
	return out, rows.Err()
}

// cursor is the poll watermark on the database clock; on stamped tables
// the transactions the poll's snapshot did not see (XMax on, and XIP then
// in progress); and when the last full poll ran (on ours).
type cursor struct {
	Mark time.Time `json:"m"`
	XMax int64     `json:"x,omitempty"`
	XIP  []int64   `json:"i,omitempty"`
	Full time.Time `json:"f"`
}

// Poll reads every task on an empty cursor; afterwards only the rows whose
// updated_at passed the watermark (an index range scan, so an idle poll
// costs the same on any table size) and the ids deleted since. On a
// stamped PostgreSQL table the changed rows are those of the transactions
// the last poll's snapshot did not see, so a busy table's poll does not read
// the overlap's rows again. Every
// ReconcileEvery it reads everything again. With a horizon a full read
// takes the live rows and the recently finished ones from partial indexes,
// and counts the rest.
func (s *Store) Poll(ctx context.Context, since sources.Cursor, opt ...sources.PollOption) (sources.Delta, error) {
	if err := s.readGuard(ctx, "poll", "", false); err != nil {
		return sources.Delta{}, err
	}
	st, migrated := s.stmts()
	if n := sources.FirstPage(opt); since == "" && migrated && n > 0 {
		tasks, err := s.scanAll(s.db.query(ctx, st.first, n))
		if err != nil {
			return sources.Delta{}, s.classify("poll", "", err)
		}
		return sources.Delta{Partial: true, Tasks: tasks}, nil
	}
	var c cursor
	if since != "" {
		if err := json.Unmarshal([]byte(since), &c); err != nil {
			return sources.Delta{}, model.Errorf(model.CodeAPIError, "poll", "", "bad cursor: %v", err)
		}
	}
	full := since == "" || !migrated || time.Since(c.Full) >= s.cfg.ReconcileEvery || st.stamped && c.XMax == 0
	d := sources.Delta{Full: full}
	var dbNow nullTime
	var xmax int64
	var xip []int64
	var err error
	if st.stamped && !full {
		d.Tasks, d.Removed, err = s.pollStamped(ctx, st, c, &dbNow, &xmax, &xip)
		if err != nil {
			return sources.Delta{}, s.classify("poll", "", err)
		}
		return s.polled(d, c, dbNow, xmax, xip), nil
	}
	if st.stamped {
		err = s.db.queryRow(ctx, st.mark).Scan(&dbNow, &xmax, &xip)
	} else {
		err = s.db.queryRow(ctx, st.now).Scan(&dbNow)
	}
	if err != nil {
		return sources.Delta{}, s.classify("poll", "", err)
	}
	horizon := sources.Horizon(opt)
	switch {
	case full && migrated && !horizon.IsZero():
		h := s.d.timeArg(horizon)
		d.Tasks, err = s.scanAll(s.db.query(ctx, st.live, h))
		if err == nil && !sources.Uncounted(opt) {
			err = s.db.queryRow(ctx, st.archived, h).Scan(&d.Archived)
		}
		c.Full = time.Now()
	case full:
		d.Tasks, err = s.scanAll(s.db.query(ctx, st.full))
		c.Full = time.Now()
	default:
		mark := s.d.timeArg(c.Mark)
		d.Tasks, err = s.scanAll(s.db.query(ctx, st.changed, mark))
		if err == nil {
			d.Removed, err = removedIDs(s.db.query(ctx, st.tombstones, s.tag, mark))
		}
	}
	if err != nil {
		return sources.Delta{}, s.classify("poll", "", err)
	}
	return s.polled(d, c, dbNow, xmax, xip), nil
}

// polled is d with the cursor of a poll whose mark read dbNow, xmax and
// xip.
func (s *Store) polled(d sources.Delta, c cursor, dbNow nullTime, xmax int64, xip []int64) sources.Delta {
	c.Mark, c.XMax, c.XIP = dbNow.t.Add(-s.cfg.Overlap), xmax, xip
	b, _ := json.Marshal(c)
	d.Cursor = sources.Cursor(b)
	return d
}

// pollStamped reads what changed on a stamped table since the poll of c in
// one round trip: the statements go as one pipeline, in one transaction,
// whose first step has the rest use their generic plans (made once per
// connection) instead of planning the changed rows' statement at every
// poll. The mark still comes before the changed rows, as in Poll.
func (s *Store) pollStamped(ctx context.Context, st statements, c cursor, dbNow *nullTime, xmax *int64, xip *[]int64) ([]*model.Task, []string, error) {
	mark := s.d.timeArg(c.Mark)
	b := &pgx.Batch{}
	b.Queue(genericPlans)
	b.Queue(st.mark)
	oldest := c.XMax // of the transactions in progress at the last mark
	for _, x := range c.XIP {
		oldest = min(oldest, x)
	}
	b.Queue(st.changed, c.XMax, c.XIP, mark, oldest)
	b.Queue(st.tombstones, s.tag, mark)
	br := s.pgPool.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return nil, nil, err
	}
	if err := br.QueryRow().Scan(dbNow, xmax, xip); err != nil {
		return nil, nil, err
	}
	tasks, err := s.scanAll(br.Query())
	if err != nil {
		return nil, nil, err
	}
	removed, err := removedIDs(br.Query())
	if err != nil {
		return nil, nil, err
	}
	return tasks, removed, br.Close()
}

// genericPlans has the statements after it in its transaction run on
// their generic plans; the setting ends with the transaction. PostgreSQL
// 11 has no such setting, and plans each time as before.
const genericPlans = "SELECT set_config('plan_cache_mode', 'force_generic_plan', true) WHERE current_setting('server_version_num')::int >= 120000"

// Archive reads the history a windowed poll leaves out, newest first,
// from the partial index over finished rows. An unmigrated table has no
// history apart: its polls return every row.
func (s *Store) Archive(ctx context.Context, q sources.ArchiveQuery) ([]*model.Task, error) {
	if err := q.Check(); err != nil {
		return nil, err
	}
	if err := s.readGuard(ctx, "archive", "", false); err != nil {
		return nil, err
	}
	st, migrated := s.stmts()
	if !migrated {
		return nil, nil
	}
	status := ""
	if q.State != model.StateUnknown {
		status = statusOfState[q.State]
	}
	pattern := ""
	if q.Text != "" {
		pattern = "%" + likeEscaper.Replace(strings.ToLower(q.Text)) + "%"
	}
	limit := q.Limit
	if limit == 0 {
		limit = sources.DefaultArchiveLimit
	}
	tasks, err := s.scanAll(s.db.query(ctx, st.archive, s.d.timeArg(q.Before), status, pattern, limit))
	if err != nil {
		return nil, s.classify("archive", "", err)
	}
	return tasks, nil
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`)

// removedIDs reads the ids of a tombstones statement.
func removedIDs(rows rowsIter, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// Get reads one task with its audit history.
func (s *Store) Get(ctx context.Context, id string) (*model.Task, error) {
	if err := s.readGuard(ctx, "get", id, false); err != nil {
		return nil, err
	}
	st, migrated := s.stmts()
	var r row
	err := s.db.queryRow(ctx, st.get, id).Scan(r.dest()...)
	var t *model.Task
	if err == nil {
		t = r.task(s.cfg.Name, s.cfg.Pool, s.cfg.SeedTimeout)
		t.EditMore().Carried = r.carried(t)
	}
	if isNoRows(err) {
		return nil, sources.NotFound("get", id)
	}
	if err != nil {
		return nil, s.classify("get", id, err)
	}
	if migrated {
		if t.EditMore().History, err = s.history(ctx, st, id); err != nil {
			return nil, s.classify("get", id, err)
		}
		if err := s.db.queryRow(ctx, st.openSubs, t.ID).Scan(&t.OpenSubtasks); err != nil {
			return nil, s.classify("get", id, err)
		}
		subs, err := s.scanAll(s.db.query(ctx, st.subtasks, t.ID))
		if err != nil {
			return nil, s.classify("get", id, err)
		}
		t.EditMore().Family = &model.Family{}
		for _, sub := range subs {
			t.More().Family.Subtasks = append(t.More().Family.Subtasks, model.SubtaskOf(sub))
		}
	}
	return t, nil
}

func (s *Store) history(ctx context.Context, st statements, id string) ([]model.Event, error) {
	rows, err := s.db.query(ctx, st.history, s.tag, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []model.Event
	for rows.Next() {
		var at nullTime
		var actor, action string
		var reason, detail, door, result *string
		if err := rows.Scan(&at, &actor, &action, &reason, &detail, &door, &result); err != nil {
			return nil, err
		}
		out = append(out, model.Event{At: at.t, Actor: actor, Action: action, Reason: deref(reason), Detail: deref(detail),
			Door: model.Door(deref(door)), Result: deref(result)})
	}
	return out, rows.Err()
}

// TrailSince reads the table's audit trail from since on, oldest first,
// at most limit events (sources.TrailLimit when limit <= 0): one indexed
// range (claimdeck_audit_at_idx), so a count over the last hour costs the
// hour's rows, not the trail's (sources.TrailReader).
func (s *Store) TrailSince(ctx context.Context, since time.Time, limit int) ([]sources.TrailEntry, error) {
	const op = "trail"
	if err := s.readGuard(ctx, op, "", false); err != nil {
		return nil, err
	}
	st, migrated := s.stmts()
	if !migrated {
		return nil, sources.NoTrailRead(s.cfg.Name, fmt.Sprintf("table %s is not migrated (claimdeck migrate --source %s)", s.plainTable, s.cfg.Name))
	}
	if limit <= 0 {
		limit = sources.TrailLimit
	}
	rows, err := s.db.query(ctx, st.trailSince, s.tag, s.d.timeArg(since.UTC()), limit)
	if err != nil {
		return nil, s.classify(op, "", err)
	}
	defer rows.Close()
	var out []sources.TrailEntry
	for rows.Next() {
		var at nullTime
		var task, actor, action string
		var reason, detail, door, result *string
		if err := rows.Scan(&task, &at, &actor, &action, &reason, &detail, &door, &result); err != nil {
			return nil, s.classify(op, "", err)
		}
		out = append(out, sources.TrailEntry{Task: task, Event: model.Event{At: at.t, Actor: actor, Action: action, Reason: deref(reason),
			Detail: deref(detail), Door: model.Door(deref(door)), Result: deref(result)}})
	}
	if err := rows.Err(); err != nil {
		return nil, s.classify(op, "", err)
	}
	return out, nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// nullable passes "" as SQL NULL.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Create inserts a pending task in the pool.
func (s *Store) Create(ctx context.Context, n sources.NewTask) (*model.Task, error) {
	if err := n.Check("create"); err != nil {
		return nil, err
	}
	st, err := s.writable("create", n.ID)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(n.Title) == "" {
		return nil, model.Errorf(model.CodeMisconfigured, "create", n.ID, "a title is required")
	}
	if n.Priority < 0 {
		return nil, model.Errorf(model.CodeMisconfigured, "create", n.ID, "priority %d: seed 003 priorities are not negative", n.Priority)
	}
	id := n.ID
	if id == "" {
		id = uuid.NewString()
	}
	var class any
	if n.Class != 0 && n.Class != model.ClassStandard {
		class = n.Class.String()
	}
	var t *model.Task
	err = s.db.tx(ctx, func(q querier) error {
		if n.Parent != "" {
			parent, err := s.scanOne(q.queryRow(ctx, st.get, n.Parent))
			if isNoRows(err) {
				return model.Errorf(model.CodeMisconfigured, "create", id, "parent task %s does not exist", n.Parent)
			}
			if err != nil {
				return err
			}
			if parent.State.Final() {
				return model.Errorf(model.CodeMisconfigured, "create", id, "parent task %s is already %s", n.Parent, parent.State)
			}
		}
		status := statusPending
		if n.Parked {
			status = statusBacklog
		}
		var err error
		t, err = s.scanOne(q.queryRow(ctx, st.insert, id, n.Title, nullable(n.Description),
			nullable(model.PriorityName(n.Priority)), nil, s.cfg.Pool, class, nullable(n.Parent), status))
		return err
	})
	if err != nil {
		return nil, s.classify("create", id, err)
	}
	return t, nil
}

// Next is seed 002's `next` in one SELECT.
func (s *Store) Next(ctx context.Context, agent string) (*model.Task, error) {
	st, err := s.writable("next", "")
	if err != nil {
		return nil, err
	}
	if err := s.readGuard(ctx, "next", "", false); err != nil {
		return nil, err
	}
	t, err := s.scanOne(s.db.queryRow(ctx, st.next, agent, s.cfg.Pool, s.cfg.SeedTimeout.Milliseconds(), s.cfg.Grace.Milliseconds()))
	if isNoRows(err) {
		return nil, nil
	}
	return t, s.classify("next", "", err)
}

func (s *Store) claimArgs(c sources.ClaimRequest) ([]any, error) {
	if strings.TrimSpace(c.Agent) == "" {
		return nil, model.Errorf(model.CodeMisconfigured, "claim", "", "an agent name is required")
	}
	lease := c.Lease
	if lease <= 0 {
		lease = s.cfg.Lease
	}
	return []any{c.Agent, nullable(c.RunID), nullable(c.Node), uuid.NewString(), lease.Milliseconds(), s.cfg.Pool,
		s.cfg.SeedTimeout.Milliseconds(), s.cfg.Grace.Milliseconds(), s.tag, nullable(string(c.Door))}, nil
}

// Claim is one conditional UPDATE … RETURNING: it succeeds only on a row
// model.Claimable allows, judged on the database clock.
func (s *Store) Claim(ctx context.Context, id string, c sources.ClaimRequest) (*model.Task, error) {
	if err := c.Check("claim", id); err != nil {
		return nil, err
	}
	st, err := s.writable("claim", id)
	if err != nil {
		return nil, err
	}
	args, err := s.claimArgs(c)
	if err != nil {
		return nil, err
	}
	t, err := s.claimWrite(ctx, st, append(args, id))
	if isNoRows(err) {
		return nil, s.refusal(ctx, "claim", id, model.CodeConflict, "someone else holds it, or it is not queued")
	}
	return t, s.classify("claim", id, err)
}

// ClaimNext claims the first claimable task in pull order in one statement.
func (s *Store) ClaimNext(ctx context.Context, c sources.ClaimRequest) (*model.Task, error) {
	if err := c.Check("claim", ""); err != nil {
		return nil, err
	}
	st, err := s.writable("claim", "")
	if err != nil {
		return nil, err
	}
	args, err := s.claimArgs(c)
	if err != nil {
		return nil, err
	}
	t, err := s.claimWrite(ctx, st, args)
	if isNoRows(err) {
		// SQLite's guards are row triggers: a claim of no row met none.
		return nil, s.readGuard(ctx, "claim", "", s.pgPool == nil)
	}
	return t, s.classify("claim", "", err)
}

// claimWrite runs a claim: of the task id when args carry one (the 11th),
// else of the first claimable task. On PostgreSQL one statement notes the
// claim in the audit trail and claims; SQLite, without writing CTEs, picks
// the row, notes and claims in one transaction, which its single writer
// keeps on that row.
func (s *Store) claimWrite(ctx context.Context, st statements, args []any) (*model.Task, error) {
	byID := len(args) == 11
	if st.claimNote == "" {
		stmt := st.claimNext
		if byID {
			stmt = st.claim
		}
		return s.scanOne(s.db.queryRow(ctx, stmt, args...))
	}
	var t *model.Task
	err := s.db.tx(ctx, func(q querier) error {
		if !byID {
			var id any
			if err := q.queryRow(ctx, st.pickNext, args...).Scan(&id); err != nil {
				return err
			}
			args = append(args, id)
		}
		var err error
		t, err = s.notedWrite(ctx, q, st.claimNote, st.claim, args)
		return err
	})
	return t, err
}

// notedWrite notes an agent's step in the audit trail and writes it, in
// the caller's transaction: both statements take the same arguments and
// the same condition, so the note is kept exactly when the write is.
func (s *Store) notedWrite(ctx context.Context, q querier, note, stmt string, args []any) (*model.Task, error) {
	if _, err := q.exec(ctx, note, args...); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	return s.scanOne(q.queryRow(ctx, stmt, args...))
}

// refusal reads the row after a conditional write matched nothing, to tell
// "no such task" from a refusal and to attach the task as it is now.
func (s *Store) refusal(ctx context.Context, op, id string, code model.Code, why string) error {
	if err := s.readGuard(ctx, op, id, true); err != nil {
		return err
	}
	cur, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	e := model.Errorf(code, op, id, "%s (now %s", why, cur.State)
	if cur.Held() {
		e.Msg += ", held by " + cur.Claim().Name
	}
	e.Msg += ")"
	e.Current = cur
	return e
}

// Heartbeat extends the lease of the holder of token.
func (s *Store) Heartbeat(ctx context.Context, id, token string, lease time.Duration) (*model.Task, error) {
	if err := sources.CheckHeartbeat("heartbeat", id, token, lease); err != nil {
		return nil, err
	}
	st, err := s.writable("heartbeat", id)
	if err != nil {
		return nil, err
	}
	if lease <= 0 {
		lease = s.cfg.Lease
	}
	return s.holderWrite(ctx, "heartbeat", id, "", st.heartbeat, id, token, lease.Milliseconds())
}

// holderWrite runs the holder's write keyed on its token (args[1]); with a
// note (SQLite's trail entry for the step) both run in one transaction.
func (s *Store) holderWrite(ctx context.Context, op, id, note, stmt string, args ...any) (*model.Task, error) {
	if args[1] == "" {
		return nil, sources.Lost(op, id)
	}
	var t *model.Task
	var err error
	if note == "" {
		t, err = s.scanOne(s.db.queryRow(ctx, stmt, args...))
	} else {
		err = s.db.tx(ctx, func(q querier) error {
			t, err = s.notedWrite(ctx, q, note, stmt, args)
			return err
		})
	}
	if isNoRows(err) {
		if gerr := s.readGuard(ctx, "write", id, true); gerr != nil {
			return nil, gerr
		}
		if _, gerr := s.Get(ctx, id); gerr != nil {
			return nil, gerr
		}
		return nil, sources.Lost(op, id)
	}
	return t, s.classify(op, id, err)
}

var finalStates = map[model.State]bool{model.StateDone: true, model.StateFailed: true, model.StateCanceled: true}

// finishArgs are the finish statement's arguments, and the id whose
// sub-tasks it checks (nil: none).
func (s *Store) finishArgs(id, token, status string, o sources.Outcome) ([]any, any) {
	var next any
	if !o.NextCheckAt.IsZero() {
		next = s.d.timeArg(o.NextCheckAt)
	}
	final := 0
	if finalStates[o.State] {
		final = 1
	}
	var checkSubs any
	if o.State == model.StateDone {
		checkSubs = id // seed 002: sub-task completion is enforced at done time
	}
	writer, afterHolder := model.TokenWriterParts(o.Writer)
	return []any{id, token, status, nullable(o.Reason), nullable(o.UnblockAction), next, nullable(o.Artifacts), final, checkSubs,
		s.tag, model.FinishStep(o.State), writer, boolInt(afterHolder), nullable(string(o.Door))}, checkSubs
}

// Finish ends or parks the holder's claim, keyed on its token.
func (s *Store) Finish(ctx context.Context, id, token string, o sources.Outcome) (*model.Task, error) {
	if err := o.Check("finish", id, token); err != nil {
		return nil, err
	}
	op := "finish"
	st, err := s.writable(op, id)
	if err != nil {
		return nil, err
	}
	status, ok := statusOfState[o.State]
	if !ok || o.State == model.StateQueued || o.State == model.StateClaimed {
		return nil, model.Errorf(model.CodeMisconfigured, op, id, "%s is not an outcome (want done, blocked, review, canceled or failed)", o.State)
	}
	args, checkSubs := s.finishArgs(id, token, status, o)
	t, err := s.holderWrite(ctx, op, id, st.finishNote, st.finish, args...)
	if model.CodeOf(err) == model.CodeLostLock && checkSubs != nil {
		// Refused either for the token or for open sub-tasks: say which.
		if cur, gerr := s.Get(ctx, id); gerr == nil && cur.Claim().Token == token && cur.OpenSubtasks > 0 {
			e := model.Errorf(model.CodeIncompleteSubtasks, "complete", id, "%d sub-task(s) are still open", cur.OpenSubtasks)
			e.Current = cur
			return nil, e
		}
	}
	return t, err
}

// Handoff: a human's is checked against the version they saw, an agent's
// against its token.
func (s *Store) Handoff(ctx context.Context, id string, h sources.Handoff) (*model.Task, error) {
	if err := h.Check("handoff", id); err != nil {
		return nil, err
	}
	st, err := s.writable("handoff", id)
	if err != nil {
		return nil, err
	}
	if err := sources.CheckTarget(id, h.To); err != nil {
		return nil, err
	}
	to := strings.TrimSpace(h.To)
	worker := to
	if strings.EqualFold(to, model.AnyAgent) {
		to, worker = model.AnyAgent, s.cfg.Pool // seed agents querying the pool find it again
	}
	dur := h.For
	if dur <= 0 {
		dur = sources.DefaultReservation
	}
	args := []any{worker, to, dur.Milliseconds(), nullable(h.Actor), nullable(h.Reason), nullable(h.Priority)}
	if h.Token != "" {
		return s.agentHandoff(ctx, st, id, h, args)
	}
	return s.humanAction(ctx, model.ActionHandoff, id, h.Human, "to "+to, func(q querier) (*model.Task, error) {
		return s.scanOne(q.queryRow(ctx, st.handoff, append([]any{id}, args...)...))
	})
}

func (s *Store) agentHandoff(ctx context.Context, st statements, id string, h sources.Handoff, args []any) (*model.Task, error) {
	var out *model.Task
	err := s.db.tx(ctx, func(q querier) error {
		t, err := s.scanOne(q.queryRow(ctx, st.agentHand, append([]any{id, h.Token}, args...)...))
		if err != nil {
			return err
		}
		out = t
		return s.writeAudit(ctx, q, st, id, model.Event{Actor: h.Actor, Door: h.Door, Action: string(model.ActionHandoff), Reason: h.Reason, Detail: "to " + h.To + " (by the holder)"}, nil, t)
	})
	if isNoRows(err) {
		if gerr := s.readGuard(ctx, "write", id, true); gerr != nil {
			return nil, gerr
		}
		if _, gerr := s.Get(ctx, id); gerr != nil {
			return nil, gerr
		}
		return nil, sources.Lost("handoff", id)
	}
	return out, s.classify("handoff", id, err)
}

// Takeover claims the task as HUMAN:<actor> with a new token and no expiry.
func (s *Store) Takeover(ctx context.Context, id string, h sources.Human) (*model.Task, error) {
	st, err := s.writable("takeover", id)
	if err != nil {
		return nil, err
	}
	return s.humanAction(ctx, model.ActionTakeover, id, h, "", func(q querier) (*model.Task, error) {
		return s.scanOne(q.queryRow(ctx, st.takeover, id, model.HumanPrefix+h.Actor, uuid.NewString()))
	})
}

// ForceRelease returns the task to the pool exactly as seed 003's release
// statement does, and clears the lock.
func (s *Store) ForceRelease(ctx context.Context, id string, h sources.Human) (*model.Task, error) {
	st, err := s.writable("force-release", id)
	if err != nil {
		return nil, err
	}
	return s.humanAction(ctx, model.ActionForceRelease, id, h, "", func(q querier) (*model.Task, error) {
		return s.scanOne(q.queryRow(ctx, st.release, id, s.cfg.Pool))
	})
}

// Cancel ends the task as canceled with the human's reason.
func (s *Store) Cancel(ctx context.Context, id string, h sources.Human) (*model.Task, error) {
	st, err := s.writable("cancel", id)
	if err != nil {
		return nil, err
	}
	return s.humanAction(ctx, model.ActionCancel, id, h, "", func(q querier) (*model.Task, error) {
		return s.scanOne(q.queryRow(ctx, st.cancel, id, h.Reason))
	})
}

// humanAction runs one override in a short transaction: lock the row,
// refuse what sources.CheckHuman refuses, write, audit.
func (s *Store) humanAction(ctx context.Context, action model.Action, id string, h sources.Human, detail string,
	write func(q querier) (*model.Task, error)) (*model.Task, error) {
	op := string(action)
	st, _ := s.stmts()
	var out *model.Task
	err := s.db.tx(ctx, func(q querier) error {
		cur, err := s.scanOne(q.queryRow(ctx, st.lockRow, id))
		if isNoRows(err) {
			return sources.NotFound(op, id)
		}
		if err != nil {
			return err
		}
		if err := sources.CheckHuman(action, cur, h); err != nil {
			return err
		}
		if out, err = write(q); err != nil {
			return err
		}
		return s.writeAudit(ctx, q, st, id, model.Event{Actor: h.Actor, Door: h.Door, Action: op, Reason: h.Reason, Detail: joinDetail(sources.HumanDetail(h, cur), detail)}, cur, out)
	})
	if err != nil {
		if e := model.CurrentOf(err); e != nil {
			_ = s.loadHistory(ctx, st, e)
		}
		return nil, s.classify(op, id, err)
	}
	return out, nil
}

func joinDetail(a, b string) string {
	if b == "" {
		return a
	}
	return a + "; " + b
}

func (s *Store) loadHistory(ctx context.Context, st statements, t *model.Task) error {
	h, err := s.history(ctx, st, t.ID)
	t.EditMore().History = h
	return err
}

func (s *Store) writeAudit(ctx context.Context, q querier, st statements, id string, e model.Event, before, after *model.Task) error {
	b, _ := json.Marshal(model.Brief(before))
	a, _ := json.Marshal(model.Brief(after))
	if before == nil {
		b = nil
	}
	var ab any
	if after != nil {
		ab = string(a)
	}
	result := e.Result
	if result == "" {
		result = model.ResultApplied
	}
	_, err := q.exec(ctx, st.audit, s.tag, id, e.Actor, e.Action, nullable(e.Reason), nullable(e.Detail), nullable(string(b)), ab,
		nullable(string(e.Door)), result)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// Record keeps claimdeck's own entry — a refused attempt — in the audit
// table, the trail every process reads (sources.Trail).
func (s *Store) Record(ctx context.Context, id string, e model.Event) error {
	const op = "record"
	if err := sources.CheckEvent(op, id, e); err != nil {
		return err
	}
	st, err := s.writable(op, id)
	if err != nil {
		return err
	}
	if _, err := s.Get(ctx, id); err != nil {
		return err
	}
	return s.classify(op, id, s.writeAudit(ctx, s.db, st, id, e, nil, nil))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
