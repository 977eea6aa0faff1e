package model

import (
	"slices"
	"strings"
	"time"
)

// Mesh is what classification knows of the mesh: each node's health and
// which node each agent runs on. Node and agent names match whatever their
// case, since seed 001's codenames are upper case and configurations are not
// always careful. A nil *Mesh is a mesh with no nodes.
type Mesh struct {
	list     []Node
	nodes    map[string]*Node   // upper-cased name → node
	holders  map[string]string  // upper-cased agent → node name
	listedBy map[string][]*Node // task id, key or ref → nodes whose claimed_tasks name it
}

// NewMesh indexes nodes (as the health poller or the registry last saw them)
// and holders (agent name → node name, the configuration's mesh.holders).
func NewMesh(nodes []Node, holders map[string]string) *Mesh {
	m := &Mesh{list: nodes, nodes: map[string]*Node{}, holders: map[string]string{}, listedBy: map[string][]*Node{}}
	for i := range nodes {
		n := &nodes[i]
		m.nodes[strings.ToUpper(n.Name)] = n
		for _, id := range n.ClaimedTasks {
			m.listedBy[id] = append(m.listedBy[id], n)
		}
	}
	for agent, node := range holders {
		m.holders[strings.ToUpper(agent)] = node
	}
	return m
}

// Nodes are the nodes the mesh was made from; they must not be modified.
func (m *Mesh) Nodes() []Node {
	if m == nil {
		return nil
	}
	return m.list
}

// noMesh is the mesh of a configuration without one: a claim's own node is
// all that places it.
var noMesh Mesh

// Down reports whether the named node is DOWN.
func (m *Mesh) Down(node string) bool {
	if m == nil {
		return false
	}
	n := m.node(node)
	return n != nil && n.Status == NodeDown
}

// node finds a node by name in any case; the dashboard classifies every
// task on each snapshot, so a name already in the registry's case is
// found without building its upper-case copy.
func (m *Mesh) node(name string) *Node {
	if len(m.nodes) == 0 {
		return nil
	}
	if n := m.nodes[name]; n != nil {
		return n
	}
	return m.nodes[strings.ToUpper(name)]
}

// Placement says which node runs a task's holder and how that is known.
type Placement struct {
	Node string // the registry's spelling when the registry lists it
	// By is "claim node", "holder mapping" or "claimed_tasks".
	By   string
	Down bool
}

// String is the placement as a person reads it: the node, DOWN when it
// is, and how it is known unless the claim itself names it ("ORACLE DOWN
// (holder mapping)"); "" when the node is unknown.
func (p Placement) String() string {
	if p.Node == "" {
		return ""
	}
	s := p.Node
	if p.Down {
		s += " DOWN"
	}
	if p.By != "claim node" {
		s += " (" + p.By + ")"
	}
	return s
}

// Place finds the node an AGENT claim runs on: the claim's own node, else
// the holders mapping, else the claimed_tasks a DOWN node last reported. An
// explicit placement wins over a report, and a task that a node not DOWN
// still reports is never placed on a DOWN one, so a claim taken over by a
// healthy node after a crash is left alone. The zero Placement means unknown.
func (m *Mesh) Place(t *Task) Placement {
	if t.State != StateClaimed || t.claimRef().Holder != HolderAgent {
		return Placement{}
	}
	if m == nil {
		m = &noMesh
	}
	node, by := t.claimRef().Node, "claim node"
	if node == "" && len(m.holders) > 0 {
		node, by = m.holders[strings.ToUpper(t.claimRef().Name)], "holder mapping"
	}
	if node != "" {
		p := Placement{Node: node, By: by}
		if n := m.node(node); n != nil {
			p.Node, p.Down = n.Name, n.Status == NodeDown
		}
		return p
	}
	if len(m.listedBy) == 0 {
		return Placement{} // nobody reported claimed_tasks: spare building the ref
	}
	var down []string
	for _, id := range []string{t.ID, t.Key, t.Ref()} {
		if id == "" {
			continue
		}
		for _, n := range m.listedBy[id] {
			if n.Status != NodeDown {
				return Placement{}
			}
			down = append(down, n.Name)
		}
	}
	if len(down) == 0 {
		return Placement{}
	}
	return Placement{Node: slices.Min(down), By: "claimed_tasks", Down: true}
}

// On reports whether t's holder runs on node as Place finds it (the
// claim's node, the holders mapping, a DOWN node's claimed_tasks), in any
// case: a node's detail lists the claims the Stale view places there.
func (m *Mesh) On(t *Task, node string) bool {
	p := m.Place(t)
	return p.Node != "" && strings.EqualFold(p.Node, node)
}

// Cause says why a task needs a person's eye.
type Cause int

// Causes, the first that applies winning in this order.
const (
	CauseNone           Cause = iota
	CauseBroken               // read from bad data: shown, never acted on
	CauseNodeDown             // the holder's node is DOWN: stale at once, whatever the lease says
	CauseHandoffExpired       // a hand-off whose target never came before the reservation ran out
	CauseNoExpiry             // an AGENT claim with no lease expiry (seed 002's inconsistent state)
	CauseLeaseExpired         // the holder stopped heartbeating
	CauseLeaseTooLong         // an AGENT lease longer than Policy.LeaseCeiling: suspicious, judged as ending there
)

// Classification is everything the dashboard, the CLI and the sweep say
// about one task at one instant.
type Classification struct {
	// Level is the rung of seed 001's ladder the task stands on: a claim by
	// time stuck, at least stale on a DOWN node; an expired hand-off stale.
	Level Level
	Cause Cause
	// Placement is the node the holder runs on, when known.
	Placement Placement
	// Stuck is how long the task has waited on somebody who is not coming:
	// since the holder's last sign of life, or since the hand-off expired.
	Stuck time.Duration
	// Reason is Cause in the words a person reads.
	Reason string
	// Changes is when the classification next changes by the clock alone;
	// zero when only a write can change it.
	Changes time.Time
}

// Stale reports whether the task belongs with the stale and escalated ones.
func (c Classification) Stale() bool { return c.Cause != CauseNone }

// Enforced is the level a sweep records on the task: an agent's claim's
// level; nothing for a broken task or an expired hand-off, which hold no
// claim to mark.
func (c Classification) Enforced() Level {
	if c.Cause == CauseBroken || c.Cause == CauseHandoffExpired {
		return LevelNone
	}
	return c.Level
}

// OverCeiling reports whether an agent's claim holds a lease longer than
// the policy's ceiling past its last sign of life: suspicious, whoever
// wrote it (a clock far ahead, an expires_at in 9999).
func OverCeiling(t *Task, p Policy) bool {
	if p.LeaseCeiling <= 0 || t.State != StateClaimed || t.claimRef().Holder != HolderAgent || t.claimRef().Expires.IsZero() {
		return false
	}
	alive := t.claimRef().LastAlive()
	return !alive.IsZero() && t.claimRef().Expires.Time().Sub(alive) > p.LeaseCeiling
}

// Classify is the one rule for how a task stands: its level on the
// escalation ladder, whether its holder's node is DOWN, and why. Every
// view, command and sweep reads a task's standing from it. mesh may be nil.
func Classify(t *Task, now time.Time, p Policy, mesh *Mesh) Classification {
	var c Classification
	if t.Problem() != "" {
		c.Cause, c.Reason = CauseBroken, t.Problem()
		return c
	}
	if r := t.Reserved(); t.State == StateQueued && r != nil && r.For != "" && !r.Until.IsZero() {
		if now.Before(r.Until) {
			c.Changes = r.Until
			return c
		}
		c.Level, c.Cause, c.Stuck = LevelStale, CauseHandoffExpired, now.Sub(r.Until)
		c.Reason = "hand-off to " + r.For + " expired"
		return c
	}
	if t.State != StateClaimed || t.claimRef().Holder != HolderAgent {
		return c
	}
	c.Placement = mesh.Place(t)
	judged, tooLong := t, OverCeiling(t, p)
	if tooLong {
		// The lease as the ceiling ends it: the ladder climbs from there.
		cut := *t
		cut.EditClaim().Expires = StampOf(t.claimRef().LastAlive().Add(p.LeaseCeiling))
		judged = &cut
	}
	c.Level, c.Stuck = Escalation(judged, now, p.Ladder), Stuck(judged, now)
	switch {
	case tooLong && !c.Placement.Down:
		c.Cause = CauseLeaseTooLong
		c.Reason = "lease to " + t.claimRef().Expires.Time().UTC().Format("2006-01-02 15:04") + "Z, past the " + p.LeaseCeiling.String() + " ceiling"
		if c.Level == LevelNone {
			c.Changes = judged.claimRef().Expires.Time()
			return c
		}
	case c.Placement.Down:
		c.Level = max(c.Level, LevelStale)
		if alive := t.claimRef().LastAlive(); c.Stuck == 0 && !alive.IsZero() && alive.Before(now) {
			c.Stuck = now.Sub(alive) // the lease still runs, but its node is gone
		}
		c.Cause, c.Reason = CauseNodeDown, "node "+c.Placement.Node+" DOWN"
	case c.Level == LevelNone:
		c.Changes = t.claimRef().Expires.Time()
		return c
	case Inconsistent(t):
		c.Cause, c.Reason = CauseNoExpiry, "AGENT, no expiry"
	default:
		c.Cause, c.Reason = CauseLeaseExpired, "lease expired"
	}
	if alive := t.claimRef().LastAlive(); !alive.IsZero() {
		for _, d := range []time.Duration{p.Ladder.Urgent, p.Ladder.Notify, p.Ladder.Escalate} {
			if at := alive.Add(d); at.After(now) {
				c.Changes = at
				break
			}
		}
	}
	if e := t.claimRef().Expires; e.Time().After(now) && (c.Changes.IsZero() || e.Time().Before(c.Changes)) {
		c.Changes = e.Time() // a DOWN node's claim starts climbing when its lease runs out
	}
	return c
}
