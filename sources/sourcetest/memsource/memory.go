// Package memsource holds the in-memory queue that the hub's and the
// dashboard's tests run against. It is a test fixture: a real, complete
// sources.Source (it passes the conformance kit) that keeps everything in a
// map, with knobs to make polls fail. No command wires it.
package memsource

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// Memory is an in-memory task queue.
type Memory struct {
	name string
	// Now is the queue's clock; tests may replace it before first use.
	Now func() time.Time
	// Grace is how long an expired lease waits before the task is rescued.
	Grace time.Duration

	mu      sync.Mutex
	tasks   map[string]*model.Task
	seq     int64            // version counter: every write bumps it
	changed map[string]int64 // id → seq of its last write
	removed map[string]int64
	pollErr error
	polls   int
	hints   chan struct{}
}

// NewMemory returns an empty queue called name.
func NewMemory(name string) *Memory {
	return &Memory{name: name, Now: time.Now, Grace: model.DefaultPolicy().Grace, tasks: map[string]*model.Task{},
		changed: map[string]int64{}, removed: map[string]int64{}}
}

// Name implements sources.Source.
func (m *Memory) Name() string { return m.name }

var (
	_ sources.Source  = (*Memory)(nil)
	_ sources.Watcher = (*Memory)(nil)
)

// Caps implements sources.Source.
func (m *Memory) Caps() sources.Caps {
	return sources.Caps{AtomicClaim: true, Rescue: true, Watch: true, Escalation: true, WriteCheck: true, Trail: true,
		Lacks: []string{"sub-tasks: the in-memory queue records no parent task"}}
}

// FailPolls makes every following poll fail with err (nil heals the queue).
func (m *Memory) FailPolls(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pollErr = err
}

// Polls is how many polls the queue has answered, failed ones included.
func (m *Memory) Polls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.polls
}

// Put stores a task as given (a test's way to set up any state), as if an
// agent had written it.
func (m *Memory) Put(t *model.Task) *model.Task {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := *t
	c.Source = m.name
	m.store(&c)
	return m.copyOf(c.ID)
}

// Remove deletes a task.
func (m *Memory) Remove(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.tasks, id)
	delete(m.changed, id)
	m.seq++
	m.removed[id] = m.seq
	m.hint()
}

// Poll implements sources.Source: the cursor is the version counter.
func (m *Memory) Poll(_ context.Context, since sources.Cursor, opt ...sources.PollOption) (sources.Delta, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.polls++
	if m.pollErr != nil {
		return sources.Delta{}, model.Wrap(model.CodeAPIError, "poll", "", m.pollErr)
	}
	d := sources.Delta{Cursor: sources.Cursor(strconv.FormatInt(m.seq, 10))}
	if since == "" {
		d.Full = true
		for id := range m.tasks {
			d.Tasks = append(d.Tasks, m.copyOf(id))
		}
		d.Tasks, d.Archived = sources.Window(d.Tasks, opt)
		return d, nil
	}
	from, err := strconv.ParseInt(string(since), 10, 64)
	if err != nil {
		return sources.Delta{}, model.Errorf(model.CodeMisconfigured, "poll", "", "bad cursor %q", since)
	}
	for id, at := range m.changed {
		if at > from {
			d.Tasks = append(d.Tasks, m.copyOf(id))
		}
	}
	for id, at := range m.removed {
		if at > from {
			d.Removed = append(d.Removed, id)
		}
	}
	return d, nil
}

// Watch implements sources.Watcher: a hint after every write.
func (m *Memory) Watch(ctx context.Context) (<-chan struct{}, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(chan struct{}, 1)
	m.hints = out
	go func() {
		<-ctx.Done()
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.hints == out {
			m.hints = nil
			close(out)
		}
	}()
	return out, nil
}

// Get implements sources.Source.
func (m *Memory) Get(_ context.Context, id string) (*model.Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tasks[id] == nil {
		return nil, sources.NotFound("get", id)
	}
	return m.copyOf(id), nil
}

// Create implements sources.Source.
func (m *Memory) Create(_ context.Context, n sources.NewTask) (*model.Task, error) {
	if err := n.Check("create"); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if n.ID == "" {
		n.ID = uuid.NewString()
	}
	if m.tasks[n.ID] != nil {
		return nil, model.Errorf(model.CodeConflict, "create", n.ID, "task exists")
	}
	if n.Parent != "" {
		return nil, model.Errorf(model.CodeMisconfigured, "create", n.ID, "the in-memory source has no sub-tasks")
	}
	now := m.Now()
	m.store(&model.Task{Source: m.name, ID: n.ID, Title: n.Title, Description: n.Description,
		State: model.StateQueued, RawStatus: "queued", Class: n.Class, Priority: n.Priority,
		CreatedAt: model.StampOf(now), EditedAt: model.StampOf(now)})
	return m.copyOf(n.ID), nil
}

// Next implements sources.Source.
func (m *Memory) Next(_ context.Context, agent string) (*model.Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t := model.Next(m.all(), agent, m.Now(), m.Grace); t != nil {
		return m.copyOf(t.ID), nil
	}
	return nil, nil
}

// Claim implements sources.Source.
func (m *Memory) Claim(_ context.Context, id string, c sources.ClaimRequest) (*model.Task, error) {
	if err := c.Check("claim", id); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.tasks[id]
	if t == nil {
		return nil, sources.NotFound("claim", id)
	}
	if !model.Claimable(t, c.Agent, m.Now(), m.Grace) {
		return nil, &model.Error{Code: model.CodeConflict, Op: "claim", Task: id, Msg: "held or not claimable", Current: m.copyOf(id)}
	}
	m.claim(t, c)
	return m.copyOf(id), nil
}

// ClaimNext implements sources.Source.
func (m *Memory) ClaimNext(_ context.Context, c sources.ClaimRequest) (*model.Task, error) {
	if err := c.Check("claim", ""); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t := model.Next(m.all(), c.Agent, m.Now(), m.Grace)
	if t == nil {
		return nil, nil
	}
	m.claim(t, c)
	return m.copyOf(t.ID), nil
}

func (m *Memory) claim(t *model.Task, c sources.ClaimRequest) {
	now := m.Now()
	lease := c.Lease
	if lease <= 0 {
		lease = model.DefaultPolicy().Lease
	}
	ev := c.Event(t, now)
	t.State, t.RawStatus = model.StateClaimed, "claimed"
	t.SetClaim(model.Claim{Holder: model.HolderAgent, Name: c.Agent, RunID: c.RunID, Node: c.Node,
		Token: uuid.NewString(), ClaimedAt: model.StampOf(now), HeartbeatAt: model.StampOf(now), Expires: model.StampOf(now.Add(lease))})
	t.SetReservation(nil)
	t.EditMore().History = append(t.More().History, ev)
	m.store(t)
}

// Heartbeat implements sources.Source.
func (m *Memory) Heartbeat(_ context.Context, id, token string, lease time.Duration) (*model.Task, error) {
	if err := sources.CheckHeartbeat("heartbeat", id, token, lease); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t, err := m.held("heartbeat", id, token)
	if err != nil {
		return nil, err
	}
	if lease <= 0 {
		lease = model.DefaultPolicy().Lease
	}
	now := m.Now()
	c := t.EditClaim()
	c.HeartbeatAt, c.Expires = model.StampOf(now), model.StampOf(now.Add(lease))
	t.Escalated = model.LevelNone // the holder is alive after all
	m.store(t)
	return m.copyOf(id), nil
}

// Finish implements sources.Source.
func (m *Memory) Finish(_ context.Context, id, token string, o sources.Outcome) (*model.Task, error) {
	if err := o.Check("finish", id, token); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t, err := m.held("finish", id, token)
	if err != nil {
		return nil, err
	}
	switch o.State {
	case model.StateDone, model.StateBlocked, model.StateReview, model.StateCanceled, model.StateFailed:
	default:
		return nil, model.Errorf(model.CodeMisconfigured, "finish", id, "%s is not an outcome", o.State)
	}
	t.State, t.RawStatus = o.State, o.State.String()
	more := t.More()
	more.Reason, more.Unblock, more.Artifacts = o.Reason, model.UnblockOf(o.UnblockAction, o.NextCheckAt), o.Artifacts
	more.History = append(more.History, o.Event(t.Claim().Name, m.Now()))
	more.ReviewBy = ""
	if o.State == model.StateReview {
		more.ReviewBy = o.By(t.Claim().Name)
	}
	t.SetMore(more)
	t.SetClaim(model.Claim{})
	m.store(t)
	return m.copyOf(id), nil
}

// Takeover implements sources.Source.
func (m *Memory) Takeover(_ context.Context, id string, h sources.Human) (*model.Task, error) {
	return m.human("takeover", id, h, func(t *model.Task, now time.Time) {
		t.State, t.RawStatus = model.StateClaimed, "claimed"
		t.SetClaim(model.Claim{Holder: model.HolderHuman, Name: model.HumanPrefix + h.Actor,
			Token: uuid.NewString(), ClaimedAt: model.StampOf(now), HeartbeatAt: model.StampOf(now)})
		t.SetReservation(nil)
	})
}

// ForceRelease implements sources.Source.
func (m *Memory) ForceRelease(_ context.Context, id string, h sources.Human) (*model.Task, error) {
	return m.human("force-release", id, h, func(t *model.Task, _ time.Time) {
		t.State, t.RawStatus = model.StateQueued, "queued"
		t.SetClaim(model.Claim{})
	})
}

// Cancel implements sources.Source.
func (m *Memory) Cancel(_ context.Context, id string, h sources.Human) (*model.Task, error) {
	return m.human("cancel", id, h, func(t *model.Task, _ time.Time) {
		t.State, t.RawStatus, t.EditMore().Reason = model.StateCanceled, "canceled", h.Reason
		t.SetClaim(model.Claim{})
	})
}

// Handoff implements sources.Source: a human names the version seen, an
// agent its token.
func (m *Memory) Handoff(_ context.Context, id string, h sources.Handoff) (*model.Task, error) {
	if err := h.Check("handoff", id); err != nil {
		return nil, err
	}
	if err := sources.CheckTarget(id, h.To); err != nil {
		return nil, err
	}
	apply := func(t *model.Task, now time.Time) {
		until := time.Time{}
		if h.For > 0 {
			until = now.Add(h.For)
		}
		t.State, t.RawStatus = model.StateQueued, "queued"
		t.SetClaim(model.Claim{})
		t.SetReservation(&model.Reservation{For: h.To, Until: until, By: h.Actor, Reason: h.Reason, Priority: h.Priority})
	}
	if h.Token == "" {
		return m.human("handoff", id, h.Human, apply)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t, err := m.held("handoff", id, h.Token)
	if err != nil {
		return nil, err
	}
	now := m.Now()
	t.EditMore().History = append(t.More().History, model.Event{At: now, Actor: h.Actor, Door: h.Door, Action: "handoff", Reason: h.Reason, Detail: "to " + h.To})
	apply(t, now)
	m.store(t)
	return m.copyOf(id), nil
}

// Comment implements sources.Source: the note joins the task's history.
func (m *Memory) Comment(_ context.Context, id string, n sources.Note) error {
	if err := n.Check("comment", id); err != nil {
		return err
	}
	if strings.TrimSpace(n.Text) == "" {
		return model.Errorf(model.CodeMisconfigured, "comment", id, "the comment is empty")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.tasks[id]
	if t == nil {
		return sources.NotFound("comment", id)
	}
	t.EditMore().History = append(t.More().History, model.Event{At: m.Now(), Actor: n.Author, Action: "comment", Reason: n.Text})
	m.store(t)
	return nil
}

// Record implements sources.Trail: the entry goes in the task's history
// without changing its version, as a row of an audit table would.
func (m *Memory) Record(_ context.Context, id string, e model.Event) error {
	if err := sources.CheckEvent("record", id, e); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.tasks[id]
	if t == nil {
		return sources.NotFound("record", id)
	}
	if e.At.IsZero() {
		e.At = m.Now()
	}
	t.EditMore().History = append(t.More().History, e)
	return nil
}

// TrailSince implements sources.TrailReader: every task's history from
// since on, oldest first.
func (m *Memory) TrailSince(_ context.Context, since time.Time, limit int) ([]sources.TrailEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []sources.TrailEntry
	for id, t := range m.tasks {
		for _, e := range t.More().History {
			if !e.At.Before(since) {
				out = append(out, sources.TrailEntry{Task: id, Event: e})
			}
		}
	}
	return sources.SortTrail(out, limit), nil
}

// Update implements sources.Source, checked with sources.CheckEdit.
func (m *Memory) Update(_ context.Context, id string, e sources.Edit) (*model.Task, error) {
	if err := e.Check("update", id); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.tasks[id]
	if t == nil {
		return nil, sources.NotFound("update", id)
	}
	now := m.Now()
	if err := sources.CheckEdit(t, e, now); err != nil {
		return nil, err
	}
	if e.Title != nil {
		t.Title = *e.Title
	}
	if e.Priority != nil {
		t.Priority = *e.Priority
	}
	if e.Class != nil {
		t.Class = *e.Class
	}
	if e.State != model.StateUnknown {
		t.State, t.RawStatus, t.EditMore().Reason = e.State, e.State.String(), e.Reason
		t.SetClaim(model.Claim{})
	}
	t.EditMore().History = append(t.More().History, model.Event{At: now, Actor: e.Actor, Door: e.Door, Action: e.Action(), Reason: e.Reason, Detail: sources.EditDetail(e)})
	m.store(t)
	return m.copyOf(id), nil
}

// MarkEscalation implements sources.Source: the level is recorded under the
// claim's token and a running lease ends now, as the real backends do.
func (m *Memory) MarkEscalation(_ context.Context, id, token string, level model.Level) error {
	const op = "escalate"
	if level <= model.LevelNone || level > model.LevelEscalated {
		return model.Errorf(model.CodeMisconfigured, op, id, "escalation level %d is not on the ladder", int(level))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t, err := m.held(op, id, token)
	if err != nil {
		return err
	}
	if t.Claim().Holder != model.HolderAgent {
		return sources.Lost(op, id)
	}
	if t.Escalated >= level {
		return nil
	}
	now := m.Now()
	t.Escalated = level
	if t.Claim().Expires.Time().After(now) {
		t.EditClaim().Expires = model.StampOf(now)
	}
	m.store(t)
	return nil
}

// CheckWrite implements sources.Source: memory is always writable.
func (m *Memory) CheckWrite(context.Context) error { return nil }

// Close implements sources.Source.
func (m *Memory) Close() error { return nil }

func (m *Memory) human(op, id string, h sources.Human, apply func(*model.Task, time.Time)) (*model.Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.tasks[id]
	if t == nil {
		return nil, sources.NotFound(op, id)
	}
	if err := sources.CheckHuman(model.Action(op), m.copyOf(id), h); err != nil {
		return nil, err
	}
	now := m.Now()
	t.EditMore().History = append(t.More().History, model.Event{At: now, Actor: h.Actor, Door: h.Door, Action: op, Reason: h.Reason, Detail: sources.HumanDetail(h, t)})
	apply(t, now)
	m.store(t)
	return m.copyOf(id), nil
}

func (m *Memory) held(op, id, token string) (*model.Task, error) {
	t := m.tasks[id]
	if t == nil {
		return nil, sources.NotFound(op, id)
	}
	if !model.TokenCurrent(t, token, m.Now()) {
		return nil, sources.Lost(op, id)
	}
	return t, nil
}

// store records a write: new version, edit time, change mark, push hint.
func (m *Memory) store(t *model.Task) {
	m.seq++
	t.Version = strconv.FormatInt(m.seq, 10)
	if t.EditedAt.IsZero() {
		t.EditedAt = model.StampOf(m.Now())
	}
	m.tasks[t.ID] = t
	m.changed[t.ID] = m.seq
	delete(m.removed, t.ID)
	m.hint()
}

func (m *Memory) hint() {
	if m.hints == nil {
		return
	}
	select {
	case m.hints <- struct{}{}:
	default:
	}
}

func (m *Memory) all() []*model.Task {
	out := make([]*model.Task, 0, len(m.tasks))
	for _, t := range m.tasks {
		out = append(out, t)
	}
	return out
}

// copyOf hands out a copy so callers never share the queue's own record.
func (m *Memory) copyOf(id string) *model.Task {
	c := *m.tasks[id]
	c.EditMore().History = slices.Clone(c.More().History)
	return &c
}

// Archive implements sources.Source over every stored task.
func (m *Memory) Archive(_ context.Context, q sources.ArchiveQuery) ([]*model.Task, error) {
	m.mu.Lock()
	tasks := make([]*model.Task, 0, len(m.tasks))
	for id := range m.tasks {
		tasks = append(tasks, m.copyOf(id))
	}
	m.mu.Unlock()
	return sources.ArchiveOf(tasks, q)
}
