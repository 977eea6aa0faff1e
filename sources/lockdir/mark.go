package lockdir

import (
	"context"
	"os"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// MarkEscalation records in the lock file that an agent's stuck claim
// reached level (seed 001's ladder), and ends its lease now if it was still
// running (expires_at = now), so a DOWN node's claim becomes claimable at
// once. The write holds the directory's write lock, checks the lock file's
// token, and replaces the file by rename only if nobody rewrote it since it
// was read; a task already at level or above is left alone. A HUMAN claim
// or a stale token is LOST_LOCK.
func (s *Source) MarkEscalation(ctx context.Context, id, token string, level model.Level) error {
	const op = "escalate"
	if err := refuseID(op, id); err != nil {
		return err
	}
	if level <= model.LevelNone || level > model.LevelEscalated {
		return model.Errorf(model.CodeMisconfigured, op, id, "escalation level %d is not on the ladder", int(level))
	}
	unlock, err := s.lockTask(ctx, op, id)
	if err != nil {
		return err
	}
	defer unlock()
	lk := s.holderLock(id, token)
	if lk == nil || lk.rec.person() {
		return sources.Lost(op, id)
	}
	if have, _ := model.ParseLevel(lk.rec.Escalation); have >= level {
		return nil // another sweep got there first
	}
	now := s.now()
	rec := lk.rec.clone()
	rec.Escalation = level.String()
	if rec.ExpiresAt.IsZero() || rec.ExpiresAt.After(now) {
		rec.ExpiresAt = now
	}
	rec.addEvent(model.Event{At: now, Actor: "claimdeck sweep", Action: op, Detail: "level " + level.String()})
	return s.replaceHeld(op, id, lk, rec)
}

// replaceHeld writes rec over the lock lk was read from, by rename, unless
// the file changed since (a seed snippet rewrote it): that is LOST_LOCK, and
// never a stale copy written over a fresh one.
func (s *Source) replaceHeld(op, id string, lk *fileState, rec *record) error {
	replaced, err := s.replaceUnchanged(lk, rec.marshal())
	if err != nil {
		return sources.StorageErr(op, id, err)
	}
	if !replaced {
		return sources.Lost(op, id)
	}
	return nil
}

// replaceUnchanged writes data over the file fs was read from, by rename,
// only if the file is still that version; replaced is false when it has
// changed since, and nothing is written.
func (s *Source) replaceUnchanged(fs *fileState, data []byte) (done bool, err error) {
	tmp, err := s.writeTemp(s.dir, data)
	if err != nil {
		return false, err
	}
	afterStep("temp written")
	if fi, err := os.Lstat(fs.path); err != nil || sigOf(fi) != fs.sig {
		os.Remove(tmp)
		return false, nil
	}
	if err := os.Rename(tmp, fs.path); err != nil {
		os.Remove(tmp)
		return false, err
	}
	afterStep("replaced")
	return true, nil
}
