package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

var _ sources.Importer = (*Store)(nil)

// Import writes t, copied from another queue, as ImportAll does.
func (s *Store) Import(ctx context.Context, t *model.Task) error {
	return s.ImportAll(ctx, []*model.Task{t}, nil)
}

// ImportAll writes ts, copied from another queue, each as one row and its
// history as audit rows, all in one transaction: CONFLICT, writing
// nothing, when the table already has a row with one of their ids, and
// nothing either when any write fails. The claim keeps its holder, run,
// node, token and lease expiry, so the holder's next heartbeat with the
// same token is accepted here; the row keeps task_type, its last worker,
// started_at and completed_at. Its version starts again at 0 and
// updated_at is the copy's: they track changes in this table.
func (s *Store) ImportAll(ctx context.Context, ts []*model.Task, done func(n int)) error {
	const op = "import"
	for _, t := range ts {
		if _, err := s.writable(op, t.ID); err != nil {
			return err
		}
		if _, ok := statusOfState[t.State]; !ok || t.More().Problem != "" || strings.TrimSpace(t.ID) == "" {
			return model.Errorf(model.CodeMisconfigured, op, t.ID, "the task has no state seed 003 can store (%s): repair it first", t.State)
		}
	}
	names := make([]string, len(columns))
	params := make([]string, len(columns))
	for i, c := range columns {
		names[i], params[i] = c.name, fmt.Sprintf("$%d", i+1)
	}
	insert := fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", s.table, strings.Join(names, ", "), strings.Join(params, ", "))
	audit := `INSERT INTO claimdeck_audit (tbl, task_id, at, actor, action, reason, detail) VALUES ($1, $2, $3, $4, $5, $6, $7)`
	exists := fmt.Sprintf("SELECT count(*) FROM %s WHERE %s = $1", s.table, s.d.text("id"))
	var failed string // the id being written when the transaction failed
	err := s.db.tx(ctx, func(q querier) error {
		for i, t := range ts {
			failed = t.ID
			var n int
			if err := q.queryRow(ctx, exists, t.ID).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return model.Errorf(model.CodeConflict, op, t.ID, "source %s already holds a task with this id: nothing was written", s.cfg.Name)
			}
			status := statusOfState[t.State]
			if t.InBacklog() {
				status = statusBacklog
			}
			vals := s.importValues(t, status)
			args := make([]any, len(columns))
			for i, c := range columns {
				args[i] = vals[c.name]
			}
			if _, err := q.exec(ctx, insert, args...); err != nil {
				return err
			}
			for _, e := range t.More().History {
				if _, err := q.exec(ctx, audit, s.tag, t.ID, s.d.timeArg(orNow(e.At)), e.Actor, e.Action, nullable(e.Reason), nullable(e.Detail)); err != nil {
					return fmt.Errorf("audit: %w", err)
				}
			}
			if done != nil {
				done(i + 1)
			}
		}
		return nil
	})
	if model.CodeOf(err) == model.CodeConflict {
		return err
	}
	if err != nil {
		return s.classify(op, failed, err)
	}
	return nil
}

// importValues maps t onto the row as the store's own statements write it.
func (s *Store) importValues(t *model.Task, status string) map[string]any {
	tm := func(at time.Time) any {
		if at.IsZero() {
			return nil
		}
		return s.d.timeArg(at)
	}
	v := map[string]any{
		"id": t.ID, "title": t.Title, "description": nullable(t.Description),
		"priority": nullable(model.PriorityName(t.Priority)), "status": status,
		"assigned_worker": nullable(s.cfg.Pool), "created_at": s.d.timeArg(orNow(t.CreatedAt.Time())),
		"reason": nullable(t.More().Reason), "artifacts": nullable(t.More().Artifacts), "parent_id": nullable(t.More().Parent),
		"review_by":  nullable(t.More().ReviewBy),
		"escalation": nullable(t.Escalated.String()), "version": 0, "updated_at": s.d.timeArg(time.Now()),
	}
	if t.Class != 0 && t.Class != model.ClassStandard {
		v["class"] = t.Class.String()
	}
	if c := t.More().Carried; c != nil {
		v["task_type"], v["completed_at"] = nullable(c.TaskType), tm(c.CompletedAt)
		if t.State != model.StateQueued && t.State != model.StateClaimed {
			// Who worked a finished or parked row, and when, as it was.
			v["assigned_worker"], v["started_at"] = nullable(c.Worker), tm(c.StartedAt)
		}
	}
	if t.State.Final() && t.More().Carried == nil { // from a backend that keeps no such time
		v["completed_at"] = s.d.timeArg(orNow(t.EditedAt.Time()))
	}
	if u := t.More().Unblock; u != nil {
		v["unblock_action"], v["next_check_at"] = nullable(u.Action), tm(u.NextCheckAt)
	}
	if c := t.Claim(); t.State == model.StateClaimed {
		v["assigned_worker"], v["run_id"], v["node"], v["lock_token"] = c.Name, nullable(c.RunID), nullable(c.Node), nullable(c.Token)
		v["holder_kind"], v["started_at"], v["heartbeat_at"] = nullable(c.Holder.String()), tm(c.ClaimedAt.Time()), tm(c.HeartbeatAt.Time())
		if c.Holder != model.HolderHuman {
			v["lease_expires_at"] = tm(sources.HoldUntil(c.Expires.Time(), s.d.res))
		}
		if t.More().Carried != nil && t.More().Carried.LeaseUnset {
			v["holder_kind"], v["lease_expires_at"] = nil, nil
		}
	}
	if r := t.Reserved(); r != nil && t.State == model.StateQueued && r.For != "" {
		if r.For != model.AnyAgent {
			v["assigned_worker"] = r.For
		}
		v["reserved_for"], v["reserved_until"], v["reserved_by"] = r.For, tm(sources.HoldUntil(r.Until, s.d.res)), nullable(r.By)
		v["handoff_reason"], v["handoff_priority"] = nullable(r.Reason), nullable(r.Priority)
	}
	return v
}

func orNow(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now()
	}
	return t
}
