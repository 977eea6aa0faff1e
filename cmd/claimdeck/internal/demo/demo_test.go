package demo

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/sqlstore"
)

func TestAgentsRunTheProtocol(t *testing.T) {
	src, err := sqlstore.Open(context.Background(), sqlstore.Config{
		Name: "demo", Driver: "sqlite", Path: filepath.Join(t.TempDir(), "demo.db"), Create: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	// At 3000× a 20 min lease is 400 ms: three seconds are many lifetimes.
	if err := Run(ctx, src, Options{Agents: 4, Tasks: 30, Speed: 3000, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	d, err := src.Poll(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	counts := map[model.State]int{}
	for _, task := range d.Tasks {
		counts[task.State]++
	}
	if len(d.Tasks) != 30 {
		t.Fatalf("the demo seeded %d tasks, want 30", len(d.Tasks))
	}
	if counts[model.StateDone] == 0 || counts[model.StateQueued] == 30 {
		t.Fatalf("the agents did no work: %v", counts)
	}
}
