package stats

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/sourcetest/memsource"
)

// rig is a memory queue watched by a real hub that feeds a tracker; every
// look polls the queue once, so what the tracker counts is what the hub saw.
type rig struct {
	t   *testing.T
	mem *memsource.Memory
	hub *hub.Hub
	tr  *Tracker
	now time.Time
}

func newRig(t *testing.T) *rig {
	r := &rig{t: t, mem: memsource.NewMemory("local"), tr: New(), now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	r.mem.Now = func() time.Time { return r.now }
	r.hub = hub.New(hub.Config{Feeds: []hub.Feed{{Source: r.mem}}, Now: func() time.Time { return r.now }, Observe: r.tr.Observe})
	return r
}

func (r *rig) look() { r.hub.Once(context.Background()) }

func (r *rig) claim(id, agent, node string) *model.Task {
	r.t.Helper()
	task, err := r.mem.Claim(context.Background(), id, sources.ClaimRequest{Agent: agent, Node: node, RunID: "run-" + id})
	if err != nil {
		r.t.Fatal(err)
	}
	return task
}

func (r *rig) finish(task *model.Task, s model.State) {
	r.t.Helper()
	if _, err := r.mem.Finish(context.Background(), task.ID, task.Claim().Token, sources.Outcome{State: s, Reason: "r"}); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) put(id string, created time.Time) {
	r.mem.Put(&model.Task{ID: id, Title: id, State: model.StateQueued, CreatedAt: model.StampOf(created), EditedAt: model.StampOf(created)})
}

func TestAnAgentsClaimsAndFinishesCountInTheMinuteTheHubSawThem(t *testing.T) {
	r := newRig(t)
	for _, id := range []string{"a", "b", "c", "d"} {
		r.put(id, r.now.Add(-10*time.Minute))
	}
	r.look() // the first load: nothing has happened yet

	r.now = r.now.Add(time.Minute)
	a := r.claim("a", "SANDMAN", "ops")
	b := r.claim("b", "ORACLE", "lab")
	r.look()
	r.now = r.now.Add(3 * time.Minute)
	r.finish(a, model.StateDone)
	r.finish(b, model.StateBlocked)
	c := r.claim("c", "SANDMAN", "ops")
	r.look()
	r.now = r.now.Add(time.Minute)
	r.finish(c, model.StateFailed)
	r.look()

	rep := r.tr.Report(r.now)
	o := rep.Overall
	if o.Claims.Total != 3 || o.Completions.Total != 1 || o.Blocks.Total != 1 || o.Failures.Total != 1 {
		t.Fatalf("overall claims/completions/blocks/failures = %d/%d/%d/%d, want 3/1/1/1",
			o.Claims.Total, o.Completions.Total, o.Blocks.Total, o.Failures.Total)
	}
	// Claims of a and b were seen 4 minutes before the report, c's 1 minute.
	want := make([]int, Minutes)
	want[Minutes-1-4], want[Minutes-1-1] = 2, 1
	if !slices.Equal(o.Claims.PerMinute, want) {
		t.Errorf("claims per minute ends %v, want %v", o.Claims.PerMinute[Minutes-8:], want[Minutes-8:])
	}
	// Queued 11 minutes before a and b's claim, 14 before c's.
	if o.QueueWait.N != 3 || o.QueueWait.P50 != 660 || o.QueueWait.P95 != 840 {
		t.Errorf("queued→claimed = %+v, want n 3, p50 660 s, p95 840 s", o.QueueWait)
	}
	if o.WorkTime.N != 1 || o.WorkTime.P50 != 180 {
		t.Errorf("claimed→done = %+v, want one of 180 s", o.WorkTime)
	}
	sand := group(t, rep.Agents, "SANDMAN")
	if sand.Claims.Total != 2 || sand.Completions.Total != 1 || sand.Failures.Total != 1 || sand.Blocks.Total != 0 {
		t.Errorf("SANDMAN = %+v", sand)
	}
	if lab := group(t, rep.Nodes, "lab"); lab.Claims.Total != 1 || lab.Blocks.Total != 1 {
		t.Errorf("node lab = %+v", lab)
	}
	if src := group(t, rep.Sources, "local"); src.Status != "ok" || src.Tasks["queued"] != 1 || src.Tasks["done"] != 1 {
		t.Errorf("source local = %+v", src)
	}
}

func TestHeartbeatsAreNotClaimsAndAClaimByAnotherAgentIs(t *testing.T) {
	r := newRig(t)
	r.put("a", r.now)
	r.look()
	a := r.claim("a", "SANDMAN", "")
	r.look()
	r.now = r.now.Add(time.Minute)
	if _, err := r.mem.Heartbeat(context.Background(), "a", a.Claim().Token, time.Minute); err != nil {
		t.Fatal(err)
	}
	r.look()
	// The lease runs out; another agent takes the stale claim over.
	r.now = r.now.Add(30 * time.Minute)
	r.claim("a", "ORACLE", "")
	r.look()
	rep := r.tr.Report(r.now)
	if got := rep.Overall.Claims.Total; got != 2 {
		t.Errorf("claims = %d, want 2 (SANDMAN's and ORACLE's, not the heartbeat)", got)
	}
	if got := group(t, rep.Agents, "ORACLE").Claims.Total; got != 1 {
		t.Errorf("ORACLE claims = %d, want 1", got)
	}
}

func TestAFirstLoadCountsTheLastHourItShowsAndNothingOlder(t *testing.T) {
	r := newRig(t)
	claimed := r.now.Add(-5 * time.Minute)
	r.mem.Put((&model.Task{ID: "running", State: model.StateClaimed, CreatedAt: model.StampOf(claimed.Add(-2 * time.Minute))}).WithClaim(model.Claim{Holder: model.HolderAgent, Name: "SANDMAN", Token: "t", ClaimedAt: model.StampOf(claimed),
		HeartbeatAt: model.StampOf(r.now.Add(-90 * time.Second)), Expires: model.StampOf(r.now.Add(10 * time.Minute))}))
	r.mem.Put((&model.Task{ID: "human", State: model.StateClaimed}).WithClaim(model.Claim{Holder: model.HolderHuman, Name: "HUMAN:alice", Token: "h", ClaimedAt: model.StampOf(r.now.Add(-20 * time.Minute))}))
	r.mem.Put(&model.Task{ID: "done-now", State: model.StateDone, EditedAt: model.StampOf(r.now.Add(-30 * time.Minute))})
	r.mem.Put(&model.Task{ID: "done-long-ago", State: model.StateDone, EditedAt: model.StampOf(r.now.Add(-61 * time.Minute))})
	r.look()
	rep := r.tr.Report(r.now)
	o := rep.Overall
	if o.Claims.Total != 1 || o.Completions.Total != 1 {
		t.Fatalf("claims/completions = %d/%d, want 1/1 (the human claim and the old finish do not count)", o.Claims.Total, o.Completions.Total)
	}
	if o.QueueWait.P50 != 120 {
		t.Errorf("queued→claimed p50 = %v s, want 120", o.QueueWait.P50)
	}
	// Both claims have an age; only the agent's is expected to heartbeat.
	if o.LeaseAge.N != 2 || o.LeaseAge.P50 != 300 || o.LeaseAge.P95 != 1200 {
		t.Errorf("lease age = %+v, want n 2, p50 300 s, p95 1200 s", o.LeaseAge)
	}
	if o.HeartbeatGap.N != 1 || o.HeartbeatGap.P50 != 90 {
		t.Errorf("heartbeat gap = %+v, want one of 90 s", o.HeartbeatGap)
	}
	// The totals count what happened since the tracker started: the
	// hour a first load shows is in the series, not in them, which stand
	// at zero for every kind.
	if tots := r.tr.Totals(); len(tots) != len(Kinds()) {
		t.Errorf("totals after a first load: %v; want every kind of source local", tots)
	}
	for _, tot := range r.tr.Totals() {
		if tot.Source != "local" || tot.Count != 0 {
			t.Errorf("%s %s total after a first load = %d, want 0", tot.Source, tot.Kind, tot.Count)
		}
	}
	// An hour later the window has moved past everything.
	later := r.tr.Report(r.now.Add(Window))
	if later.Overall.Claims.Total != 0 || later.Overall.Completions.Total != 0 {
		t.Errorf("an hour later: %+v", later.Overall)
	}
}

func TestOverridesCountAppliedActionsOfTheWindowAndTotalsCountThemAll(t *testing.T) {
	tr := New()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	tr.Overrides([]model.AuditRecord{
		{At: now.Add(-time.Minute), Source: "local", Action: model.ActionTakeover, Result: "pending", Pending: true},
		{At: now.Add(-time.Minute), Source: "local", Action: model.ActionTakeover, Result: "applied"},
		{At: now.Add(-2 * time.Minute), Source: "local", Action: model.ActionForceRelease, Result: "applied"},
		{At: now.Add(-2 * time.Minute), Source: "local", Action: model.ActionForceRelease, Result: "CONFLICT"},
		{At: now.Add(-2 * time.Hour), Source: "local", Action: model.ActionCancel, Result: "applied"},
	})
	rep := tr.Report(now)
	want := map[string]int{"takeover": 1, "force-release": 1}
	if got := group(t, rep.Sources, "local").Overrides; len(got) != 2 || got["takeover"] != 1 || got["force-release"] != 1 {
		t.Errorf("source overrides = %v, want %v", got, want)
	}
	totals := tr.OverrideTotals(time.Time{})
	wantTotals := []OverrideCount{
		{Action: model.ActionCancel, Result: "applied", Count: 1},
		{Action: model.ActionForceRelease, Result: "CONFLICT", Count: 1},
		{Action: model.ActionForceRelease, Result: "applied", Count: 1},
		{Action: model.ActionTakeover, Result: "applied", Count: 1},
	}
	if !slices.Equal(totals, wantTotals) {
		t.Errorf("override totals = %v, want %v", totals, wantTotals)
	}
	// From a process's start: what the journal recorded before it is not
	// counted.
	totals = tr.OverrideTotals(now.Add(-time.Minute))
	if want := []OverrideCount{{Action: model.ActionTakeover, Result: "applied", Count: 1}}; !slices.Equal(totals, want) {
		t.Errorf("override totals since a minute ago = %v, want %v", totals, want)
	}
}

func TestQuantilesAreNearestRank(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 20; i++ {
		ds = append(ds, time.Duration(21-i)*time.Second)
	}
	if q := quantiles(ds); q.N != 20 || q.P50 != 10 || q.P95 != 19 {
		t.Errorf("quantiles of 1..20 s = %+v, want p50 10, p95 19", q)
	}
	if q := quantiles(nil); q != (Quantiles{}) {
		t.Errorf("quantiles of nothing = %+v", q)
	}
}

func group(t *testing.T, gs []Group, name string) Group {
	t.Helper()
	for _, g := range gs {
		if g.Name == name {
			return g
		}
	}
	t.Fatalf("no group %q in %d groups", name, len(gs))
	return Group{}
}

func TestAClaimThatNamesNoNodeCountsOnTheNodeTheMeshPlacesItsAgentOn(t *testing.T) {
	mem := memsource.NewMemory("local")
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	mem.Now = func() time.Time { return now }
	mem.Put((&model.Task{ID: "a", State: model.StateClaimed}).WithClaim(model.Claim{Holder: model.HolderAgent, Name: "sandman-1",
		Token: "t", ClaimedAt: model.StampOf(now.Add(-time.Minute)), Expires: model.StampOf(now.Add(time.Hour))}))
	tr := New()
	hub.New(hub.Config{Feeds: []hub.Feed{{Source: mem}}, Now: func() time.Time { return now }, Observe: tr.Observe,
		Nodes:   func() []model.Node { return []model.Node{{Name: "SANDMAN", Status: model.NodeHealthy}} },
		Holders: map[string]string{"sandman-1": "SANDMAN"}}).Once(context.Background())
	rep := tr.Report(now)
	if n := group(t, rep.Nodes, "SANDMAN"); n.Claims.Total != 1 || n.LeaseAge.N != 1 {
		t.Errorf("node SANDMAN = claims %d, leases %d; want sandman-1's claim placed there by mesh.holders", n.Claims.Total, n.LeaseAge.N)
	}
}

// TestReportsRunWhileTheHubObserves is for the race detector: the hub
// observes from its poll loops while the view, a scrape and the journal
// reader use the tracker.
func TestReportsRunWhileTheHubObserves(t *testing.T) {
	r := newRig(t)
	for i := range 20 {
		r.put(strconv.Itoa(i), r.now)
	}
	r.look()
	start := r.now
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 50 {
			r.tr.Report(start)
			r.tr.Overrides([]model.AuditRecord{{At: start, Action: model.ActionTakeover, Result: "applied"}})
			r.tr.Totals()
			r.tr.OverrideTotals(time.Time{})
		}
	}()
	// Ten minutes a look: the window moves, and old events are pruned.
	for i := range 20 {
		r.claim(strconv.Itoa(i), "SANDMAN", "ops")
		r.look()
		r.now = r.now.Add(10 * time.Minute)
	}
	<-done
	if got := r.tr.Report(r.now).Overall.Claims.Total; got != 5 {
		t.Errorf("claims in the last hour = %d, want 5 (the looks 10 to 50 minutes ago)", got)
	}
}

// A report with a source that was not read is not the fleet's numbers:
// Unread says which, as API_ERROR, so `stats` exits non-zero.
func TestUnreadNamesTheSourcesNotRead(t *testing.T) {
	r := Report{Sources: []Group{{Name: "prod", Status: "ok"}, {Name: "relayed", Status: "degraded", Error: "the relay refused the token"}}}
	err := r.Unread()
	if model.CodeOf(err) != model.CodeAPIError || !strings.Contains(err.Error(), "relayed (degraded: the relay refused the token)") || strings.Contains(err.Error(), "prod") {
		t.Fatalf("Unread = %v", err)
	}
	r.Sources[1].Status, r.Sources[1].Error = "ok", ""
	if err := r.Unread(); err != nil {
		t.Fatalf("every source read: %v", err)
	}
}
