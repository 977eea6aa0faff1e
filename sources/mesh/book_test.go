package mesh

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

// Two pingers share one record: a dashboard and a cron sweep each see a
// dead node fail, and their failures add up, so the third failed ping —
// whoever sends it — makes the node DOWN for both and for every reader,
// with the time it went down. One good answer brings it back, since then.
func TestBookCountsFailuresAcrossPingersAndEveryReaderAgrees(t *testing.T) {
	dead, live := newTestNode(t, "ORACLE"), newTestNode(t, "SANDMAN")
	reg := registryOf(dead, live)
	book := OpenBook(filepath.Join(t.TempDir(), "mesh-health.json"))
	dash := NewPoller(reg, PollerConfig{DownAfter: 3, Book: book, By: "dashboard"})
	cron := NewPoller(reg, PollerConfig{DownAfter: 3, Book: book, By: "sweep"})
	dead.hang.Store(false)
	dead.srv.Close()
	ctx := context.Background()

	dash.PollOnce(ctx)
	cron.PollOnce(ctx)
	if n := byName(dash.Nodes())["ORACLE"]; n.Status == model.NodeDown {
		t.Fatalf("DOWN after two failed pings: %+v", n)
	}
	before := time.Now()
	third := byName(dash.PollOnce(ctx))["ORACLE"]
	if third.Status != model.NodeDown || third.Failures != 3 || third.Since.Before(before) {
		t.Fatalf("the third failed ping, across two pingers: %+v", third)
	}
	read, err := book.Nodes(reg)
	if err != nil {
		t.Fatal(err)
	}
	got := byName(read)
	if o := got["ORACLE"]; o.Status != model.NodeDown || !o.Since.Equal(third.Since.Truncate(0)) || o.RecordedBy != "dashboard" || o.LastErr == "" {
		t.Fatalf("a reader of the record sees ORACLE as %+v, the dashboard as %+v", o, third)
	}
	if s := got["SANDMAN"]; s.Status != model.NodeHealthy || s.LastSeen.IsZero() {
		t.Fatalf("SANDMAN as read: %+v", s)
	}
	if n := byName(cron.PollOnce(ctx))["ORACLE"]; n.Status != model.NodeDown || n.Failures != 4 || !n.Since.Equal(third.Since.Truncate(0)) {
		t.Fatalf("the other pinger after ORACLE went DOWN: %+v (down since %s)", n, third.Since)
	}
	data, _ := os.ReadFile(book.Path())
	if strings.Contains(string(data), dead.token) || strings.Contains(string(data), dead.srv.URL) {
		t.Fatalf("the record holds a token or a URL:\n%s", data)
	}
}

// The registry is seed 001's own record too: when its scripts write a
// last_seen after the record's last check, the registry's word wins.
func TestRegistryWrittenAfterTheBookWins(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mesh-health.json")
	if err := os.WriteFile(path, []byte(`{"nodes": {"oracle": {"status": "down", "since": "2026-02-01T02:00:00Z", "checked_at": "2026-02-01T02:10:00Z", "failures": 3}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	at := func(s string) time.Time { t, _ := time.Parse(time.RFC3339, s); return t }
	for _, c := range []struct {
		lastSeen string
		want     model.NodeStatus
	}{{"2026-02-01T02:05:00Z", model.NodeDown}, {"2026-02-01T02:15:00Z", model.NodeHealthy}} {
		reg := &Registry{Nodes: []NodeConfig{{Name: "ORACLE", Health: "http://127.0.0.1:1/", Status: model.NodeHealthy, LastSeen: at(c.lastSeen)}}}
		nodes, err := OpenBook(path).Nodes(reg)
		if err != nil || nodes[0].Status != c.want {
			t.Errorf("registry last_seen %s: %v %+v, want %v", c.lastSeen, err, nodes, c.want)
		}
	}
	if err := os.WriteFile(path, []byte(`{"nodes": {"ORACLE": {"status": "down", "since": 5`), 0o600); err != nil {
		t.Fatal(err)
	}
	reg := &Registry{Nodes: []NodeConfig{{Name: "ORACLE", Status: model.NodeHealthy}}}
	nodes, err := OpenBook(path).Nodes(reg)
	if err == nil || !strings.Contains(err.Error(), "node health record "+path) || nodes[0].Status != model.NodeHealthy {
		t.Fatalf("a torn record: %v %+v, want an error naming it and the registry's word", err, nodes)
	}
}
