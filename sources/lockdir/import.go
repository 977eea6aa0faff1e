package lockdir

import (
	"context"
	"errors"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// Import writes t, copied from another queue, as the one file its state
// calls for (a lock for a live claim with its holder, run, node, token and
// lease expiry; a .done or .failed for a final or parked task; a .queued
// otherwise), its history inside, published with link() so it never
// overwrites: CONFLICT, writing nothing, when the directory already knows
// the id.
func (s *Source) Import(ctx context.Context, t *model.Task) error {
	const op = "import"
	if err := refuseID(op, t.ID); err != nil {
		return err
	}
	unlock, err := s.lockTask(ctx, op, t.ID)
	if err != nil {
		return err
	}
	defer unlock()
	if cur, _, err := s.readTask(t.ID); err != nil {
		return err
	} else if cur != nil {
		return conflict(op, t.ID, cur, "source %s already holds a task with this id: nothing was written", s.cfg.Name)
	}
	rec := recordFor(t)
	rec.Reason, rec.Artifacts, rec.Escalation = t.Reason, t.Artifacts, t.Escalated.String()
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = s.now()
	}
	rec.UnblockAction, rec.NextCheckAt = t.UnblockAction(), t.NextCheckAt()
	k := kindQueued
	switch fin, final := finishes[t.State]; {
	case t.State == model.StateClaimed:
		c := t.Claim
		k = kindLock
		rec.Agent, rec.RunID, rec.Node, rec.LockToken, rec.HolderKind = c.Name, c.RunID, c.Node, c.Token, c.Holder.String()
		rec.ClaimedAt, rec.Heartbeat = c.ClaimedAt, c.HeartbeatAt
		if c.Holder != model.HolderHuman {
			rec.ExpiresAt = c.Expires
		}
	case final:
		k, rec.Status = fin.kind, fin.status
		if k == kindDone {
			rec.CompletedAt = t.EditedAt
		} else {
			rec.FailedAt = t.EditedAt
		}
	case t.State == model.StateQueued:
		rec.Status = "queued"
		if r := t.Reservation; r != nil && r.For != "" {
			rec.Reservation = &wireReservation{For: r.For, Until: formatTime(r.Until), By: r.By, Reason: r.Reason, Priority: r.Priority}
		}
	default:
		return model.Errorf(model.CodeMisconfigured, op, t.ID, "state %s cannot be written to a lock directory", t.State)
	}
	data := rec.marshal()
	if len(data) > maxFile {
		return model.Errorf(model.CodeMisconfigured, op, t.ID, "the task's file would be %d bytes, over the %d a reader reads", len(data), maxFile)
	}
	if err := s.publish(data, s.path(t.ID, k)); err != nil {
		if errors.Is(err, errExist) {
			return s.freshConflict(op, t.ID, "a file for this id appeared at the same moment")
		}
		return sources.StorageErr(op, t.ID, err)
	}
	return nil
}

var _ sources.Importer = (*Source)(nil)
