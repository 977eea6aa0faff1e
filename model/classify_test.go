package model

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestClassifyIssueNodesDown is the case the dashboard and the sweep once
// disagreed on: both nodes DOWN in the registry, holders {worker-7: oracle,
// worker-8: SANDMAN}, the registry spelling the first ORACLE. Both claims,
// their leases still running, are stale at once.
func TestClassifyIssueNodesDown(t *testing.T) {
	p := DefaultPolicy()
	mesh := NewMesh([]Node{{Name: "ORACLE", Status: NodeDown}, {Name: "SANDMAN", Status: NodeDown}},
		map[string]string{"worker-7": "oracle", "worker-8": "SANDMAN"})
	for _, c := range []struct{ agent, node string }{{"worker-7", "ORACLE"}, {"worker-8", "SANDMAN"}} {
		task := (&Task{Source: "q", ID: c.agent, State: StateClaimed}).WithClaim(agentClaim(c.agent, t0.Add(-2*time.Minute), t0.Add(18*time.Minute)))
		got := Classify(task, t0, p, mesh)
		want := Classification{Level: LevelStale, Cause: CauseNodeDown, Placement: Placement{Node: c.node, By: "holder mapping", Down: true},
			Stuck: 2 * time.Minute, Reason: "node " + c.node + " DOWN", Changes: t0.Add(18 * time.Minute)}
		if got != want {
			t.Errorf("%s:\n got  %+v\n want %+v", c.agent, got, want)
		}
		if !got.Stale() || got.Enforced() != LevelStale {
			t.Errorf("%s: Stale()=%v Enforced()=%v, want true and stale", c.agent, got.Stale(), got.Enforced())
		}
	}
	// The same claims with the nodes healthy are ordinary running leases.
	healthy := NewMesh([]Node{{Name: "ORACLE", Status: NodeHealthy}}, map[string]string{"worker-7": "oracle"})
	task := (&Task{State: StateClaimed}).WithClaim(agentClaim("worker-7", t0.Add(-2*time.Minute), t0.Add(18*time.Minute)))
	if got := Classify(task, t0, p, healthy); got.Stale() || got.Placement.Down || got.Placement.Node != "ORACLE" {
		t.Errorf("healthy node: %+v, want a placed, running lease", got)
	}
}

// TestClassifySeed001Ladder quotes seed 001: "10 min Mark stale · 30 min
// Escalate to urgent · 1 hour Notify Telegram mesh group · 2 hours Mark
// escalated, ping humans", on a claim that expires STALE_THRESHOLD after
// its claimed_at.
func TestClassifySeed001Ladder(t *testing.T) {
	p := DefaultPolicy()
	cases := []struct {
		stuck   time.Duration
		level   Level
		cause   Cause
		changes time.Duration // after t0
	}{
		{0, LevelNone, CauseNone, 10 * time.Minute},
		{9 * time.Minute, LevelNone, CauseNone, time.Minute},
		{10 * time.Minute, LevelStale, CauseLeaseExpired, 20 * time.Minute},
		{30 * time.Minute, LevelUrgent, CauseLeaseExpired, 30 * time.Minute},
		{time.Hour, LevelNotify, CauseLeaseExpired, time.Hour},
		{2 * time.Hour, LevelEscalated, CauseLeaseExpired, 0},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.stuck), func(t *testing.T) {
			last := t0.Add(-c.stuck)
			task := (&Task{State: StateClaimed}).WithClaim(agentClaim("SANDMAN", last, last.Add(p.Ladder.Stale)))
			got := Classify(task, t0, p, nil)
			if got.Level != c.level || got.Cause != c.cause {
				t.Fatalf("level %v cause %v, want %v %v", got.Level, got.Cause, c.level, c.cause)
			}
			want := time.Time{}
			if c.changes != 0 {
				want = t0.Add(c.changes)
			}
			if !got.Changes.Equal(want) {
				t.Errorf("Changes = %v, want %v", got.Changes, want)
			}
			if c.level > LevelNone && (got.Reason != "lease expired" || got.Stuck != c.stuck) {
				t.Errorf("reason %q stuck %v, want \"lease expired\" %v", got.Reason, got.Stuck, c.stuck)
			}
		})
	}
}

func TestClassifyCauses(t *testing.T) {
	p := DefaultPolicy()
	mesh := NewMesh([]Node{{Name: "ALPHA", Status: NodeDown}}, nil)
	human := (&Task{State: StateClaimed}).WithClaim(Claim{Holder: HolderHuman, Name: "HUMAN:alice", Node: "ALPHA", ClaimedAt: StampOf(t0.Add(-9 * time.Hour))})
	cases := []struct {
		name   string
		task   *Task
		cause  Cause
		level  Level
		reason string
	}{
		{"bad data is broken whatever else it says",
			(&Task{State: StateClaimed, more: &More{Problem: "status \"wip\" unknown"}}).WithClaim(agentClaim("a", t0.Add(-3*time.Hour), t0.Add(-2*time.Hour))),
			CauseBroken, LevelNone, "status \"wip\" unknown"},
		{"a hand-off nobody picked up in time",
			&Task{State: StateQueued, more: &More{Reservation: &Reservation{For: "ORACLE", Until: t0.Add(-5 * time.Minute)}}},
			CauseHandoffExpired, LevelStale, "hand-off to ORACLE expired"},
		{"a hand-off still waiting for its target",
			&Task{State: StateQueued, more: &More{Reservation: &Reservation{For: "ORACLE", Until: t0.Add(5 * time.Minute)}}},
			CauseNone, LevelNone, ""},
		{"seed 002: Claimed By AGENT but Lock Expires empty",
			(&Task{State: StateClaimed}).WithClaim(Claim{Holder: HolderAgent, Name: "a", ClaimedAt: StampOf(t0.Add(-time.Minute))}),
			CauseNoExpiry, LevelStale, "AGENT, no expiry"},
		{"the claim's own node DOWN, in any case",
			(&Task{State: StateClaimed}).WithClaim(Claim{Holder: HolderAgent, Name: "x", Node: "alpha", ClaimedAt: StampOf(t0), Expires: StampOf(t0.Add(time.Hour))}),
			CauseNodeDown, LevelStale, "node ALPHA DOWN"},
		{"human claims never go stale, even on a DOWN node", human, CauseNone, LevelNone, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Classify(c.task, t0, p, mesh)
			if got.Cause != c.cause || got.Level != c.level || got.Reason != c.reason {
				t.Fatalf("got %v %v %q, want %v %v %q", got.Cause, got.Level, got.Reason, c.cause, c.level, c.reason)
			}
		})
	}
	expired := Classify(cases[1].task, t0, p, nil)
	if expired.Stuck != 5*time.Minute || expired.Enforced() != LevelNone {
		t.Errorf("expired hand-off: stuck %v enforced %v, want 5m and none (no claim to mark)", expired.Stuck, expired.Enforced())
	}
}

// TestPlace covers every way a holder is placed on a node.
func TestPlace(t *testing.T) {
	agent := func(id, name, node string) *Task {
		return (&Task{Source: "q", ID: id, Key: "KEY-" + id, State: StateClaimed}).WithClaim(Claim{Holder: HolderAgent, Name: name, Node: node, ClaimedAt: StampOf(t0), Expires: StampOf(t0.Add(time.Hour))})
	}
	mesh := NewMesh([]Node{
		{Name: "ALPHA", Status: NodeDown, ClaimedTasks: []string{"a-listed", "KEY-a-key", "q/a-ref", "moved", "shared", "human"}},
		{Name: "BRAVO", Status: NodeDegraded, ClaimedTasks: []string{"shared"}},
		{Name: "CHARLIE", Status: NodeHealthy},
	}, map[string]string{"ALPHA-1": "ALPHA", "charlie-1": "CHARLIE"})
	human := agent("human", "HUMAN:alice", "")
	human.EditClaim().Holder = HolderHuman
	done := agent("done", "alpha-1", "ALPHA")
	done.State = StateDone
	cases := []struct {
		task *Task
		want Placement
	}{
		{agent("a-node", "x", "alpha"), Placement{"ALPHA", "claim node", true}},
		{agent("a-mapped", "alpha-1", ""), Placement{"ALPHA", "holder mapping", true}},
		{agent("a-listed", "unmapped", ""), Placement{"ALPHA", "claimed_tasks", true}},
		{agent("a-key", "unmapped", ""), Placement{"ALPHA", "claimed_tasks", true}},
		{agent("a-ref", "unmapped", ""), Placement{"ALPHA", "claimed_tasks", true}},
		{agent("moved", "charlie-1", ""), Placement{"CHARLIE", "holder mapping", false}}, // listed by ALPHA, held on CHARLIE now
		{agent("shared", "unmapped", ""), Placement{}},                                   // a node not DOWN still reports it
		{agent("b-node", "x", "BRAVO"), Placement{"BRAVO", "claim node", false}},         // degraded is not DOWN
		{agent("unknown-node", "x", "ZULU"), Placement{"ZULU", "claim node", false}},     // not in the registry
		{agent("unplaced", "nobody", ""), Placement{}},
		{human, Placement{}},
		{done, Placement{}},
	}
	for _, c := range cases {
		if got := mesh.Place(c.task); got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.task.ID, got, c.want)
		}
	}
	if got := (*Mesh)(nil).Place(cases[0].task); got != (Placement{Node: "alpha", By: "claim node"}) || (*Mesh)(nil).Down("ALPHA") {
		t.Errorf("a nil mesh places a claim on its own node only (got %+v) and holds nothing DOWN", got)
	}
	if !mesh.Down("alpha") || mesh.Down("BRAVO") || mesh.Down("ZULU") {
		t.Error("Down: ALPHA (any case) is DOWN; BRAVO and ZULU are not")
	}
}

// A node's detail and the Stale view give one answer: the claims placed on
// ORACLE by the holders mapping (in another case) and by the claim's own
// node are on it; a claim on SANDMAN and a person's claim are not.
func TestOnPlacesClaimsAsTheStaleViewDoes(t *testing.T) {
	now := time.Now()
	mesh := NewMesh([]Node{{Name: "ORACLE", Status: NodeDown}, {Name: "SANDMAN", Status: NodeHealthy}}, map[string]string{"worker-7": "oracle"})
	claim := func(id, agent, node string, holder HolderKind) *Task {
		return (&Task{ID: id, State: StateClaimed}).WithClaim(Claim{Holder: holder, Name: agent, Node: node, Expires: StampOf(now.Add(time.Hour))})
	}
	tasks := []*Task{
		claim("mapped", "worker-7", "", HolderAgent),
		claim("own", "worker-9", "ORACLE", HolderAgent),
		claim("other", "worker-8", "SANDMAN", HolderAgent),
		claim("person", "HUMAN:alice", "", HolderHuman),
	}
	var on []string
	for _, task := range tasks {
		if mesh.On(task, "ORACLE") {
			on = append(on, task.ID)
		}
		stale := Classify(task, now, DefaultPolicy(), mesh).Cause == CauseNodeDown
		if stale != mesh.On(task, "ORACLE") {
			t.Errorf("%s: on ORACLE %v, but the Stale view says node DOWN %v", task.ID, mesh.On(task, "ORACLE"), stale)
		}
	}
	if !slices.Equal(on, []string{"mapped", "own"}) {
		t.Fatalf("on ORACLE: %v, want mapped and own", on)
	}
	// The task detail's node line says the same: the mapped claim, whose
	// own node field is empty, is on ORACLE, DOWN.
	if got := Classify(tasks[0], now, DefaultPolicy(), mesh).Placement.String(); got != "ORACLE DOWN (holder mapping)" {
		t.Fatalf("the mapped claim's node reads %q", got)
	}
}
