package lockdir

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"time"

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
	_, _, err := s.importOne(ctx, t)
	return err
}

// ImportAll imports ts one file each, all or none: when one is refused or
// fails, the files this call published are taken back (each only while it
// is still as written: a claim an agent made on a copied task in the
// meantime stays), so the directory is as it was.
func (s *Source) ImportAll(ctx context.Context, ts []*model.Task, done func(n int)) error {
	type written struct {
		path string
		data []byte
	}
	var wrote []written
	for i, t := range ts {
		path, data, err := s.importOne(ctx, t)
		if err != nil {
			for _, w := range slices.Backward(wrote) {
				s.takeBack(w.path, w.data)
			}
			return err
		}
		wrote = append(wrote, written{path, data})
		if done != nil {
			done(i + 1)
		}
	}
	return nil
}

// takeBack removes the file at path if it still holds data, under the
// directory's write lock.
func (s *Source) takeBack(path string, data []byte) {
	unlock, err := s.lock(context.Background(), "import")
	if err != nil {
		return
	}
	defer unlock()
	if now, err := os.ReadFile(path); err == nil && bytes.Equal(now, data) {
		os.Remove(path)
	}
}

// importOne writes t as Import does and says which file it published.
func (s *Source) importOne(ctx context.Context, t *model.Task) (string, []byte, error) {
	const op = "import"
	if err := refuseID(op, t.ID); err != nil {
		return "", nil, err
	}
	unlock, err := s.lockTask(ctx, op, t.ID)
	if err != nil {
		return "", nil, err
	}
	defer unlock()
	if cur, _, err := s.readTask(t.ID); err != nil {
		return "", nil, err
	} else if cur != nil {
		return "", nil, conflict(op, t.ID, cur, "source %s already holds a task with this id: nothing was written", s.cfg.Name)
	}
	rec := recordFor(t)
	rec.Reason, rec.Artifacts, rec.Escalation = t.More().Reason, t.More().Artifacts, t.Escalated.String()
	rec.ReviewBy = t.More().ReviewBy
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = s.now()
	}
	rec.UnblockAction, rec.NextCheckAt = t.UnblockAction(), t.NextCheckAt()
	c := t.More().Carried
	if c == nil { // from a backend that keeps none of it: its last change ended it
		c = &model.Carried{CompletedAt: t.EditedAt.Time()}
	}
	rec.TaskType = c.TaskType
	for k, v := range c.Extra {
		if json.Valid([]byte(v)) && !knownField[k] {
			if rec.extra == nil {
				rec.extra = map[string]json.RawMessage{}
			}
			rec.extra[k] = json.RawMessage(v)
		}
	}
	k := kindQueued
	switch fin, final := finishes[t.State]; {
	case t.State == model.StateClaimed:
		c := t.Claim()
		k = kindLock
		rec.Agent, rec.RunID, rec.Node, rec.LockToken, rec.HolderKind = c.Name, c.RunID, c.Node, c.Token, c.Holder.String()
		rec.ClaimedAt, rec.Heartbeat = c.ClaimedAt.Time(), c.HeartbeatAt.Time()
		if c.Holder != model.HolderHuman {
			rec.ExpiresAt = sources.HoldUntil(c.Expires.Time(), timeRes)
		}
		if t.More().Carried != nil && t.More().Carried.LeaseUnset {
			rec.ExpiresAt, rec.HolderKind = time.Time{}, ""
		}
	case final:
		k, rec.Status = fin.kind, fin.status
		if t.InBacklog() {
			rec.Status = statusBacklog
		}
		rec.Agent, rec.ClaimedAt = c.Worker, c.StartedAt
		if k == kindDone {
			rec.CompletedAt = c.CompletedAt
		} else {
			rec.FailedAt = c.CompletedAt
		}
	case t.State == model.StateQueued:
		rec.Status = "queued"
		if r := t.Reserved(); r != nil && r.For != "" {
			rec.Reservation = &wireReservation{For: r.For, Until: formatTime(sources.HoldUntil(r.Until, timeRes)), By: r.By, Reason: r.Reason, Priority: r.Priority}
		}
	default:
		return "", nil, model.Errorf(model.CodeMisconfigured, op, t.ID, "state %s cannot be written to a lock directory", t.State)
	}
	data := rec.marshal()
	if len(data) > maxFile {
		return "", nil, model.Errorf(model.CodeMisconfigured, op, t.ID, "the task's file would be %d bytes, over the %d a reader reads", len(data), maxFile)
	}
	path := s.path(t.ID, k)
	if err := s.publish(data, path); err != nil {
		if errors.Is(err, errExist) {
			return "", nil, s.freshConflict(op, t.ID, "a file for this id appeared at the same moment")
		}
		return "", nil, sources.StorageErr(op, t.ID, err)
	}
	return path, data, nil
}

var _ sources.Importer = (*Source)(nil)
