package demo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/mesh"
	"github.com/claimdeck/claimdeck/sources/webserver"
)

// nodeNames are seed 001's codenames; the last one is the one that dies.
var nodeNames = []string{"SANDMAN", "ORACLE", "ORACLE_LOCAL"}

// MeshOptions configure the demo's mesh.
type MeshOptions struct {
	Speed float64 // as Options.Speed (default 60)
	// KillAfter is the real time after which one node goes down; default
	// 40 simulated minutes (40 s at the default speed), so that its DOWN
	// shows within the first minute.
	KillAfter time.Duration
}

// Mesh is the demo's node mesh: seed 001 nodes on 127.0.0.1, each running
// the node-serve logic (mesh.NodeHandler) over the demo queue with its own
// bearer token, and a health poller pinging them on the demo's clock. One
// node is killed mid-run: its server stops answering, and the agents it
// hosts stop working, as if the machine had gone.
type Mesh struct {
	poller  *mesh.Poller
	mu      sync.Mutex
	servers map[string]context.CancelFunc
	down    map[string]bool
}

// StartMesh starts the nodes and the poller; both stop when ctx ends.
func StartMesh(ctx context.Context, src sources.Source, o MeshOptions) (*Mesh, error) {
	if o.Speed <= 0 {
		o.Speed = 60
	}
	if o.KillAfter <= 0 {
		o.KillAfter = time.Duration(float64(40*time.Minute) / o.Speed)
	}
	m := &Mesh{servers: map[string]context.CancelFunc{}, down: map[string]bool{}}
	reg := &mesh.Registry{Path: "demo"}
	for _, name := range nodeNames {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			m.closeAll()
			return nil, fmt.Errorf("demo node %s: %w", name, err)
		}
		tok := mesh.Token(randomToken())
		status := mesh.StatusFrom(name, nil, []mesh.TaskSource{src}, time.Now)
		srv := webserver.New(mesh.NodeHandler(name, tok, status, mesh.NewInbox(tok.Reveal())), webserver.Limits{})
		nodeCtx, stop := context.WithCancel(context.Background())
		m.servers[name] = stop
		go func() { _ = srv.Serve(nodeCtx, ln) }()
		base := "http://" + ln.Addr().String()
		reg.Nodes = append(reg.Nodes, mesh.NodeConfig{Name: name, Webhook: base + "/hooks/agent", Health: base + "/hooks/health", Token: tok})
	}
	// Seed 001 pings every 2 minutes; on the demo's clock that is seconds.
	every := max(time.Duration(float64(2*time.Minute)/o.Speed), 20*time.Millisecond)
	m.poller = mesh.NewPoller(reg, mesh.PollerConfig{Every: every, Timeout: max(every/2, time.Second), DownAfter: 3})
	go func() { _ = m.poller.Run(ctx) }()
	go func() {
		select {
		case <-ctx.Done():
		case <-time.After(o.KillAfter):
			m.Kill(nodeNames[len(nodeNames)-1])
		}
		<-ctx.Done()
		m.closeAll()
	}()
	return m, nil
}

// Names are the nodes' names, for Options.Nodes.
func (m *Mesh) Names() []string { return append([]string(nil), nodeNames...) }

// Up reports whether a node is still running, for Options.NodeUp.
func (m *Mesh) Up(node string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return !m.down[node]
}

// Nodes is the poller's view, for the dashboard's Nodes view.
func (m *Mesh) Nodes() []model.Node { return m.poller.Nodes() }

// Kill takes a node down: its server closes and its agents stop.
func (m *Mesh) Kill(node string) {
	m.mu.Lock()
	stop := m.servers[node]
	m.down[node] = true
	m.mu.Unlock()
	if stop != nil {
		stop()
	}
}

func (m *Mesh) closeAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, stop := range m.servers {
		stop()
	}
}

func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}
