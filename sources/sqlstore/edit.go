package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// Comment records a note in the task's audit trail, where Get's history
// shows it beside the overrides.
func (s *Store) Comment(ctx context.Context, id string, n sources.Note) error {
	if err := n.Check("comment", id); err != nil {
		return err
	}
	const op = "comment"
	st, err := s.writable(op, id)
	if err != nil {
		return err
	}
	if strings.TrimSpace(n.Text) == "" {
		return model.Errorf(model.CodeMisconfigured, op, id, "the comment is empty")
	}
	if strings.TrimSpace(n.Author) == "" {
		return model.Errorf(model.CodeMisconfigured, op, id, "no author")
	}
	err = s.db.tx(ctx, func(q querier) error {
		if s.pgPool != nil {
			// An UPDATE of no row: it takes the lock every write of the
			// table takes, which a move's freeze waits for, and meets the
			// move's guard trigger, as the audit entry alone would not.
			if _, err := q.exec(ctx, "UPDATE "+s.table+" SET id = id WHERE false"); err != nil {
				return err
			}
		}
		if _, err := s.scanOne(q.queryRow(ctx, st.get, id)); err != nil {
			if isNoRows(err) {
				return sources.NotFound(op, id)
			}
			return err
		}
		return s.writeAudit(ctx, q, st, id, model.Event{Actor: n.Author, Action: op, Reason: n.Text}, nil, nil)
	})
	return s.classify(op, id, err)
}

// Update edits a task's descriptive fields in one short transaction: lock
// the row, check the edit against it on the database clock, write, audit.
// A state change also drops a lapsed lease, so the row never says queued
// while still naming a holder.
func (s *Store) Update(ctx context.Context, id string, e sources.Edit) (*model.Task, error) {
	if err := e.Check("update", id); err != nil {
		return nil, err
	}
	const op = "update"
	st, err := s.writable(op, id)
	if err != nil {
		return nil, err
	}
	set, args := s.editSet(e)
	stmt := fmt.Sprintf("UPDATE %s SET %s, version = version + 1, updated_at = %s WHERE id = $1 RETURNING %s",
		s.table, strings.Join(set, ", "), s.clocked().now, st.cols)
	var out *model.Task
	err = s.db.tx(ctx, func(q querier) error {
		cur, err := s.scanOne(q.queryRow(ctx, st.lockRow, id))
		if isNoRows(err) {
			return sources.NotFound(op, id)
		}
		if err != nil {
			return err
		}
		var now nullTime
		if err := q.queryRow(ctx, st.now).Scan(&now); err != nil {
			return err
		}
		if err := sources.CheckEdit(cur, e, now.t); err != nil {
			if model.CodeOf(err) == model.CodeConflict {
				err.(*model.Error).Current = cur
			}
			return err
		}
		if out, err = s.scanOne(q.queryRow(ctx, stmt, append([]any{id}, args...)...)); err != nil {
			return err
		}
		return s.writeAudit(ctx, q, st, id, model.Event{Actor: e.Actor, Door: e.Door, Action: e.Action(), Reason: e.Reason, Detail: sources.EditDetail(e)}, cur, out)
	})
	if err != nil {
		return nil, s.classify(op, id, err)
	}
	return out, nil
}

// editSet renders the SET list of an edit; parameters start at $2.
func (s *Store) editSet(e sources.Edit) ([]string, []any) {
	var set []string
	var args []any
	param := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args)+1)
	}
	if e.Title != nil {
		set = append(set, "title = "+param(*e.Title))
	}
	if e.Priority != nil {
		set = append(set, "priority = "+param(model.PriorityName(*e.Priority)))
	}
	if e.Class != nil {
		set = append(set, "class = "+param(e.Class.String()))
	}
	if e.State != model.StateUnknown {
		set = append(set, "status = "+param(statusOfState[e.State]),
			"lock_token = NULL, lease_expires_at = NULL, heartbeat_at = NULL, holder_kind = NULL, run_id = NULL, node = NULL")
		if e.State == model.StateQueued {
			set = append(set, "assigned_worker = "+param(s.cfg.Pool), "started_at = NULL")
		}
		if e.State.Final() {
			set = append(set, "completed_at = "+s.clocked().now)
		}
		if e.Reason != "" {
			set = append(set, "reason = "+param(e.Reason))
		}
	}
	return set, args
}

// errDryRun rolls back CheckWrite's transaction.
var errDryRun = errors.New("dry run")

// CheckWrite proves the process may write without writing: in a transaction
// that is rolled back, an UPDATE and an audit INSERT that match no row. Both
// databases check privileges, read-only mode and (SQLite) the file's write
// lock before looking at a single row.
func (s *Store) CheckWrite(ctx context.Context) error {
	const op = "doctor"
	if _, err := s.writable(op, ""); err != nil {
		return err
	}
	err := s.db.tx(ctx, func(q querier) error {
		if _, err := q.exec(ctx, fmt.Sprintf("UPDATE %s SET version = version WHERE 1 = 0", s.table)); err != nil {
			return err
		}
		if _, err := q.exec(ctx, fmt.Sprintf(`INSERT INTO claimdeck_audit (tbl, task_id, at, actor, action)
			SELECT 'x', 'x', %s, 'x', 'x' WHERE 1 = 0`, s.d.now)); err != nil {
			return err
		}
		return errDryRun
	})
	if errors.Is(err, errDryRun) {
		return nil
	}
	return s.classify(op, "", err)
}
