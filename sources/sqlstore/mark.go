package sqlstore

import (
	"context"
	"fmt"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// sweeper is who escalation marks are recorded as in the audit table.
const sweeper = "claimdeck sweep"

// levelRank orders the escalation column as model.Level does.
const levelRank = `CASE COALESCE(escalation, '') WHEN 'stale' THEN 1 WHEN 'urgent' THEN 2
	WHEN 'notify' THEN 3 WHEN 'escalated' THEN 4 ELSE 0 END`

// MarkEscalation records that an agent's stuck claim reached level (seed
// 001's ladder) in the escalation column, and ends its lease now if it was
// still running — a DOWN node's claim becomes claimable at once. The write
// is conditional on token still being the lock token and never lowers a
// level; a task already at level or above is left as it is. Rows claimed
// by the seed's own SQL carry no token: for them (token "") the condition
// is that no token was set since and their seed lease has run out on the
// database clock, and the lease is left alone. Anything else is LOST_LOCK.
// The mark is written to the audit table in the same transaction.
func (s *Store) MarkEscalation(ctx context.Context, id, token string, level model.Level) error {
	const op = "escalate"
	st, err := s.writable(op, id)
	if err != nil {
		return err
	}
	if level <= model.LevelNone || level > model.LevelEscalated {
		return model.Errorf(model.CodeMisconfigured, op, id, "escalation level %d is not on the ladder", int(level))
	}
	agent := "id = $1 AND status = 'in_progress' AND COALESCE(holder_kind, 'AGENT') = 'AGENT' AND " + levelRank + " < $3"
	d := s.clocked()
	bump := "version = version + 1, updated_at = " + d.now
	var stmt string
	args := []any{id, nil, int64(level), level.String()}
	if token != "" {
		now := d.now
		stmt = fmt.Sprintf(`UPDATE %s SET escalation = $4, %s,
			lease_expires_at = CASE WHEN lease_expires_at IS NULL OR %s > %s THEN %s ELSE lease_expires_at END
			WHERE %s AND lock_token = $2 RETURNING %s`,
			s.table, bump, d.ts("lease_expires_at"), d.ts(now), now, agent, st.cols)
		args[1] = token
	} else {
		stmt = fmt.Sprintf(`UPDATE %s SET escalation = $4, %s
			WHERE %s AND lock_token IS NULL AND $2 = 0 AND %s RETURNING %s`,
			s.table, bump, agent, staleLease(d, "$5", "0"), st.cols)
		args[1] = int64(0)
		args = append(args, s.cfg.SeedTimeout.Milliseconds())
	}
	err = s.db.tx(ctx, func(q querier) error {
		after, err := s.scanOne(q.queryRow(ctx, stmt, args...))
		if err != nil {
			return err
		}
		return s.writeAudit(ctx, q, st, id, model.Event{Actor: sweeper, Action: op, Detail: "level " + level.String()}, nil, after)
	})
	if !isNoRows(err) {
		return s.classify(op, id, err)
	}
	cur, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	if cur.State == model.StateClaimed && cur.Claim().Holder == model.HolderAgent &&
		cur.Claim().Token == token && cur.Escalated >= level {
		return nil // another sweep got there first
	}
	return sources.Lost(op, id)
}
