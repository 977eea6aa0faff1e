package lockdir

import (
	"context"
	"encoding/json"
	"os"

	"github.com/google/uuid"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// seized is a task a human action has taken hold of: the task as read, and
// the file that decided its state, moved to a private name (priv) after
// checking it is still the version the human saw.
type seized struct {
	cur  *model.Task
	file *fileState // nil for a task known only from the tasks file
	priv string
}

// seize is the common start of every human action, under the write lock:
// re-read, refuse what check refuses, then move the task's deciding file
// aside.
func (s *Source) seize(op, id string, check func(cur *model.Task) error) (*seized, error) {
	if err := refuseID(op, id); err != nil {
		return nil, err
	}
	cur, slot, err := s.readTask(id)
	if err != nil {
		return nil, err
	}
	if cur == nil {
		return nil, sources.NotFound(op, id)
	}
	if err := check(cur); err != nil {
		return nil, err
	}
	sz := &seized{cur: cur, file: deciding(slot)}
	if sz.file == nil {
		return sz, nil
	}
	priv, ok, err := s.takeVerified(id, sz.file)
	if err != nil {
		return nil, sources.StorageErr(op, id, err)
	}
	if !ok {
		return nil, s.freshConflict(op, id, "the task changed since it was read")
	}
	sz.priv = priv
	return sz, nil
}

// undo puts the seized file back after a failed publish.
func (s *Source) undo(sz *seized) {
	if sz.file != nil {
		s.restore(sz.priv, sz.file.path, sz.cur.ID)
	}
}

// retire disposes of the seized file once the action is published. A lock
// or a final marker goes to archive/ with who, when and why; a queued
// marker is dropped, its history having moved into the new file.
func (s *Source) retire(sz *seized, why string, ev model.Event) {
	if sz.file == nil {
		return
	}
	if sz.file.kind == kindQueued {
		os.Remove(sz.priv)
		return
	}
	rec := sz.file.rec.clone()
	rec.addEvent(ev)
	if rec.extra == nil {
		rec.extra = map[string]json.RawMessage{}
	}
	for k, v := range map[string]string{"archived_by": ev.Actor, "archived_at": formatTime(ev.At), "archived_action": ev.Action, "archived_reason": ev.Reason} {
		rec.extra[k], _ = json.Marshal(v)
	}
	if err := s.publishArchive(rec.marshal(), sz.cur.ID, why); err == nil {
		os.Remove(sz.priv)
		return
	}
	s.toArchive(sz.priv, sz.cur.ID, why)
}

// publishArchive writes data as a new file in archive/: written beside
// the locks, then moved in through the archive directory itself, never
// through a link.
func (s *Source) publishArchive(data []byte, id, why string) error {
	tmp, err := s.writeTemp(s.dir, data)
	if err != nil {
		return err
	}
	if err := s.intoArchive(tmp, id, why); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func (s *Source) event(action string, h sources.Human, cur *model.Task) model.Event {
	return model.Event{At: s.now(), Actor: h.Actor, Door: h.Door, Action: action, Reason: h.Reason, Detail: sources.HumanDetail(h, cur)}
}

// act is what every human action does under the write lock: seize the
// task as sources.CheckHuman allows, shape the file that replaces its
// deciding file, publish it, and retire the old file to archive/ as why.
func (s *Source) act(ctx context.Context, action model.Action, why, id string, h sources.Human,
	shape func(rec *record, ev *model.Event), publish func(data []byte) error) (*model.Task, error) {
	return s.actChecked(ctx, string(action), why, id, h, func(cur *model.Task) error { return sources.CheckHuman(action, cur, h) }, shape, publish)
}

// actChecked is act with its own check of the task as read.
func (s *Source) actChecked(ctx context.Context, op, why, id string, h sources.Human, check func(cur *model.Task) error,
	shape func(rec *record, ev *model.Event), publish func(data []byte) error) (*model.Task, error) {
	unlock, err := s.lockTask(ctx, op, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	sz, err := s.seize(op, id, check)
	if err != nil {
		return nil, err
	}
	ev := s.event(op, h, sz.cur)
	rec := recordFor(sz.cur)
	if sz.file != nil {
		rec.Replaces = sz.file.version
	}
	shape(rec, &ev)
	rec.addEvent(ev)
	if err := publish(rec.marshal()); err != nil {
		s.undo(sz)
		return nil, s.publishFailed(op, id, err)
	}
	s.retire(sz, why, ev)
	return s.reread(op, id)
}

// Takeover claims the task as HUMAN:<actor>, with a new token and no expiry.
func (s *Source) Takeover(ctx context.Context, id string, h sources.Human) (*model.Task, error) {
	return s.act(ctx, model.ActionTakeover, "taken-over", id, h,
		func(rec *record, ev *model.Event) {
			rec.Agent, rec.HolderKind = model.HumanPrefix+h.Actor, model.HolderHuman.String()
			rec.ClaimedAt, rec.LockToken = ev.At, uuid.NewString()
		},
		func(data []byte) error { return s.publish(data, s.path(id, kindLock)) })
}

// ForceRelease puts the task back in the queue; the old lock goes to
// archive/ with who, when and why, and its token dies with it.
func (s *Source) ForceRelease(ctx context.Context, id string, h sources.Human) (*model.Task, error) {
	return s.requeue(ctx, model.ActionForceRelease, "released", id, h, nil)
}

// Handoff releases the task and reserves it for one agent (or ANY). A human
// names the version they saw; an agent names its lock token.
func (s *Source) Handoff(ctx context.Context, id string, h sources.Handoff) (*model.Task, error) {
	if err := h.Check("handoff", id); err != nil {
		return nil, err
	}
	if err := sources.CheckTarget(id, h.To); err != nil {
		return nil, err
	}
	dur := h.For
	if dur <= 0 {
		dur = sources.DefaultReservation
	}
	res := &wireReservation{For: h.To, Until: formatTime(s.now().Add(dur)), By: h.Actor, Reason: h.Reason, Priority: h.Priority}
	if h.Token == "" {
		return s.requeue(ctx, model.ActionHandoff, "handed-off", id, h.Human, res)
	}
	return s.agentHandoff(ctx, id, h, res)
}

// requeue is force-release (res nil) and a human hand-off: the task gets a
// queued marker, with the reservation if there is one.
func (s *Source) requeue(ctx context.Context, action model.Action, why, id string, h sources.Human, res *wireReservation) (*model.Task, error) {
	return s.act(ctx, action, why, id, h,
		func(rec *record, ev *model.Event) {
			rec.Status, rec.Reservation = "queued", res
			if res != nil {
				ev.Detail += "; reserved for " + res.For
			}
		},
		func(data []byte) error { return s.replace(data, s.path(id, kindQueued)) })
}

// agentHandoff is the holder handing off its own task: fenced by its token
// like Finish, and its lock needs no archiving (its history moves on).
func (s *Source) agentHandoff(ctx context.Context, id string, h sources.Handoff, res *wireReservation) (*model.Task, error) {
	const op = string(model.ActionHandoff)
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
	lk := s.currentLock(id, h.Token)
	if cur == nil || lk == nil || slot[kindLock] == nil || slot[kindLock].version != lk.version {
		return nil, sources.Lost(op, id)
	}
	priv, ok, err := s.takeVerified(id, lk)
	if err != nil {
		return nil, sources.StorageErr(op, id, err)
	}
	if !ok {
		return nil, sources.Lost(op, id)
	}
	rec := recordFor(cur)
	rec.Status, rec.Reservation, rec.Replaces = "queued", res, lk.version
	rec.addEvent(model.Event{At: s.now(), Actor: h.Actor, Action: op, Reason: h.Reason, Detail: "by the holder " + cur.Claim().Name + "; reserved for " + res.For})
	if err := s.replace(rec.marshal(), s.path(id, kindQueued)); err != nil {
		s.restore(priv, lk.path, id)
		return nil, sources.StorageErr(op, id, err)
	}
	os.Remove(priv)
	afterStep("held removed")
	return s.reread(op, id)
}

// Cancel ends the task as canceled: a .done with status "canceled", so the
// seed's agents, which skip tasks that have a .done, leave it alone.
func (s *Source) Cancel(ctx context.Context, id string, h sources.Human) (*model.Task, error) {
	return s.act(ctx, model.ActionCancel, "canceled", id, h,
		func(rec *record, ev *model.Event) {
			rec.Agent = model.HumanPrefix + h.Actor
			rec.Status, rec.Reason, rec.CompletedAt = "canceled", h.Reason, ev.At
		},
		func(data []byte) error { return s.publishFinal(data, id, kindDone) })
}

func (s *Source) publishFailed(op, id string, err error) error {
	if err == errExist {
		return s.freshConflict(op, id, "someone else wrote the task's file at the same moment")
	}
	return sources.StorageErr(op, id, err)
}
