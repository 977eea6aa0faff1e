package sources

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/claimdeck/claimdeck/model"
)

// DefaultReservation is how long a hand-off keeps a task for its target
// when the request does not say.
const DefaultReservation = 30 * time.Minute

// Request is a human override as the operator asked for it, carrying the
// task exactly as the operator saw it.
type Request struct {
	Action    model.Action
	Seen      *model.Task
	Reason    string
	To        string        // hand-off target
	For       time.Duration // hand-off reservation
	Priority  string        // hand-off priority
	Unblock   string        // block: what would unblock the task
	Artifacts string        // complete, review: links or notes produced
	Grace     time.Duration // reap: how long past its end a lease is dead
	// By is who asks, through which door; zero means the desk's own
	// person (Desk.Actor at Desk.Door).
	By model.Actor
}

// Desk applies human overrides: it refuses them in read-only mode, records
// each in the local journal before and after, and turns a refusal for a
// changed task into words. The dashboard and the operator commands both go
// through it, so the rules hold wherever an action comes from.
type Desk struct {
	// Actor is the person the desk acts for when a request names nobody
	// (Request.By), at Door (the dashboard when zero).
	Actor    string
	Door     model.Door
	Journal  *Journal                 // nil: no local log
	ReadOnly func(source string) bool // nil: writable
	Now      func() time.Time
	// SelfApprove lets the caller that sent a task to Review approve it
	// (review: {self_approve: true}); otherwise model.CheckSelfApproval
	// refuses.
	SelfApprove bool
	// Grace is the configured grace (model.Policy.Grace): a reap that
	// names none (ConfiguredGrace) waits this long past a lease's end,
	// never less; zero means model.DefaultPolicy's.
	Grace time.Duration
	// KeyFingerprint is the SSH key the desk's person was known by (door
	// ssh): journaled with every request the desk makes as that person.
	KeyFingerprint string
}

// keyOf is the key fingerprint to journal for a request by by: the
// desk's, when the request acts as the desk's own person.
func (d *Desk) keyOf(by model.Actor) string {
	if by.Name == d.Actor && by.Door == d.actor(Request{}).Door {
		return d.KeyFingerprint
	}
	return ""
}

// ConfiguredGrace is the grace of a reap that names none (ntask reap
// without --grace): the desk's configured Grace. Zero is a grace of zero.
const ConfiguredGrace time.Duration = -1

// grace is the grace a reap waits: the one it names, else the configured.
func (d *Desk) grace(named time.Duration) time.Duration {
	switch {
	case named >= 0:
		return named
	case d.Grace > 0:
		return d.Grace
	}
	return model.DefaultPolicy().Grace
}

// Apply runs one human action against src. Every call ends applied or with
// an error; both are journaled.
func (d *Desk) Apply(ctx context.Context, src Source, req Request) (*model.Task, error) {
	by := d.actor(req)
	if err := d.check(src.Name(), req); err != nil {
		return nil, d.refused(ctx, src, req, err)
	}
	if req.Action == model.ActionApprove {
		if err := d.checkApprover(ctx, src, req.Seen, by); err != nil {
			return nil, d.refused(ctx, src, req, err)
		}
	}
	now := d.now
	rec := model.AuditRecord{
		At: now().UTC(), Actor: by.Name, Door: by.Door, Source: src.Name(), Task: req.Seen.ID,
		Action: req.Action, Reason: req.Reason, Target: req.To,
		Before: model.Brief(req.Seen), Attempt: uuid.NewString(), Pending: true, Result: "pending",
	}
	if k := req.Seen.DisplayKey(); k != req.Seen.ID {
		rec.Key = k
	}
	rec.KeyFingerprint = d.keyOf(by)
	if d.Journal != nil {
		if err := d.Journal.Append(rec); err != nil {
			// Without a trail the action must not run: nothing is done unrecorded.
			return nil, model.Wrap(model.CodeMisconfigured, string(req.Action), req.Seen.ID, err)
		}
	}
	after, err := d.run(ctx, src, req)
	err = explain(req, err)
	if err != nil && model.CodeOf(err) != model.CodeAPIError {
		err = d.record(ctx, src, req, err)
	}
	rec.At, rec.Pending, rec.After = now().UTC(), false, model.Brief(after)
	rec.Result = "applied"
	if err != nil {
		rec.Result, rec.Error = string(model.CodeOf(err)), model.Redact(err.Error())
	}
	if d.Journal != nil {
		if jerr := d.Journal.Append(rec); jerr != nil && err == nil {
			err = fmt.Errorf("%s applied, but the audit log could not record it: %w", req.Action, jerr)
		}
	}
	return after, err
}

// checkApprover holds an approval to model.CheckSelfApproval on the task
// as the backend reads it now: who sent it to review is a fact the backend
// stored with the move (a poll may not carry it), and the approval itself
// is conditional on the version seen, so a task sent to review again since
// is refused by the write. A task that cannot be read is not approved.
func (d *Desk) checkApprover(ctx context.Context, src Source, seen *model.Task, by model.Actor) error {
	if d.SelfApprove {
		return nil
	}
	fresh, err := src.Get(ctx, seen.ID)
	if err != nil {
		return err
	}
	return model.CheckSelfApproval(fresh, by.Name, false)
}

// Refuse records in the shared trail an attempt a door refused before
// it reached the desk (an agent door's own check): who asked, through
// which door, what and why. It returns err, with a note added when the
// trail could not record it.
func (d *Desk) Refuse(ctx context.Context, src Source, req Request, err error) error {
	return d.refused(ctx, src, req, err)
}

// refused journals a refusal decided before anything was written, and
// keeps it in the shared trail.
func (d *Desk) refused(ctx context.Context, src Source, req Request, err error) error {
	if req.Seen == nil || req.Seen.ID == "" || err == nil {
		return err
	}
	by := d.actor(req)
	if d.Journal != nil {
		_ = d.Journal.Append(model.AuditRecord{At: d.now().UTC(), Actor: by.Name, Door: by.Door, Source: src.Name(), Task: req.Seen.ID,
			Action: req.Action, Reason: req.Reason, Target: req.To, Before: model.Brief(req.Seen),
			Result: string(model.CodeOf(err)), Error: model.Redact(err.Error()), Attempt: uuid.NewString(), KeyFingerprint: d.keyOf(by)})
	}
	return d.record(ctx, src, req, err)
}

// record keeps a refused attempt in the source's shared trail, so that
// every process reading the task sees it: the person or agent, the door,
// the reason given and the refusal. A source without a trail (Caps.Trail
// false) keeps it in the local journal only.
func (d *Desk) record(ctx context.Context, src Source, req Request, err error) error {
	tr, ok := src.(Trail)
	if !ok || !src.Caps().Trail || d.ReadOnly != nil && d.ReadOnly(src.Name()) {
		return err
	}
	by := d.actor(req)
	detail := model.Redact(err.Error())
	if req.To != "" {
		detail = "to " + req.To + "; " + detail
	}
	if k := d.keyOf(by); k != "" {
		detail += "; key " + k
	}
	e := model.Event{At: d.now().UTC(), Actor: strings.TrimSpace(by.Name), Door: by.Door, Action: string(req.Action),
		Reason: req.Reason, Detail: detail, Result: string(model.CodeOf(err))}
	if e.Actor == "" {
		e.Actor = "(no name given)"
	}
	// A caller retrying a refused call in a loop must not flood the
	// trail: read it first (a read, never a write), and past the cap
	// leave the refusal to the answer and the local journal.
	if cur, gerr := src.Get(ctx, req.Seen.ID); gerr == nil {
		switch n := RecentRefusals(cur.More().History, e); {
		case n >= RefusalCap:
			return err
		case n == RefusalCap-1:
			e.Detail += fmt.Sprintf("; more refusals of %s's %s within %s are not recorded", e.Actor, e.Action, RefusalWindow)
		}
	}
	if rerr := tr.Record(ctx, req.Seen.ID, e); rerr != nil {
		return fmt.Errorf("%w (and the shared trail could not record the refusal: %v)", err, model.Redact(rerr.Error()))
	}
	return err
}

// RefusalCap is how many refused attempts of one caller's one action on
// one task the shared trail keeps within RefusalWindow; the last says
// that more are not recorded. An agent retrying in a loop costs a read
// per retry, not a write.
const (
	RefusalCap    = 3
	RefusalWindow = time.Minute
)

// RecentRefusals counts the refused attempts in history by e's caller, of
// e's action, within RefusalWindow before e.
func RecentRefusals(history []model.Event, e model.Event) int {
	n := 0
	for _, h := range history {
		if !h.Applied() && h.Actor == e.Actor && h.Action == e.Action && e.At.Sub(h.At) < RefusalWindow && !h.At.After(e.At.Add(RefusalWindow)) {
			n++
		}
	}
	return n
}

func (d *Desk) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// actor is who req acts as: its own By, else the desk's person.
func (d *Desk) actor(req Request) model.Actor {
	if req.By.Name != "" || req.By.Door != "" {
		return req.By
	}
	door := d.Door
	if door == "" {
		door = model.DoorDashboard
	}
	return model.Actor{Name: d.Actor, Door: door}
}

// nameCaller says how a caller names itself at an agent door, in that
// door's own words (never a command-line flag to an MCP client).
func nameCaller(door model.Door) string {
	switch door {
	case model.DoorMCPStdio, model.DoorMCPHTTP:
		return "give agent_name, the caller's own name"
	case model.DoorNtask:
		return "set NOTION_AGENT_USER_ID to the agent's own name"
	}
	return "give the caller's own name"
}

func (d *Desk) check(source string, req Request) error {
	op := string(req.Action)
	if req.Seen == nil || req.Seen.ID == "" {
		return model.Errorf(model.CodeMisconfigured, op, "", "no task given")
	}
	if d.ReadOnly != nil && d.ReadOnly(source) {
		return model.Errorf(model.CodeMisconfigured, op, req.Seen.ID, "source %q is read-only", source)
	}
	if by := d.actor(req); strings.TrimSpace(by.Name) == "" {
		if by.Door != "" && !by.Person() {
			// An agent door acts as the caller it names, never as the
			// configured person: an approval must know who asks.
			return model.Errorf(model.CodeMisconfigured, op, req.Seen.ID, "%s through %s names its caller: %s: nothing was done", op, by.Door, nameCaller(by.Door))
		}
		return model.Errorf(model.CodeMisconfigured, op, req.Seen.ID, "no actor: set `actor` in the config")
	}
	if !req.Action.Known() {
		return model.Errorf(model.CodeMisconfigured, op, req.Seen.ID, "unknown action")
	}
	need := req.Action.Needs()
	switch {
	case need.Reason && strings.TrimSpace(req.Reason) == "":
		return model.Errorf(model.CodeMisconfigured, op, req.Seen.ID, "a reason is required")
	case need.Target && strings.TrimSpace(req.To) == "":
		return model.Errorf(model.CodeMisconfigured, op, req.Seen.ID, "a target agent (or ANY) is required")
	case req.Priority != "" && !slices.Contains(need.Priorities, req.Priority):
		if len(need.Priorities) == 0 {
			return model.Errorf(model.CodeMisconfigured, op, req.Seen.ID, "%s takes no priority", op)
		}
		return model.Errorf(model.CodeMisconfigured, op, req.Seen.ID, "priority %q: want %s", req.Priority, strings.Join(need.Priorities, ", "))
	}
	return nil
}

func (d *Desk) run(ctx context.Context, src Source, req Request) (*model.Task, error) {
	h := Human{Actor: d.actor(req).Name, Door: d.actor(req).Door, Key: d.keyOf(d.actor(req)), Reason: req.Reason, Expect: req.Seen.Version, Seen: req.Seen}
	id := req.Seen.ID
	if m := req.Action.Move(); m != model.MoveNone {
		return src.Update(ctx, id, MoveEdit(m, h))
	}
	if req.Action.Own() {
		return d.finishOwn(ctx, src, req, h)
	}
	switch req.Action {
	case model.ActionTakeover:
		return src.Takeover(ctx, id, h)
	case model.ActionForceRelease:
		return src.ForceRelease(ctx, id, h)
	case model.ActionReap:
		return ReapOne(ctx, src, req.Seen, d.actor(req), string(model.ActionReap), d.now(), d.grace(req.Grace))
	case model.ActionCancel:
		return src.Cancel(ctx, id, h)
	default:
		dur := req.For
		if dur <= 0 {
			dur = DefaultReservation
		}
		return src.Handoff(ctx, id, Handoff{Human: h, To: req.To, For: dur, Priority: req.Priority})
	}
}

// finishOwn ends the acting person's own claim with the lock token the
// task carried when they looked (the person never copies it): refused by
// model.CheckOwn first, then fenced by that token in the backend.
func (d *Desk) finishOwn(ctx context.Context, src Source, req Request, h Human) (*model.Task, error) {
	seen := req.Seen
	if err := model.CheckOwn(seen, d.actor(req), req.Action); err != nil {
		return nil, err
	}
	if req.Action == model.ActionRelease {
		return src.ForceRelease(ctx, seen.ID, h)
	}
	o := Outcome{State: req.Action.Outcome(), Reason: req.Reason, Artifacts: req.Artifacts, Door: d.actor(req).Door}
	if req.Action == model.ActionBlock {
		o.UnblockAction = req.Unblock
	}
	return src.Finish(ctx, seen.ID, seen.Claim().Token, o)
}

// Precheck is what the desk and the backend would refuse req on t for, as
// t reads now, without writing: the bulk preview's sort and the check
// before a person is asked to confirm.
func (d *Desk) Precheck(t *model.Task, req Request) error {
	r := req
	r.Seen = t
	if err := d.check(t.Source, r); err != nil {
		return err
	}
	h := Human{Actor: d.actor(r).Name, Reason: req.Reason, Expect: t.Version, Seen: t}
	switch {
	case req.Action.Move() != model.MoveNone:
		if err := CheckEdit(t, MoveEdit(req.Action.Move(), h), time.Now()); err != nil || req.Action != model.ActionApprove {
			return err
		}
		if t.More().ReviewBy == "" {
			return nil // not carried by this read (a poll): Apply reads the stored reviewer
		}
		return model.CheckSelfApproval(t, h.Actor, d.SelfApprove)
	case req.Action.Own():
		return model.CheckOwn(t, d.actor(r), req.Action)
	}
	return CheckHuman(req.Action, t, h)
}

// explain turns a CONFLICT on a changed task into what changed.
func explain(req Request, err error) error {
	var e *model.Error
	if !errors.As(err, &e) || e.Code != model.CodeConflict || e.Current == nil {
		return err
	}
	changes := model.Changes(req.Seen, e.Current)
	if len(changes) == 0 {
		return err
	}
	out := *e
	out.Msg = "the task changed since you looked: " + strings.Join(changes, "; ") + " — nothing was done"
	out.Err = nil
	return &out
}
