// Package stats turns the hub's snapshots into the fleet's numbers: claims,
// completions, failures and blocks per minute over the last hour, time from
// queued to claimed and from claimed to done, current lease ages and
// heartbeat gaps, and human overrides — per source, per agent, per node and
// over all. The Stats view, `claimdeck stats` and the Prometheus metrics all
// read them from here, so they agree.
//
// It only folds what the hub already publishes (and the audit journal's
// records): it reads no backend and does no I/O.
package stats

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/hub"
)

// Window is how far back the per-minute series reach; Minutes is their length.
const (
	Window  = time.Hour
	Minutes = int(Window / time.Minute)
)

// Kind is a lease event the tracker counts.
type Kind int

// Lease events.
const (
	Claim Kind = iota
	Complete
	Fail
	Block
	kindCount
)

var kindNames = [kindCount]string{"claim", "complete", "fail", "block"}

func (k Kind) String() string { return kindNames[k] }

// Kinds lists every event kind, in order.
func Kinds() []Kind { return []Kind{Claim, Complete, Fail, Block} }

// event is one counted lease event. Took is queued→claimed for a claim and
// claimed→done for a completion, zero when unknown.
type event struct {
	at     time.Time
	kind   Kind
	source string
	agent  string
	node   string
	took   time.Duration
}

// Tracker folds snapshots into events. Safe for concurrent use: the hub
// calls Observe while views, commands and scrapes call Report.
type Tracker struct {
	mu        sync.Mutex
	last      hub.Snapshot
	seen      map[string]bool // sources whose first load has been folded
	events    []event
	totals    map[string]*[kindCount]uint64 // source → counts since the tracker started
	overrides []model.AuditRecord
	// unread names the sources whose overrides could not be read (no
	// shared trail to read across tasks, or its read failed), with why.
	unread map[string]string
}

// New returns an empty tracker.
func New() *Tracker {
	return &Tracker{seen: map[string]bool{}, totals: map[string]*[kindCount]uint64{}}
}

// Observe folds one snapshot: its transitions become events, and a source's
// first load is read for the claims and finishes of the last hour it already
// shows. It is cheap enough to run on every snapshot the hub publishes.
func (t *Tracker) Observe(s hub.Snapshot) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range s.Sources {
		st := &s.Sources[i]
		if t.seen[st.Name] || st.Updated.IsZero() || st.Loading {
			continue // seed from a source's full load, not its first screen
		}
		t.seen[st.Name] = true
		t.totalled(st.Name)
		for task := range st.Tasks.All() {
			t.seed(task, s.At, s.Mesh)
		}
	}
	for _, tr := range s.Transitions {
		t.transition(tr, s.Mesh)
	}
	cut := s.At.Add(-Window)
	t.events = slices.DeleteFunc(t.events, func(e event) bool { return e.at.Before(cut) })
	t.last = s
}

// seed counts what a task shows of the last hour when its source is first
// seen: a running claim at its claim time, a finish at its last edit. They
// fill the hour's series, not the totals: those count what the tracker saw
// happen, from zero, as a counter starts with its process (a restart that
// began its counters at the hour's finishes made rate() leap).
func (t *Tracker) seed(task *model.Task, now time.Time, mesh *model.Mesh) {
	recent := func(at time.Time) bool { return !at.IsZero() && !at.After(now) && now.Sub(at) < Window }
	c := task.Claim()
	switch task.State {
	case model.StateClaimed:
		if c.Holder == model.HolderAgent && recent(c.ClaimedAt.Time()) {
			t.events = append(t.events, event{at: c.ClaimedAt.Time(), kind: Claim, source: task.Source, agent: c.Name, node: nodeOf(task, mesh), took: span(task.CreatedAt.Time(), c.ClaimedAt.Time())})
		}
	case model.StateDone, model.StateFailed, model.StateBlocked:
		if recent(task.EditedAt.Time()) {
			t.events = append(t.events, event{at: task.EditedAt.Time(), kind: finishKind(task.State), source: task.Source})
		}
	}
}

// transition counts a new agent claim, and a finish with the holder that
// ended it.
func (t *Tracker) transition(tr hub.Transition, mesh *model.Mesh) {
	b, a := tr.Before, tr.After
	if a == nil {
		return
	}
	if NewClaim(b, a) {
		t.add(event{at: tr.At, kind: Claim, source: a.Source, agent: a.Claim().Name, node: nodeOf(a, mesh),
			took: span(a.CreatedAt.Time(), a.Claim().ClaimedAt.Time())})
		return
	}
	if b == nil || b.State == a.State {
		return
	}
	switch a.State {
	case model.StateDone, model.StateFailed, model.StateBlocked:
		e := event{at: tr.At, kind: finishKind(a.State), source: a.Source, agent: b.Claim().Name, node: nodeOf(b, mesh)}
		if e.kind == Complete && b.State == model.StateClaimed {
			// The backend's edit time is the finish when it moved past the
			// claim; a backend that does not keep it leaves the hub's.
			end := a.EditedAt
			if !end.Time().After(b.Claim().ClaimedAt.Time()) {
				end = model.StampOf(tr.At)
			}
			e.took = span(b.Claim().ClaimedAt.Time(), end.Time())
		}
		t.add(e)
	}
}

// nodeOf is the node a task's holder runs on: where the mesh places it
// (the claim's node, mesh.holders, a DOWN node's claimed_tasks), else the
// claim's own word.
func nodeOf(t *model.Task, mesh *model.Mesh) string {
	if p := mesh.Place(t); p.Node != "" {
		return p.Node
	}
	return t.Claim().Node
}

// NewClaim reports whether after is an agent's claim that before did not
// show: a task newly claimed, or claimed again by somebody else or anew.
func NewClaim(before, after *model.Task) bool {
	if after == nil || after.State != model.StateClaimed || after.Claim().Holder != model.HolderAgent {
		return false
	}
	if before == nil || before.State != model.StateClaimed {
		return true
	}
	return before.Claim().Name != after.Claim().Name || !before.Claim().ClaimedAt.Time().Equal(after.Claim().ClaimedAt.Time())
}

func finishKind(s model.State) Kind {
	switch s {
	case model.StateDone:
		return Complete
	case model.StateFailed:
		return Fail
	}
	return Block
}

// span is to - from, or zero when either is unknown or the clocks disagree.
func span(from, to time.Time) time.Duration {
	if from.IsZero() || to.IsZero() || to.Before(from) {
		return 0
	}
	return to.Sub(from)
}

// add counts an event the tracker saw happen: in the hour's series and in
// the totals.
func (t *Tracker) add(e event) {
	t.events = append(t.events, e)
	t.totalled(e.source)[e.kind]++
}

// totalled is the source's totals, every kind at zero until it happens:
// a counter is there from the source's first load, so that the first
// event is a rise from 0, not a series appearing at 1.
func (t *Tracker) totalled(source string) *[kindCount]uint64 {
	n := t.totals[source]
	if n == nil {
		n = new([kindCount]uint64)
		t.totals[source] = n
	}
	return n
}

// Overrides replaces the human overrides the tracker knows with recs: the
// shared trails' (sources.OverrideFeed), or a local journal's (pending
// records are skipped).
func (t *Tracker) Overrides(recs []model.AuditRecord) {
	kept := make([]model.AuditRecord, 0, len(recs))
	for _, r := range recs {
		if !r.Pending {
			kept = append(kept, r)
		}
	}
	t.mu.Lock()
	t.overrides = kept
	t.mu.Unlock()
}

// OverridesUnread names the sources whose overrides the tracker could not
// read, with why: a report shows them as not available, never as zero.
func (t *Tracker) OverridesUnread(unread map[string]string) {
	t.mu.Lock()
	t.unread = unread
	t.mu.Unlock()
}

// Snapshot is the last snapshot observed.
func (t *Tracker) Snapshot() hub.Snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.last
}

// Total is a count of one kind of event on one source since the tracker
// started.
type Total struct {
	Source string
	Kind   Kind
	Count  uint64
}

// Totals are the events the tracker saw happen since it started (not the
// last hour a first load shows), by source and kind, every kind of every
// source it has read, for counters that start at zero with the process
// and only grow.
func (t *Tracker) Totals() []Total {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Total
	for src, n := range t.totals {
		for _, k := range Kinds() {
			out = append(out, Total{Source: src, Kind: k, Count: n[k]})
		}
	}
	slices.SortFunc(out, func(a, b Total) int {
		return cmp.Or(strings.Compare(a.Source, b.Source), cmp.Compare(a.Kind, b.Kind))
	})
	return out
}

// OverrideCount is how many human overrides of one action ended one way.
type OverrideCount struct {
	Action model.Action
	Result string // "applied" or the error code
	Count  int
}

// OverrideTotals counts the overrides the journal holds from since on (all
// of them for the zero time), by action and result, for counters that
// only grow (the journal is append-only): from a process's start, they
// start at zero with it.
func (t *Tracker) OverrideTotals(since time.Time) []OverrideCount {
	t.mu.Lock()
	defer t.mu.Unlock()
	idx := map[[2]string]int{}
	var out []OverrideCount
	for _, r := range t.overrides {
		if r.At.Before(since) {
			continue
		}
		k := [2]string{string(r.Action), r.Result}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, OverrideCount{Action: r.Action, Result: r.Result})
		}
		out[i].Count++
	}
	slices.SortFunc(out, func(a, b OverrideCount) int {
		return cmp.Or(strings.Compare(string(a.Action), string(b.Action)), strings.Compare(a.Result, b.Result))
	})
	return out
}
