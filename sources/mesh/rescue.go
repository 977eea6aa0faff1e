package mesh

import (
	"context"
	"fmt"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// Releaser is what the sweep needs to put a dead holder's task back in the
// queue. Every sources.Source is one.
type Releaser interface {
	Caps() sources.Caps
	sources.Releaser
}

// Rescue is one dead holder's task the sweep put back in the queue, or
// would have (a dry run), or could not (Err).
type Rescue struct {
	Source, Task string
	Holder       string    // the dead holder
	Expired      time.Time // when its lease ended
	Applied      bool
	Err          error
}

// rescuer is the actor the backends' trails record for a sweep's rescue.
const rescuer = "claimdeck sweep"

// rescueDead puts back every task whose agent's lease ended a grace ago, in
// sources whose `next` does not hand such a task out itself (Caps.Rescue
// false: seed 002 keeps it IN_PROGRESS). Each is a force-release
// conditional on the version the sweep read, recorded in the backend's
// trail with the dead holder's name. Policy.Grace is the grace (zero: the
// default). It is claimdeck's reap (sources.ReapOne) under the sweep's
// name. It returns the tasks it put back, by
// Ref, which the ladder then leaves alone.
func (s *Sweeper) rescueDead(ctx context.Context, tasks []*model.Task, owners []TaskSource, now time.Time, rep *SweepReport) map[string]bool {
	grace := s.Policy.Grace
	if grace <= 0 {
		grace = model.DefaultPolicy().Grace
	}
	done := map[string]bool{}
	for i, t := range tasks {
		if !model.Rescuable(t, now, grace) {
			continue
		}
		r := Rescue{Source: t.Source, Task: t.ID, Holder: t.Claim().Name, Expired: t.Claim().Expires.Time()}
		rel, ok := owners[i].(Releaser)
		switch {
		case ok && rel.Caps().Rescue:
			continue // next and claim-next rescue it themselves
		case !ok:
			r.Err = fmt.Errorf("source %s cannot put tasks back: %s stays with its dead holder %s", t.Source, t.ID, t.Claim().Name)
		case !s.DryRun:
			_, r.Err = sources.ReapOne(ctx, rel, t, model.Actor{Name: rescuer, Door: model.DoorSweep}, model.ActionRescue, now, grace)
			r.Applied = r.Err == nil
			done[t.Ref()] = r.Applied
		}
		rep.Rescues = append(rep.Rescues, r)
	}
	return done
}
