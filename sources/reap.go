package sources

import (
	"context"
	"fmt"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

// Releaser is what putting a dead holder's task back needs of a source.
// Every Source is one.
type Releaser interface {
	ForceRelease(ctx context.Context, id string, h Human) (*model.Task, error)
}

// ReapOne puts seen — an agent's claim whose lease ended grace ago
// (model.Rescuable; a claim without an expiry never is) — back in the
// queue as by (its trail entry naming by's door), with why ("reap", "rescue") and the dead holder in the
// reason. It is a force-release held to the exact version read (Human with
// no Seen, so CheckHuman in the backend's own write refuses any change): a
// heartbeat proves the holder alive, a claim re-taken since is somebody
// else's, and both get CONFLICT carrying the task as it is now. The
// backend leaves its trail (the comment, the audit row, the lock history)
// and keeps what a release keeps (Notion's Assignee).
func ReapOne(ctx context.Context, rel Releaser, seen *model.Task, by model.Actor, why string, now time.Time, grace time.Duration) (*model.Task, error) {
	if !model.Rescuable(seen, now, grace) {
		e := model.Errorf(model.CodeConflict, string(model.ActionReap), seen.ID,
			"the task is %s held by %q, not an agent's lease that ended %s ago: nothing was done", seen.State, seen.Claim().Name, grace)
		e.Current = seen
		return nil, e
	}
	return rel.ForceRelease(ctx, seen.ID, Human{Actor: by.Name, Door: by.Door, Expect: seen.Version, Reason: ReapReason(why, seen)})
}

// ReapReason is the trail's reason for a reap or rescue of t.
func ReapReason(why string, t *model.Task) string {
	return fmt.Sprintf("%s: the lease of %s ended %s", why, t.Claim().Name, t.Claim().Expires.Time().UTC().Format(time.RFC3339))
}

// Reaping is one task a reap put back in the queue (Applied), would have
// (a dry run), or was refused (Err: CONFLICT when the task changed since
// it was read).
type Reaping struct {
	Task    *model.Task // as the reap read it
	After   *model.Task // as the reap left it; nil unless Applied
	Applied bool
	Err     error
}

// Reap is ntask 0.5's `reap` made safe: every task of tasks (as src was
// just read) whose agent's lease ended grace ago goes back to the queue
// through Apply, so each is journaled, refused in read-only mode, and
// re-checked against the claim read (ReapOne). A dry run lists what it
// would reap and writes nothing.
//
// A grace of ConfiguredGrace is the configured one (Desk.Grace).
func (d *Desk) Reap(ctx context.Context, src Source, tasks []*model.Task, grace time.Duration, dryRun bool) []Reaping {
	now := d.now()
	grace = d.grace(grace)
	var out []Reaping
	for _, t := range tasks {
		if t.Source != "" && t.Source != src.Name() || !model.Rescuable(t, now, grace) {
			continue
		}
		r := Reaping{Task: t}
		if dryRun {
			r.Err = d.check(src.Name(), Request{Action: model.ActionReap, Seen: t, Grace: grace})
		} else {
			r.After, r.Err = d.Apply(ctx, src, Request{Action: model.ActionReap, Seen: t, Grace: grace})
			r.Applied = r.Err == nil
		}
		out = append(out, r)
		if ctx.Err() != nil {
			break
		}
	}
	return out
}
