// Package hub is the dashboard's only feed: it polls every source on its own
// interval (and on each push hint from sources that can watch), merges the
// deltas into one task map per source, tracks how each source is doing, and
// publishes immutable snapshots that also carry the mesh's node health and
// the policy, so Snapshot.Classify answers every question about a task's
// standing. Enforcement, when configured, is handed the same snapshots.
// Human actions go through the sources.Desk, so read-only mode, the journal
// and CONFLICT explanations hold here too.
//
// It knows nothing of the terminal, and no backend or mesh package: the
// dashboard drains Snapshots and calls Apply from its own commands.
package hub

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// Defaults for Feed and Config fields left zero.
const (
	DefaultEvery      = 2 * time.Second
	DefaultMaxBackoff = time.Minute
	// CredentialsBackoff is how long a source whose backend refused the
	// credentials waits before it tries them again: a retry every few
	// seconds could lock the account. R (refresh) still tries at once.
	CredentialsBackoff = 15 * time.Minute
	DefaultDebounce    = 100 * time.Millisecond
	DefaultPollTimeout = 30 * time.Second
	// DefaultWindow is how long finished tasks stay in memory.
	DefaultWindow = 24 * time.Hour
	// DefaultFirstPage is how many queued tasks the first screen asks for
	// before the full load: more than any terminal shows.
	DefaultFirstPage  = 200
	DefaultNodesEvery = time.Second
	// DefaultEnforceEvery is how often Enforce runs.
	DefaultEnforceEvery = 30 * time.Second
	// maxTransitions bounds the observed transitions a snapshot carries when
	// the dashboard falls behind; the oldest are dropped first.
	maxTransitions = 1000
)

// Feed is one source and how often to poll it.
type Feed struct {
	Source sources.Source
	Every  time.Duration // zero: DefaultEvery
}

// Config builds a Hub.
type Config struct {
	Feeds []Feed
	// Desk applies human actions; nil makes every action fail as
	// MISCONFIGURED (a dashboard without an actor is read-only).
	Desk        *sources.Desk
	Now         func() time.Time
	MaxBackoff  time.Duration
	Debounce    time.Duration // after a hinted poll, how long further hints are gathered into one
	PollTimeout time.Duration
	// Window keeps tasks that finished within it beside the live ones;
	// older history is counted and read on demand (LoadArchive). Zero is
	// DefaultWindow, negative keeps all history in memory.
	Window time.Duration
	// FirstPage is how many tasks in pull order a source's first load
	// paints before the rest arrives (zero: DefaultFirstPage, negative:
	// wait for the full load).
	FirstPage int
	// Observe, when set, sees every snapshot as it is published, with only
	// the transitions new to it (the stats tracker). It runs under the hub's
	// lock: it must be quick and must not call the hub.
	Observe func(Snapshot)

	// Policy classifies tasks in every snapshot (zero: model.DefaultPolicy).
	Policy model.Policy
	// Nodes returns the mesh as the health poller last saw it; nil means no
	// mesh is configured. The hub reads it every NodesEvery and publishes
	// a snapshot when it changed.
	Nodes      func() []model.Node
	NodesEvery time.Duration // zero: DefaultNodesEvery
	// Holders places agents on nodes (mesh.holders), for classification.
	Holders map[string]string
	// Enforce, when set, is handed the latest snapshot every EnforceEvery
	// (escalation enforcement); what it reports travels to the dashboard
	// in the next snapshot's Notices.
	Enforce      func(ctx context.Context, s Snapshot) []Notice
	EnforceEvery time.Duration // zero: DefaultEnforceEvery

	// Changes fills each snapshot's SourceState.Changed, Gone and Whole,
	// for a consumer that keeps its own copy of the tasks (a relay) and
	// would otherwise compare every task at every snapshot.
	Changes bool
}

// Notice is one thing enforcement did or failed to do, for the Activity view.
type Notice struct {
	At           time.Time
	Source, Task string
	// By is who saw it: "mesh" for a node going DOWN or UP, "hub" for a
	// source lost or back; empty is the sweep's (Config.Enforce).
	By     string
	What   string
	Failed bool
}

// Status is how a source is doing.
type Status int

// Source statuses.
const (
	StatusConnecting Status = iota // not polled successfully yet
	StatusOK
	StatusDegraded // the last poll failed; tasks shown are from the last good one
)

func (s Status) String() string {
	switch s {
	case StatusOK:
		return "ok"
	case StatusDegraded:
		return "degraded"
	}
	return "connecting"
}

// SourceState is one source as the dashboard shows it in the footer.
type SourceState struct {
	Name     string
	Status   Status
	Since    time.Time // when Status last changed
	Updated  time.Time // last successful poll; zero before the first
	Err      string    // last poll error while degraded
	Failures int       // consecutive failed polls
	// Health is what a degraded source's error means and when it is
	// polled again, for views that must say why they are empty.
	Health   SourceHealth
	Watching bool // pushes arrive; polling is the fallback
	// Rescues: the source's next hands out dead holders' claims after the
	// policy's grace (Caps.Rescue), so they belong in its queue.
	Rescues bool
	// Reads is how the source reads its store, where it says (Caps.Reads).
	Reads    string
	PollTook time.Duration // how long the last poll took, failed or not
	Polls    uint64        // polls so far
	PollErrs uint64        // failed polls so far
	// Loading: Tasks is a first screen; the full load is under way.
	Loading bool
	// Archived counts the finished tasks older than the window, as of the
	// last full poll; LoadArchive brings the ones a filter asks for.
	Archived int
	Tasks    Tasks
	// With Config.Changes: the records put (in order, a later one for the
	// same id winning) and the ids removed since the snapshot before the
	// one the consumer received last; Whole when that is not known (a full
	// poll, an archive load) and Tasks must be compared whole.
	Changed []*model.Task
	Gone    []string
	Whole   bool
}

// SourceHealth says how a degraded source failed: the error's code
// (MISCONFIGURED needs a human, API_ERROR may pass) and when the next
// poll is due.
type SourceHealth struct {
	Code  model.Code
	Retry time.Time
	// Every is the source's poll interval, by which lag is judged.
	Every time.Duration
}

// lagAfter is how many poll intervals without an answer make a source that
// is not failing lag: a poll hanging, a database stalled.
const lagAfter = 3

// Lagging reports a source that has answered before, is not known to fail,
// and has not answered for lagAfter poll intervals.
func (s *SourceState) Lagging(now time.Time) bool {
	return s.Status == StatusOK && s.Health.Every > 0 && !s.Updated.IsZero() && now.Sub(s.Updated) > lagAfter*s.Health.Every
}

// Transition is a change the hub observed between two polls of a task.
// Before is nil for a task that appeared, After nil for one that went away.
type Transition struct {
	At            time.Time
	Before, After *model.Task
}

// Snapshot is everything the dashboard needs at one moment. It is
// immutable: tasks are shared between snapshots and must not be modified.
type Snapshot struct {
	Seq     uint64
	At      time.Time
	Sources []SourceState
	// Transitions holds what changed since the previous snapshot the
	// dashboard received, so coalescing never loses activity; Notices
	// likewise holds what enforcement did since.
	Transitions []Transition
	Notices     []Notice
	// Policy and Mesh classify every task (Classify). Mesh is nil when no
	// mesh is configured; its nodes are the Nodes view.
	Policy model.Policy
	Mesh   *model.Mesh
}

// Classify is the task's standing at now (model.Classify with the
// snapshot's policy and mesh): the dashboard's one source of stale, DOWN
// and escalated.
func (s *Snapshot) Classify(t *model.Task, now time.Time) model.Classification {
	return model.Classify(t, now, s.Policy, s.Mesh)
}

// Pooled reports whether t stands in its source's queue: what some agent's
// next would hand out now (model.Pooled with the source's Caps.Rescue).
func (s *Snapshot) Pooled(t *model.Task, now time.Time) bool {
	rescues := false
	for i := range s.Sources {
		if s.Sources[i].Name == t.Source {
			rescues = s.Sources[i].Rescues
			break
		}
	}
	return model.Pooled(t, now, s.Policy.Grace, rescues)
}

// Len is the number of tasks over all sources.
func (s *Snapshot) Len() int {
	n := 0
	for i := range s.Sources {
		n += s.Sources[i].Tasks.Len()
	}
	return n
}

// Hub polls sources and publishes snapshots.
type Hub struct {
	cfg   Config
	feeds []*feed
	out   chan Snapshot

	mu      sync.Mutex
	seq     uint64
	paused  bool
	resume  chan struct{} // closed on Resume
	pending []Transition
	notices []Notice
	mesh    *model.Mesh
	nodes   []model.Node // as last read, to tell a change
	last    Snapshot     // the latest published, for Enforce
}

type feed struct {
	src   sources.Source
	every time.Duration
	kick  chan struct{} // poll now (refresh, push hint, action applied)

	// Guarded by Hub.mu.
	cursor sources.Cursor
	slots  // the source's tasks
	// archive holds the history LoadArchive brought, shown beside tasks.
	archive map[string]*model.Task
	// list is live and the archive's others as published: a snapshot
	// shares it, so it is made anew, never written, when they change
	// (sharing the parts of live that did not).
	list   Tasks
	dirty  bool
	loaded bool // the first load is not activity
	// uncounted: the source's history count costs a read of all of it
	// (Caps.CostlyCount), so full polls never ask for it.
	uncounted bool
	// movedTo is the feed the source's queue moved to (sources.Follow
	// serves it from there), once the hub has said so.
	movedTo string
	state   SourceState
	// applied are the human writes merged at once, by task id, until a
	// poll shows a version other than the one they were made on, or one
	// that began a poll interval after the write.
	applied map[string]appliedWrite
	// began is when the poll being merged began; zero for a merge that is
	// no poll (Apply's own).
	began time.Time
	// changed, gone and whole are the changes since the last publish
	// (Config.Changes).
	changed []*model.Task
	gone    []string
	whole   bool
}

// appliedWrite is a write Apply merged: the version the human acted on
// and the task it left.
type appliedWrite struct {
	seen  string
	after *model.Task
	at    time.Time // when the write landed
}

// New builds a hub; Run starts it.
func New(cfg Config) *Hub {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	if cfg.Debounce <= 0 {
		cfg.Debounce = DefaultDebounce
	}
	if cfg.PollTimeout <= 0 {
		cfg.PollTimeout = DefaultPollTimeout
	}
	if cfg.Window == 0 {
		cfg.Window = DefaultWindow
	}
	if cfg.FirstPage == 0 {
		cfg.FirstPage = DefaultFirstPage
	}
	if cfg.Policy == (model.Policy{}) {
		cfg.Policy = model.DefaultPolicy()
	}
	if cfg.NodesEvery <= 0 {
		cfg.NodesEvery = DefaultNodesEvery
	}
	if cfg.EnforceEvery <= 0 {
		cfg.EnforceEvery = DefaultEnforceEvery
	}
	h := &Hub{cfg: cfg, out: make(chan Snapshot, 1), resume: make(chan struct{})}
	close(h.resume)
	if cfg.Nodes != nil {
		h.nodes = cfg.Nodes()
		h.mesh = model.NewMesh(h.nodes, cfg.Holders)
	}
	now := cfg.Now()
	for _, f := range cfg.Feeds {
		every := f.Every
		if every <= 0 {
			every = DefaultEvery
		}
		h.feeds = append(h.feeds, &feed{src: f.Source, every: every, kick: make(chan struct{}, 1),
			slots: newSlots(0), applied: map[string]appliedWrite{}, uncounted: f.Source.Caps().CostlyCount,
			state: SourceState{Name: f.Source.Name(), Status: StatusConnecting, Since: now, Health: SourceHealth{Every: every}, Rescues: f.Source.Caps().Rescue, Reads: f.Source.Caps().Reads}})
	}
	return h
}

// Snapshots delivers the latest snapshot. It holds at most one: a
// dashboard that falls behind gets the newest, never a backlog, and the
// poll loops never wait for it.
func (h *Hub) Snapshots() <-chan Snapshot { return h.out }

// Run polls every source until ctx ends.
func (h *Hub) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, f := range h.feeds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.loop(ctx, f)
		}()
		if w, ok := f.src.(sources.Watcher); ok && f.src.Caps().Watch {
			wg.Add(1)
			go func() {
				defer wg.Done()
				h.watch(ctx, f, w)
			}()
		}
	}
	if h.cfg.Nodes != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.every(ctx, h.cfg.NodesEvery, h.readNodes)
		}()
	}
	if h.cfg.Enforce != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.every(ctx, h.cfg.EnforceEvery, h.enforce)
		}()
	}
	wg.Wait()
}

// Once polls every source once, all at the same time, and returns the
// snapshot they make: a command's single look at the queues. Run is not
// needed; a source that fails shows degraded with its error.
func (h *Hub) Once(ctx context.Context) Snapshot {
	var wg sync.WaitGroup
	for _, f := range h.feeds {
		wg.Go(func() {
			h.poll(ctx, f)
			h.mu.Lock()
			partial := f.state.Loading
			h.mu.Unlock()
			if partial {
				h.poll(ctx, f) // a first screen: one look means every task
			}
		})
	}
	wg.Wait()
	select {
	case s := <-h.out:
		return s
	default:
		return Snapshot{At: h.cfg.Now()}
	}
}

// every runs f each interval until ctx ends.
func (h *Hub) every(ctx context.Context, interval time.Duration, f func(context.Context)) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			f(ctx)
		}
	}
}

// readNodes publishes the mesh when the poller's view of it changed.
func (h *Hub) readNodes(context.Context) {
	nodes := h.cfg.Nodes()
	h.mu.Lock()
	defer h.mu.Unlock()
	if reflect.DeepEqual(nodes, h.nodes) {
		return
	}
	h.noteNodes(h.nodes, nodes)
	h.nodes, h.mesh = nodes, model.NewMesh(nodes, h.cfg.Holders)
	h.publish()
}

// noteNodes records in Activity each node that went DOWN or came back
// between two readings of the mesh.
func (h *Hub) noteNodes(before, after []model.Node) {
	was := map[string]bool{}
	for _, n := range before {
		was[n.Name] = n.Status == model.NodeDown
	}
	now := h.cfg.Now()
	for _, n := range after {
		down, known := was[n.Name]
		switch {
		case n.Status == model.NodeDown && !down:
			what := "node " + n.Name + " DOWN"
			if n.LastErr != "" {
				what += ": " + model.Redact(n.LastErr)
			}
			h.note(Notice{At: now, By: "mesh", What: what, Failed: true})
		case n.Status != model.NodeDown && down && known:
			h.note(Notice{At: now, By: "mesh", What: "node " + n.Name + " UP again"})
		}
	}
}

// note adds one entry for the Activity view, keeping the newest when the
// dashboard falls behind; the caller holds h.mu and publishes.
func (h *Hub) note(n Notice) {
	h.notices = append(h.notices, n)
	if k := len(h.notices); k > maxTransitions {
		h.notices = slices.Delete(h.notices, 0, k-maxTransitions)
	}
}

// enforce hands Enforce the latest snapshot, then publishes its notices
// and polls every source, so the marks it wrote show at once.
func (h *Hub) enforce(ctx context.Context) {
	h.mu.Lock()
	s := h.last
	h.mu.Unlock()
	if s.Seq == 0 {
		return // nothing read yet
	}
	notices := h.cfg.Enforce(ctx, s)
	if len(notices) > 0 {
		h.mu.Lock()
		for _, n := range notices {
			h.note(n)
		}
		h.publish()
		h.mu.Unlock()
	}
	h.Refresh()
}

// Refresh polls every source now, paused or not.
func (h *Hub) Refresh() {
	for _, f := range h.feeds {
		poke(f.kick)
	}
}

// Pause stops polling (the terminal lost focus); push hints are dropped.
func (h *Hub) Pause() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.paused {
		h.paused = true
		h.resume = make(chan struct{})
	}
}

// Resume restarts polling with an immediate poll of every source.
func (h *Hub) Resume() {
	h.mu.Lock()
	if h.paused {
		h.paused = false
		close(h.resume)
	}
	h.mu.Unlock()
	h.Refresh()
}

// Paused reports whether polling is paused.
func (h *Hub) Paused() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.paused
}

// ReadOnly reports whether human actions on source are refused.
func (h *Hub) ReadOnly(source string) bool {
	return h.cfg.Desk == nil || (h.cfg.Desk.ReadOnly != nil && h.cfg.Desk.ReadOnly(source))
}

// Actor is who human actions are recorded as.
func (h *Hub) Actor() string {
	if h.cfg.Desk == nil {
		return ""
	}
	return h.cfg.Desk.Actor
}

// Seq is the sequence number of the latest snapshot published: one that
// carries every write Apply has returned so far.
func (h *Hub) Seq() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seq
}

// Get reads one task afresh from its source, with the whole trail the
// backend keeps (polls carry only what is cheap to read). Call it from a
// goroutine (a tea.Cmd).
func (h *Hub) Get(ctx context.Context, source, id string) (*model.Task, error) {
	f := h.feed(source)
	if f == nil {
		return nil, model.Errorf(model.CodeMisconfigured, "get", id, "no source named %q", source)
	}
	return f.src.Get(ctx, id)
}

// Apply runs one human action through the desk against the task's own
// source. On success the result is merged at once and a snapshot published,
// then the source is polled to reconcile. Call it from a goroutine (a
// tea.Cmd): it waits for the backend.
func (h *Hub) Apply(ctx context.Context, req sources.Request) (*model.Task, error) {
	op := string(req.Action)
	if req.Seen == nil {
		return nil, model.Errorf(model.CodeMisconfigured, op, "", "no task given")
	}
	if h.cfg.Desk == nil {
		return nil, model.Errorf(model.CodeMisconfigured, op, req.Seen.ID, "no actor: the dashboard is read-only")
	}
	f := h.feed(req.Seen.Source)
	if f == nil {
		return nil, model.Errorf(model.CodeMisconfigured, op, req.Seen.ID, "unknown source %q", req.Seen.Source)
	}
	after, err := h.cfg.Desk.Apply(ctx, f.src, req)
	if after != nil {
		h.mu.Lock()
		h.merge(f, sources.Delta{Tasks: []*model.Task{after}})
		if req.Seen.Version != "" && after.Version != req.Seen.Version {
			f.applied[after.ID] = appliedWrite{seen: req.Seen.Version, after: after, at: time.Now()}
		}
		h.publish()
		h.mu.Unlock()
	}
	poke(f.kick)
	return after, err
}

// PreviewBulk is what a bulk action on tasks, as the operator marked
// them, would apply and refuse (sources.Desk.PreviewBulk). It reads
// nothing, so the dashboard may call it while handling a key.
func (h *Hub) PreviewBulk(req sources.Request, tasks []*model.Task) sources.BulkPreview {
	return h.desk().PreviewBulk(req, tasks)
}

// Precheck is what the desk Apply goes through would refuse req on t for,
// as t reads now (sources.Desk.Precheck): the same door, settings and
// read-only sources, so the dashboard offers what Apply would take. It
// reads nothing.
func (h *Hub) Precheck(t *model.Task, req sources.Request) error {
	return h.desk().Precheck(t, req)
}

// desk is the desk human actions go through; without one every source is
// read-only, and the desk says so.
func (h *Hub) desk() *sources.Desk {
	if h.cfg.Desk == nil {
		return &sources.Desk{ReadOnly: func(string) bool { return true }}
	}
	return h.cfg.Desk
}

// ApplyBulk applies a previewed bulk action task by task through the desk,
// then polls the sources it touched. Call it from a goroutine; cancelling
// ctx stops it between tasks.
func (h *Hub) ApplyBulk(ctx context.Context, p sources.BulkPreview, req sources.Request, progress func(done, total int)) sources.BulkSummary {
	touched := map[*feed]bool{}
	s := h.desk().ApplyBulk(ctx, func(name string) sources.Source {
		f := h.feed(name)
		if f == nil {
			return nil
		}
		touched[f] = true
		return f.src
	}, p, req, progress)
	for f := range touched {
		poke(f.kick)
	}
	return s
}

// fed reports whether a feed other than f polls the source named name.
// Under h.mu.
func (h *Hub) fed(name string, f *feed) bool {
	for _, g := range h.feeds {
		if g != f && g.state.Name == name {
			return true
		}
	}
	return false
}

func (h *Hub) feed(name string) *feed {
	for _, f := range h.feeds {
		if f.src.Name() == name {
			return f
		}
	}
	return nil
}

// loop polls one source: at once, then every interval, sooner on a kick,
// later (doubling up to MaxBackoff) while it fails.
func (h *Hub) loop(ctx context.Context, f *feed) {
	wait := time.Duration(0)
	for {
		timer := time.NewTimer(wait)
		kicked := false
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		case <-f.kick:
			kicked = true
			timer.Stop()
		}
		if !kicked {
			// A timed poll waits out a pause; a kick (refresh, action,
			// resume) polls regardless.
			h.mu.Lock()
			resume := h.resume
			h.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-resume:
			case <-f.kick:
			}
		}
		wait = h.poll(ctx, f)
	}
}

// poll runs one poll and returns how long to wait before the next.
func (h *Hub) poll(ctx context.Context, f *feed) time.Duration {
	h.mu.Lock()
	// The first load paints the first frame: history is counted at the
	// next full poll, where counting is cheap.
	cursor, uncounted := f.cursor, !f.loaded || f.uncounted
	first := 0
	if !f.loaded && !f.state.Loading {
		first = max(h.cfg.FirstPage, 0)
	}
	h.mu.Unlock()
	pctx, cancel := context.WithTimeout(ctx, h.cfg.PollTimeout)
	start := time.Now()
	d, err := f.src.Poll(pctx, cursor, sources.PollOption{FinishedAfter: h.horizon(), Uncounted: uncounted, First: first})
	took := time.Since(start)
	cancel()
	if ctx.Err() != nil {
		return 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.cfg.Now()
	st := &f.state
	st.Polls++
	st.PollTook = took
	if err != nil {
		st.PollErrs++
		st.Err = model.Redact(err.Error())
		if errors.Is(err, context.DeadlineExceeded) {
			st.Err = "poll timed out after " + h.cfg.PollTimeout.String()
		}
		if st.Status != StatusDegraded {
			st.Status, st.Since = StatusDegraded, now
			h.note(Notice{At: now, Source: st.Name, By: "hub", What: "source unreachable: " + st.Err, Failed: true})
		}
		st.Failures++
		wait := retryWait(err, f.every, st.Failures, h.cfg.MaxBackoff)
		st.Health = SourceHealth{Code: model.CodeOf(err), Retry: now.Add(wait), Every: f.every}
		h.publish()
		return wait
	}
	if st.Status == StatusDegraded {
		h.note(Notice{At: now, Source: st.Name, By: "hub", What: "source reachable again after " + now.Sub(st.Since).Round(time.Second).String()})
	}
	if st.Status != StatusOK {
		st.Status, st.Since = StatusOK, now
	}
	st.Err, st.Failures, st.Updated, st.Health = "", 0, now, SourceHealth{Every: f.every}
	if d.Full && !uncounted {
		st.Archived = d.Archived
	}
	st.Loading = d.Partial
	if to := f.src.Name(); to != st.Name && h.fed(to, f) {
		// A source moved to another feed: its tasks are shown there alone.
		if f.movedTo != to {
			f.movedTo = to
			h.note(Notice{At: now, Source: st.Name, By: "hub", What: "moved to " + to + ": its tasks are shown under " + to})
		}
		d = sources.Delta{Full: true, Cursor: d.Cursor}
	}
	f.began = start
	h.merge(f, d)
	f.began = time.Time{}
	h.publish()
	if d.Partial {
		return 0 // the first screen is painted: load the rest at once
	}
	f.cursor = d.Cursor
	return f.every
}

// horizon is when finished tasks become history: zero keeps them all.
func (h *Hub) horizon() time.Time {
	if h.cfg.Window < 0 {
		return time.Time{}
	}
	return h.cfg.Now().Add(-h.cfg.Window)
}

// LoadArchive brings the history q asks for (q.Before is set to the
// window's horizon) from every source into the snapshots, replacing what
// an earlier call brought; a nil q drops it. Call it from a tea.Cmd.
func (h *Hub) LoadArchive(ctx context.Context, q *sources.ArchiveQuery) error {
	found := make([][]*model.Task, len(h.feeds))
	var errs []error
	if q != nil {
		q.Before = h.horizon()
		if q.Before.IsZero() {
			return nil // every task is in memory already
		}
		for i, f := range h.feeds {
			tasks, err := f.src.Archive(ctx, *q)
			if err != nil {
				errs = append(errs, err)
			}
			found[i] = tasks
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, f := range h.feeds {
		if len(f.archive) == 0 && len(found[i]) == 0 {
			continue
		}
		f.archive = make(map[string]*model.Task, len(found[i]))
		for _, t := range found[i] {
			f.archive[t.ID] = t
		}
		f.dirty = true
		f.whole = h.cfg.Changes
	}
	h.publish()
	return errors.Join(errs...)
}

// retryWait is how long a failing source waits before its next poll:
// refused credentials wait CredentialsBackoff at once, anything else
// doubles from the poll interval up to limit.
func retryWait(err error, every time.Duration, failures int, limit time.Duration) time.Duration {
	if errors.Is(err, sources.ErrCredentials) {
		return max(CredentialsBackoff, limit)
	}
	return backoff(every, failures, limit)
}

func backoff(every time.Duration, failures int, limit time.Duration) time.Duration {
	d := every
	for i := 1; i < failures && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// merge folds a delta into the source's map and records transitions. A
// source's first load is not activity, so it records none. Holds h.mu.
func (h *Hub) merge(f *feed, d sources.Delta) {
	now := h.cfg.Now()
	note := func(before, after *model.Task) {
		if f.loaded && transitioned(before, after) {
			h.pending = append(h.pending, Transition{At: now, Before: before, After: after})
		}
	}
	if d.Full {
		next := newSlots(len(d.Tasks))
		for _, t := range d.Tasks {
			t = h.keepApplied(f, t)
			old := f.task(t.ID)
			if old != nil && t.Version != "" && old.Version == t.Version {
				// Unchanged: keep the record the dashboard already knows, so
				// a full reconcile costs it no more than a quiet poll.
				t = old
			}
			next.put(t)
			note(old, t)
		}
		horizon := h.horizon()
		for _, t := range f.live {
			if next.task(t.ID) == nil {
				delete(f.applied, t.ID)
				if !model.Archived(t, horizon) {
					note(t, nil) // gone; a task aging into history is not activity
				}
			}
		}
		f.slots = next
	} else {
		for _, t := range d.Tasks {
			t = h.keepApplied(f, t)
			note(f.put(t), t)
			if h.cfg.Changes {
				f.changed = append(f.changed, t)
			}
		}
		for _, id := range d.Removed {
			if t := f.task(id); t != nil {
				note(t, nil)
				f.drop(id)
				if h.cfg.Changes {
					f.gone = append(f.gone, id)
				}
			}
			delete(f.applied, id)
		}
	}
	if d.Full && h.cfg.Changes {
		f.whole, f.changed, f.gone = true, nil, nil
	}
	if n := len(h.pending); n > maxTransitions {
		h.pending = slices.Delete(h.pending, 0, n-maxTransitions)
	}
	f.dirty = f.dirty || d.Full || len(d.Tasks) > 0 || len(d.Removed) > 0
	f.loaded = f.loaded || !d.Partial
}

// keepApplied is the rule "an applied write beats an older poll": a poll
// that began before a human's write landed answers the version the human
// acted on, and must not put it back. A task polled at that version gives
// way to the write's result; any other version retires the write, since
// the source has moved past it. So does a poll that began a whole poll
// interval after the write (a source's reads may lag its writes by less):
// the task is back at the version the human acted on — a version that
// hashes what a task shows, edited twice within Notion's minute, comes
// back — and the source is right. Holds h.mu.
func (h *Hub) keepApplied(f *feed, t *model.Task) *model.Task {
	w, ok := f.applied[t.ID]
	settled := !f.began.IsZero() && f.began.After(w.at.Add(f.every))
	switch {
	case !ok || t == w.after:
		return t
	case t.Version == w.seen && !settled:
		return w.after
	}
	delete(f.applied, t.ID)
	return t
}

// transitioned says whether a change is worth a line in the activity view:
// state or holder, not every heartbeat.
func transitioned(before, after *model.Task) bool {
	if before == nil || after == nil {
		return true
	}
	return before.State != after.State || before.Claim().Holder != after.Claim().Holder ||
		before.Claim().Name != after.Claim().Name || before.ReservedFor() != after.ReservedFor()
}

// publish replaces whatever snapshot is waiting with a fresh one, carrying
// over the transitions of the one it replaces. Holds h.mu, so it is the only
// sender and the second send cannot block.
func (h *Hub) publish() {
	h.seq++
	s := Snapshot{Seq: h.seq, At: h.cfg.Now(), Sources: make([]SourceState, len(h.feeds)), Policy: h.cfg.Policy, Mesh: h.mesh}
	for i, f := range h.feeds {
		if f.dirty {
			var extra []*model.Task
			for id, t := range f.archive {
				if f.task(id) == nil {
					extra = append(extra, t)
				}
			}
			f.list = f.publish(extra)
			f.dirty = false
		}
		s.Sources[i] = f.state
		s.Sources[i].Tasks = f.list
		s.Sources[i].Changed, s.Sources[i].Gone, s.Sources[i].Whole = f.changed, f.gone, f.whole
		f.changed, f.gone, f.whole = nil, nil, false
	}
	h.last = s
	if h.cfg.Observe != nil {
		o := s
		o.Transitions = h.pending
		h.cfg.Observe(o)
	}
	select {
	case old := <-h.out:
		h.pending = append(old.Transitions, h.pending...)
		h.notices = append(old.Notices, h.notices...)
		for i := range s.Sources { // the replaced snapshot's changes come first
			o, n := &old.Sources[i], &s.Sources[i]
			n.Changed, n.Gone, n.Whole = append(o.Changed, n.Changed...), append(o.Gone, n.Gone...), o.Whole || n.Whole
		}
	default:
	}
	s.Transitions, h.pending = h.pending, nil
	s.Notices, h.notices = h.notices, nil
	h.out <- s
}

// watch turns push hints into polls. The first hint polls at once; hints
// within Debounce after a poll are gathered into one more poll at its end,
// and so on while they keep coming: a lone change is on screen one poll
// after its hint, and a burst costs one poll per Debounce. When the watch
// ends the timer keeps polling.
func (h *Hub) watch(ctx context.Context, f *feed, w sources.Watcher) {
	hints, err := w.Watch(ctx)
	if err != nil {
		return
	}
	h.setWatching(f, true)
	defer h.setWatching(f, false)
	debounce := h.cfg.Debounce
	if g, ok := f.src.(gatherer); ok {
		debounce = g.Gather()
	}
	// A source that gathers its hints itself (debounce 0) has no
	// cooldown: each hint is a poll, and the hints that come while one
	// runs make one more.
	var cooldown *time.Timer
	var cooled <-chan time.Time // nil, never ready, without a cooldown
	if debounce > 0 {
		cooldown = time.NewTimer(debounce)
		cooldown.Stop()
		defer cooldown.Stop()
		cooled = cooldown.C
	}
	cooling, pending := false, false
	kick := func() {
		if !h.Paused() {
			poke(f.kick)
		}
		if cooldown != nil {
			cooldown.Reset(debounce)
			cooling = true
		}
		pending = false
	}
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-hints:
			if !ok {
				if pending {
					kick()
				}
				return
			}
			if cooling {
				pending = true
			} else {
				kick()
			}
		case <-cooled:
			cooling = false
			if pending {
				kick()
			}
		}
	}
}

// gatherer is a source that says how long its hints are gathered into
// one poll, in place of Config.Debounce; 0 polls at each hint, without
// a cooldown: a relay's pushed changes come gathered already, and
// polling them costs the server nothing.
type gatherer interface {
	Gather() time.Duration
}

func (h *Hub) setWatching(f *feed, on bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f.state.Watching = on
	h.publish()
}

func poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
