package lockdir

import (
	"context"
	"os"
	"strings"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// Comment adds a note to the history of the file that decides the task's
// state (a task nobody has touched yet gets a queued marker to carry it).
func (s *Source) Comment(ctx context.Context, id string, n sources.Note) error {
	if err := n.Check("comment", id); err != nil {
		return err
	}
	const op = "comment"
	if strings.TrimSpace(n.Text) == "" {
		return model.Errorf(model.CodeMisconfigured, op, id, "the comment is empty")
	}
	if strings.TrimSpace(n.Author) == "" {
		return model.Errorf(model.CodeMisconfigured, op, id, "no author")
	}
	_, err := s.rewrite(ctx, op, id, func(cur *model.Task, rec *record) error {
		rec.addEvent(model.Event{At: s.now(), Actor: n.Author, Action: noteAction, Reason: n.Text})
		return nil
	})
	return err
}

// Update edits a task's title, priority or class in the file that decides
// its state, or moves a task nobody holds to another state through the
// same path as a human action (the old file archived with who and why).
func (s *Source) Update(ctx context.Context, id string, e sources.Edit) (*model.Task, error) {
	if err := e.Check("update", id); err != nil {
		return nil, err
	}
	const op = "update"
	if err := refuseID(op, id); err != nil {
		return nil, err
	}
	shape := func(rec *record) {
		if e.Title != nil {
			rec.Title = *e.Title
		}
		if e.Priority != nil {
			rec.Priority = *e.Priority
		}
		if e.Class != nil {
			rec.Class = *e.Class
		}
	}
	if e.State == model.StateUnknown {
		return s.rewrite(ctx, op, id, func(cur *model.Task, rec *record) error {
			if err := sources.CheckEdit(cur, e, s.now()); err != nil {
				return err
			}
			shape(rec)
			rec.addEvent(model.Event{At: s.now(), Actor: e.Actor, Door: e.Door, Action: op, Reason: e.Reason, Detail: sources.EditDetail(e)})
			return nil
		})
	}
	// A state change: check the edit on the task as read, then act on
	// exactly that version (seize refuses any other).
	cur, _, err := s.readTask(id)
	if err != nil {
		return nil, err
	}
	if cur == nil {
		return nil, sources.NotFound(op, id)
	}
	if err := sources.CheckEdit(cur, e, s.now()); err != nil {
		return nil, err
	}
	k, status := kindQueued, "queued"
	if fin, ok := finishes[e.State]; ok {
		k, status = fin.kind, fin.status
	}
	h := sources.Human{Actor: e.Actor, Door: e.Door, Reason: e.Reason, Expect: cur.Version}
	seen := cur.Version
	return s.actChecked(ctx, e.Action(), "updated", id, h,
		func(now *model.Task) error {
			switch {
			case now.Version != seen:
				return conflict(op, id, now, "the task changed since it was read")
			case now.More().Problem != "":
				return conflict(op, id, now, "the task's files are broken (%s); repair or move them by hand", now.More().Problem)
			}
			return nil
		},
		func(rec *record, ev *model.Event) {
			shape(rec)
			rec.Status, rec.Reason = status, e.Reason
			switch k {
			case kindDone:
				rec.CompletedAt = ev.At
			case kindFailed:
				rec.FailedAt = ev.At
			}
			ev.Detail += "; " + sources.EditDetail(e)
		},
		func(data []byte) error {
			if k == kindQueued {
				return s.replace(data, s.path(id, k))
			}
			return s.publishFinal(data, id, k)
		})
}

// rewrite changes the file that decides a task's state in place, under the
// write lock, the way Heartbeat does: a new file renamed over the old, and
// only if the old is still the version read, so a seed snippet's write in
// between is never overwritten. A task known only from the tasks file gets
// a queued marker, published only if nobody wrote one meanwhile.
func (s *Source) rewrite(ctx context.Context, op, id string, change func(cur *model.Task, rec *record) error) (*model.Task, error) {
	if err := refuseID(op, id); err != nil {
		return nil, err
	}
	unlock, err := s.lockTask(ctx, op, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	cur, slot, err := s.readTask(id)
	if err != nil {
		return nil, err
	}
	if cur == nil {
		return nil, sources.NotFound(op, id)
	}
	if cur.More().Problem != "" {
		return nil, conflict(op, id, cur, "the task's files are broken (%s); repair or move them by hand", cur.More().Problem)
	}
	file := deciding(slot)
	if file == nil {
		rec := recordFor(cur)
		rec.Status = "queued"
		if err := change(cur, rec); err != nil {
			return nil, err
		}
		if err := s.publish(rec.marshal(), s.path(id, kindQueued)); err != nil {
			return nil, s.publishFailed(op, id, err)
		}
		return s.reread(op, id)
	}
	if file.kind >= kindArchivedDone {
		return nil, conflict(op, id, cur, "the task is archived by the seed's cleanup; its files are no longer rewritten")
	}
	rec := file.rec.clone()
	if err := change(cur, rec); err != nil {
		return nil, err
	}
	replaced, err := s.replaceUnchanged(file, rec.marshal())
	if err != nil {
		return nil, sources.StorageErr(op, id, err)
	}
	if !replaced {
		return nil, s.freshConflict(op, id, "the task changed while it was being updated")
	}
	return s.reread(op, id)
}

// CheckWrite proves the process may write to the directory: it takes the
// write lock (flock on .claimdeck.flock) and creates and removes a private
// temp file, which is all a claim needs beyond link().
func (s *Source) CheckWrite(ctx context.Context) error {
	const op = "doctor"
	unlock, err := s.lock(ctx, op)
	if err != nil {
		return model.Errorf(model.CodeMisconfigured, op, "", "cannot take the directory's write lock: %v", err)
	}
	defer unlock()
	tmp, err := s.writeTemp(s.dir, []byte("{}"))
	if err != nil {
		return model.Wrap(model.CodeMisconfigured, op, "", err)
	}
	return os.Remove(tmp)
}
