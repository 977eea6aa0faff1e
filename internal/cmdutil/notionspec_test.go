package cmdutil

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/internal/demo"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/notion/notionspec"
)

// The demo over Notion — its source opening the emulator's database, the
// simulated agents claiming, heartbeating and finishing, the dashboard's
// poll — sends only requests inside Notion's published API description.
func TestNotionDemoRequestsAreInsideNotionsDescription(t *testing.T) {
	spec, err := notionspec.Load()
	if err != nil {
		t.Fatal(err)
	}
	var sent atomic.Int64
	checked := spec.Transport(http.DefaultTransport, func(err error) { t.Errorf("%v", err) })
	DemoNotionTransport = countingTransport{next: checked, n: &sent}
	t.Cleanup(func() { DemoNotionTransport = nil })

	ctx := context.Background()
	src, stop, err := OpenNotionDemo(ctx, t.TempDir(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	run, cancel := context.WithTimeout(ctx, 3*time.Second) // how long the agents work, not a bound on anything
	defer cancel()
	if err := demo.Run(run, src, demo.Options{Agents: 3, Tasks: 8, Speed: 60, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Poll(ctx, sources.Cursor("")); err != nil {
		t.Fatal(err)
	}
	if sent.Load() == 0 {
		t.Fatal("the demo sent no request through the checked transport")
	}
	t.Logf("%d requests checked", sent.Load())
}

type countingTransport struct {
	next http.RoundTripper
	n    *atomic.Int64
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}
