package demo

import (
	"context"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

// The demo's mesh: three nodes on loopback answer the poller with the
// agents' claims; the killed one goes DOWN, its agents stop, and the claims
// they left are DOWN claims while the others' nodes stay healthy.
func TestMeshLosesANode(t *testing.T) {
	src := newDemoQueue(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// At 3000× a ping is every 40 ms. The node is killed once the nodes
	// report claims, not at a time: seeding under -race on a loaded machine
	// can take longer than any fixed delay.
	m, err := StartMesh(ctx, src, MeshOptions{Speed: 3000, KillAfter: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, src, Options{Agents: 6, Tasks: 30, Speed: 3000, Seed: 1, Nodes: m.Names(), NodeUp: m.Up})
	}()
	victim := nodeNames[len(nodeNames)-1]
	var nodes []model.Node
	sawClaims := false
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no node went DOWN (claims reported: %v): %+v", sawClaims, nodes)
		}
		nodes = m.Nodes()
		for _, n := range nodes {
			if len(n.ClaimedTasks) > 0 && !sawClaims {
				sawClaims = true
				m.Kill(victim)
			}
		}
		if nodes[indexOf(nodes, victim)].Status == model.NodeDown {
			break
		}
	}
	for _, n := range nodes {
		if n.Name != victim && n.Status != model.NodeHealthy {
			t.Errorf("%s is %s (%s)", n.Name, n.Status, n.LastErr)
		}
	}
	if !sawClaims {
		t.Error("no node ever reported a claimed task")
	}
	if m.Up(victim) || !m.Up(nodeNames[0]) {
		t.Error("Up does not tell the killed node from the others")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	d, err := src.Poll(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	placed := model.NewMesh(nodes, nil)
	for _, task := range d.Tasks {
		if pl := placed.Place(task); pl.Down && pl.Node != victim {
			t.Errorf("%s counted as a DOWN claim of %s", task.ID, pl.Node)
		}
	}
}

func indexOf(nodes []model.Node, name string) int {
	for i, n := range nodes {
		if n.Name == name {
			return i
		}
	}
	return -1
}
