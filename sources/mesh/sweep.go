package mesh

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// TaskSource is what the sweep needs of a source: its name, what it can do,
// a full poll and escalation marks. Every sources.Source is one.
type TaskSource interface {
	Name() string
	Caps() sources.Caps
	Poll(ctx context.Context, since sources.Cursor, opt ...sources.PollOption) (sources.Delta, error)
	MarkEscalation(ctx context.Context, id, token string, level model.Level) error
}

// Mark is one escalation level written, or that would be written: in a
// dry run, or when the source declares no escalation (Applied false, no
// Err; the ladder climbs on, so the mesh is still notified).
type Mark struct {
	Source, Task string
	Level        model.Level
	Applied      bool
	Err          error
}

// Delivery is one notification sent, or that failed, or that a dry run
// would have sent.
type Delivery struct {
	Source, Task string
	Target       string
	Err          error
	DryRun       bool
}

// SweepReport is what one sweep did.
type SweepReport struct {
	Marks      []Mark
	Deliveries []Delivery
	Rescues    []Rescue
	Errors     []error // sources that could not be polled
}

// Sweeper climbs the escalation ladder for every stuck claim, once per
// level: for each level a task reached above the one its source records, it
// marks the task (when its source declares Caps.Escalation) and, at
// LevelNotify, notifies the mesh.
// Notifications are idempotent through Record, keyed by task, claim and
// target, so a task re-claimed and stuck again is a new incident.
type Sweeper struct {
	// Policy places each task on the ladder (model.Classify).
	Policy   model.Policy
	Notifier *Notifier // nil: no notifications
	Record   *Record   // nil: an in-memory record kept by the Sweeper
	// Nodes, when set, gives the poller's view: claims of DOWN nodes are at
	// least stale whatever their lease says. Holders maps agent → node
	// (both as model.NewMesh reads them).
	Nodes   func() []model.Node
	Holders map[string]string
	Now     func() time.Time
	// DryRun reports what a sweep would mark and whom it would notify,
	// and writes, sends and records nothing.
	DryRun bool

	mu sync.Mutex // sweeps never overlap
}

// Sweep polls every source in full and acts on what it finds. A source that
// fails to poll is reported and skipped; the others are swept.
func (s *Sweeper) Sweep(ctx context.Context, srcs ...TaskSource) SweepReport {
	var rep SweepReport
	var tasks []*model.Task
	var owners []TaskSource // owners[i] polled tasks[i]
	for _, src := range srcs {
		d, err := src.Poll(ctx, "")
		if err != nil {
			rep.Errors = append(rep.Errors, fmt.Errorf("sweep %s: %w", src.Name(), err))
			continue
		}
		for _, t := range d.Tasks {
			tasks = append(tasks, t)
			owners = append(owners, src)
		}
	}
	var nodes []model.Node
	if s.Nodes != nil {
		nodes = s.Nodes()
	}
	s.act(ctx, tasks, owners, model.NewMesh(nodes, s.Holders), &rep)
	return rep
}

// SweepTasks acts on tasks already read, as Sweep acts on its own poll: the
// dashboard's enforcement hands it the hub's snapshot, whose mesh classifies
// them. Each task's marks go to the source of its name among srcs; tasks of
// other sources (read-only ones) are left alone.
func (s *Sweeper) SweepTasks(ctx context.Context, tasks []*model.Task, mesh *model.Mesh, srcs ...TaskSource) SweepReport {
	byName := map[string]TaskSource{}
	for _, src := range srcs {
		byName[src.Name()] = src
	}
	var mine []*model.Task
	var owners []TaskSource
	for _, t := range tasks {
		if src := byName[t.Source]; src != nil {
			mine, owners = append(mine, t), append(owners, src)
		}
	}
	var rep SweepReport
	s.act(ctx, mine, owners, mesh, &rep)
	return rep
}

// act climbs the ladder for every task; owners[i] is tasks[i]'s source.
func (s *Sweeper) act(ctx context.Context, tasks []*model.Task, owners []TaskSource, mesh *model.Mesh, rep *SweepReport) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Record == nil {
		s.Record, _ = OpenRecord("") // an in-memory record cannot fail to open
	}
	release, err := s.Record.Hold()
	if err != nil {
		rep.Errors = append(rep.Errors, err)
		return
	}
	defer release()
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	rescued := s.rescueDead(ctx, tasks, owners, now, rep)
	for i, t := range tasks {
		if rescued[t.Ref()] {
			continue
		}
		level := model.Classify(t, now, s.Policy, mesh).Enforced()
		if t.Escalated >= model.LevelNotify && level >= model.LevelNotify {
			// Told before: a target that was DOWN or failed then is told
			// now, once; the others are in the record.
			s.notify(ctx, t, now, mesh, true, rep)
		}
		for l := t.Escalated + 1; l <= level; l++ {
			if l == model.LevelNotify {
				s.notify(ctx, t, now, mesh, false, rep)
			}
			m := Mark{Source: t.Source, Task: t.ID, Level: l}
			if !s.DryRun {
				m = mark(ctx, owners[i], t, l)
			}
			rep.Marks = append(rep.Marks, m)
			if m.Err != nil {
				break // re-claimed or finished since the poll: the ladder starts over
			}
		}
	}
}

func mark(ctx context.Context, src TaskSource, t *model.Task, l model.Level) Mark {
	m := Mark{Source: t.Source, Task: t.ID, Level: l}
	if src.Caps().Escalation {
		m.Err = src.MarkEscalation(ctx, t.ID, t.Claim().Token, l)
		m.Applied = m.Err == nil
	}
	return m
}

// ErrNodeDown is the delivery error for a target the poller holds DOWN.
var ErrNodeDown = errors.New("node is DOWN: not notified")

// incidentOf names a claim's notification in the record: the task, when
// the claim began, and the level.
func incidentOf(t *model.Task) string {
	return fmt.Sprintf("%s@%s/%s", t.Ref(), t.Claim().ClaimedAt.Time().UTC().Format(time.RFC3339Nano), model.LevelNotify)
}

// notify tells every target that has not yet been told about this claim.
// Targets the poller holds DOWN are skipped and not recorded, and reported
// as skipped unless this is a retry of the backlog.
func (s *Sweeper) notify(ctx context.Context, t *model.Task, now time.Time, mesh *model.Mesh, retry bool, rep *SweepReport) {
	if s.Notifier == nil {
		return
	}
	msg := Message(t, now)
	incident := incidentOf(t)
	for _, target := range s.Notifier.Targets() {
		key := incident + "→" + target.Name
		if s.Record.Has(key) {
			continue
		}
		if mesh.Down(target.Name) {
			if retry {
				continue
			}
			rep.Deliveries = append(rep.Deliveries, Delivery{Source: t.Source, Task: t.ID, Target: target.Name, Err: ErrNodeDown})
			continue
		}
		d := Delivery{Source: t.Source, Task: t.ID, Target: target.Name, DryRun: s.DryRun}
		if !s.DryRun {
			d.Err = s.Notifier.Deliver(ctx, target, msg)
			if d.Err == nil {
				d.Err = s.Record.Put(key, now)
			}
		}
		rep.Deliveries = append(rep.Deliveries, d)
	}
}

// Message is the notification text for a stuck claim, in the seed's words.
// It names the task and its holder, never the lock token.
func Message(t *model.Task, now time.Time) string {
	title := strings.TrimSpace(t.Title)
	if title == "" {
		title = t.DisplayKey()
	}
	return fmt.Sprintf("⚠️ Task %q (%s) held by %s has been stuck for %s. Available for takeover.",
		title, t.Source+"/"+t.DisplayKey(), t.Claim().Name, model.Stuck(t, now).Round(time.Minute))
}
