package stats

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/hub"
)

// Report is the fleet's numbers at one moment.
type Report struct {
	At      time.Time `json:"at"`
	Window  string    `json:"window"`
	Overall Group     `json:"overall"`
	Sources []Group   `json:"sources"`
	Agents  []Group   `json:"agents"`
	Nodes   []Group   `json:"nodes"`
}

// Group is the numbers of one source, agent or node, or of everything.
type Group struct {
	Name string `json:"name,omitempty"`
	// Status and Error are a source's poll status (sources only).
	Status string `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
	// Tasks counts tasks by state (sources and overall only).
	Tasks map[string]int `json:"tasks,omitempty"`

	Claims      Series `json:"claims"`
	Completions Series `json:"completions"`
	Failures    Series `json:"failures"`
	Blocks      Series `json:"blocks"`

	QueueWait    Quantiles `json:"queued_to_claimed"`
	WorkTime     Quantiles `json:"claimed_to_done"`
	LeaseAge     Quantiles `json:"lease_age"`
	HeartbeatGap Quantiles `json:"heartbeat_gap"`

	Overrides map[string]int `json:"overrides,omitempty"` // action → applied overrides in the window
	// Refused counts, by action, the overrides refused in the window.
	Refused map[string]int `json:"overrides_refused,omitempty"`
	// OverridesUnread says why a source's overrides are not counted (its
	// shared trail could not be read): not available, not zero. Overall,
	// it names every such source.
	OverridesUnread string `json:"overrides_unread,omitempty"`
}

// Series counts one kind of event per minute over the window.
type Series struct {
	Total int `json:"total"`
	// PerMinute holds Minutes counts, oldest first; the last is the
	// minute up to the report's time.
	PerMinute []int `json:"per_minute"`
}

// Quantiles summarize durations: how many, the median and the 95th
// percentile (nearest rank), in seconds.
type Quantiles struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50_seconds"`
	P95 float64 `json:"p95_seconds"`
}

// groups gathers the values of one group while a report is built.
type groups struct {
	byName map[string]*builder
}

type builder struct {
	g                          Group
	states                     *[model.StateCanceled + 1]int // sources and overall only
	wait, work, age, heartbeat []time.Duration
}

func (gs *groups) get(name string) *builder {
	b := gs.byName[name]
	if b == nil {
		b = &builder{g: Group{Name: name}}
		for _, s := range b.series() {
			s.PerMinute = make([]int, Minutes)
		}
		gs.byName[name] = b
	}
	return b
}

func (b *builder) series() [kindCount]*Series {
	return [kindCount]*Series{&b.g.Claims, &b.g.Completions, &b.g.Failures, &b.g.Blocks}
}

// Report computes the numbers at now from the last snapshot, the events of
// the window and the journal's overrides.
func (t *Tracker) Report(now time.Time) Report {
	// Copy under the lock and count outside it: the hub waits on this lock
	// to publish, and a report of 100,000 tasks takes milliseconds.
	t.mu.Lock()
	last, events, overrides, unread := t.last, slices.Clone(t.events), t.overrides, t.unread
	t.mu.Unlock()
	all := &groups{byName: map[string]*builder{}}
	srcs := &groups{byName: map[string]*builder{}}
	agents := &groups{byName: map[string]*builder{}}
	nodes := &groups{byName: map[string]*builder{}}
	overall := all.get("")
	overall.states = new([model.StateCanceled + 1]int)
	for _, st := range last.Sources {
		b := srcs.get(st.Name)
		b.g.Status, b.g.Error, b.states = st.Status.String(), st.Err, new([model.StateCanceled + 1]int)
		for task := range st.Tasks.All() {
			if s := task.State; s >= 0 && s <= model.StateCanceled {
				b.states[s]++
				overall.states[s]++
			}
			c := task.Claim()
			if task.State != model.StateClaimed || !c.Held() {
				continue
			}
			age, gap := span(c.ClaimedAt.Time(), now), span(c.LastAlive(), now)
			var in [4]*builder
			for _, g := range groupsOf(&in, overall, b, agents, nodes, c.Name, nodeOf(task, last.Mesh)) {
				if !c.ClaimedAt.IsZero() {
					g.age = append(g.age, age)
				}
				if c.Holder == model.HolderAgent && !c.LastAlive().IsZero() {
					g.heartbeat = append(g.heartbeat, gap)
				}
			}
		}
	}
	for _, e := range events {
		ago := now.Sub(e.at)
		if ago < 0 || ago >= Window {
			continue
		}
		minute := Minutes - 1 - int(ago/time.Minute)
		var in [4]*builder
		for _, g := range groupsOf(&in, overall, srcs.get(e.source), agents, nodes, e.agent, e.node) {
			s := g.series()[e.kind]
			s.Total++
			s.PerMinute[minute]++
			if e.took > 0 {
				switch e.kind {
				case Claim:
					g.wait = append(g.wait, e.took)
				case Complete:
					g.work = append(g.work, e.took)
				}
			}
		}
	}
	for _, r := range overrides {
		ago := now.Sub(r.At)
		if ago < 0 || ago >= Window {
			continue
		}
		for _, g := range []*builder{overall, srcs.get(r.Source)} {
			m := &g.g.Overrides
			if r.Result != model.ResultApplied {
				m = &g.g.Refused
			}
			if *m == nil {
				*m = map[string]int{}
			}
			(*m)[string(r.Action)]++
		}
	}
	var notRead []string
	for _, name := range slices.Sorted(maps.Keys(unread)) {
		srcs.get(name).g.OverridesUnread = unread[name]
		notRead = append(notRead, name+" ("+unread[name]+")")
	}
	if len(notRead) > 0 {
		overall.g.OverridesUnread = "overrides not counted on " + strings.Join(notRead, "; ")
	}
	return Report{
		At: now, Window: Window.String(),
		Overall: overall.done(),
		Sources: srcs.list(), Agents: agents.list(), Nodes: nodes.list(),
	}
}

// groupsOf is every group an event or lease counts in: overall, its
// source, and its agent and node when known. It fills in, so a report of
// 100,000 leases allocates no slice per lease.
func groupsOf(in *[4]*builder, overall, source *builder, agents, nodes *groups, agent, node string) []*builder {
	out := append(in[:0], overall, source)
	if agent != "" {
		out = append(out, agents.get(agent))
	}
	if node != "" {
		out = append(out, nodes.get(node))
	}
	return out
}

func (gs *groups) list() []Group {
	out := make([]Group, 0, len(gs.byName))
	for _, b := range gs.byName {
		out = append(out, b.done())
	}
	slices.SortFunc(out, func(a, b Group) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

func (b *builder) done() Group {
	g := b.g
	if b.states != nil {
		g.Tasks = map[string]int{}
		for s, n := range b.states {
			if n > 0 {
				g.Tasks[model.State(s).String()] = n
			}
		}
	}
	g.QueueWait, g.WorkTime = quantiles(b.wait), quantiles(b.work)
	g.LeaseAge, g.HeartbeatGap = quantiles(b.age), quantiles(b.heartbeat)
	return g
}

// quantiles sorts ds in place and reads the nearest-rank p50 and p95.
func quantiles(ds []time.Duration) Quantiles {
	if len(ds) == 0 {
		return Quantiles{}
	}
	slices.Sort(ds)
	rank := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(ds)))) - 1
		return ds[max(i, 0)].Seconds()
	}
	return Quantiles{N: len(ds), P50: rank(0.50), P95: rank(0.95)}
}

// Unread is the error of a report some of whose sources were not read
// (their poll failed, a relay refused or did not answer): its numbers are
// not the fleet's, and `stats` exits non-zero with it, as `metrics`
// marks such a source down. Nil when every source was read.
func (r Report) Unread() error {
	var bad []string
	for _, g := range r.Sources {
		if g.Status != hub.StatusOK.String() {
			why := g.Status
			if g.Error != "" {
				why += ": " + g.Error
			}
			bad = append(bad, g.Name+" ("+why+")")
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return model.Errorf(model.CodeAPIError, "stats", "", "not every source was read, so these are not the fleet's numbers: %s", strings.Join(bad, "; "))
}
