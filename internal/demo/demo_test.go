package demo

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/sqlstore"
)

func TestAgentsRunTheProtocol(t *testing.T) {
	src := newDemoQueue(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// At 3000× a 20 min lease is 400 ms. The run stops once agents have
	// finished work, not at a set time: seeding under -race can be slow.
	done := make(chan error, 1)
	go func() { done <- Run(ctx, src, Options{Agents: 4, Tasks: 30, Speed: 3000, Seed: 1}) }()
	var (
		d   sources.Delta
		err error
	)
	counts := map[model.State]int{}
	for deadline := time.Now().Add(time.Minute); counts[model.StateDone] < 3 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if d, err = src.Poll(context.Background(), ""); err != nil {
			t.Fatal(err)
		}
		clear(counts)
		for _, task := range d.Tasks {
			counts[task.State]++
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(d.Tasks) < 30 {
		t.Fatalf("the demo holds %d tasks, want the 30 seeded and any that arrived", len(d.Tasks))
	}
	if counts[model.StateDone] == 0 { // the feed keeps the queue full: done work is the sign
		t.Fatalf("the agents did no work: %v", counts)
	}
}

// The demo never drains: with a small queue and busy agents, new work
// arrives while fewer tasks than were seeded wait.
func TestNewWorkArrives(t *testing.T) {
	src := newDemoQueue(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, src, Options{Agents: 4, Tasks: 5, Speed: 3000, Seed: 1}) }()
	var tasks int
	for deadline := time.Now().Add(time.Minute); tasks <= 8 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		d, err := src.Poll(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		tasks = len(d.Tasks)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if tasks <= 8 {
		t.Fatalf("no new work arrived: %d tasks after 5 were seeded", tasks)
	}
}

// The first minute of a demo at the default speed shows a blocked task
// with its reason, a review, a failed task and a claim gone stale.
func TestTheOpeningShowsEveryStateAnOnCallPersonMeets(t *testing.T) {
	src := newDemoQueue(t)
	const speed = 600 // ten times the default: the opening's minute in six seconds
	p := Policy(speed)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	// Four agents, four tasks: each agent's first task is the only one it
	// gets, so what shows is the opening, not the random mix after it.
	go func() { done <- Run(ctx, src, Options{Agents: 4, Tasks: 4, Speed: speed, Seed: 7}) }()
	seen := map[string]bool{}
	for range 600 {
		time.Sleep(50 * time.Millisecond)
		d, err := src.Poll(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range d.Tasks {
			switch {
			case task.State == model.StateBlocked && task.More().Reason != "" && task.UnblockAction() != "" && !task.NextCheckAt().IsZero():
				seen["blocked"] = true
			case task.State == model.StateReview:
				seen["review"] = true
			case task.State == model.StateFailed && task.More().Reason != "":
				seen["failed"] = true
			case model.Escalation(task, time.Now(), p.Ladder) > model.LevelNone:
				seen["stale"] = true
			}
		}
		if len(seen) == 4 {
			break
		}
	}
	cancel()
	<-done
	if len(seen) != 4 {
		t.Fatalf("after the opening the demo shows only %v", seen)
	}
}

func TestBadOptionsAreRefused(t *testing.T) {
	for _, o := range []Options{{Agents: 0, Tasks: 1, Speed: 60}, {Agents: 1, Tasks: -3, Speed: 60}, {Agents: 1, Tasks: 1, Speed: 0},
		{Agents: 1, Tasks: 1, Speed: 1e9}} {
		if err := o.Check(); err == nil || !strings.HasPrefix(err.Error(), "--") {
			t.Errorf("%+v: %v, want a refusal naming the flag", o, err)
		}
	}
	if err := (Options{Agents: 6, Tasks: 40, Speed: 60}).Check(); err != nil {
		t.Errorf("the defaults are refused: %v", err)
	}
}

// newDemoQueue is an empty embedded queue, as the demo makes one, closed
// when the test ends.
func newDemoQueue(t *testing.T) *sqlstore.Store {
	t.Helper()
	src, err := sqlstore.Open(context.Background(), sqlstore.Config{
		Name: "demo", Driver: "sqlite", Path: filepath.Join(t.TempDir(), "demo.db"), Create: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}
