package metrics

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/sqlstore"
	"github.com/claimdeck/claimdeck/sources/stats"
	_ "modernc.org/sqlite"
)

// work claims a new task on the store and completes it, as an agent
// does; between is called between the two.
func work(t *testing.T, store *sqlstore.Store, id string, between func()) {
	t.Helper()
	ctx := context.Background()
	if _, err := store.Create(ctx, sources.NewTask{ID: id, Title: "rotate " + id}); err != nil {
		t.Fatal(err)
	}
	c, err := store.Claim(ctx, id, sources.ClaimRequest{Agent: "SANDMAN", RunID: "run-" + id})
	if err != nil {
		t.Fatal(err)
	}
	between()
	if _, err := store.Finish(ctx, id, c.Claim().Token, sources.Outcome{State: model.StateDone, Reason: "rotated"}); err != nil {
		t.Fatal(err)
	}
}

// sample is the value of one series in a scrape's text, and whether the
// scrape has it.
func sample(body, series string) (string, bool) {
	for line := range strings.Lines(body) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), series+" "); ok {
			return v, true
		}
	}
	return "", false
}

// A process that starts on a store with history — three tasks claimed and
// completed in the last hour, an override in the journal — reports its
// counters at zero on its first scrape, then counts what happens after:
// counters start with the process, as rate() expects. The hour's history
// still fills the Stats view's series.
func TestCountersStartAtZeroWithTheProcessThenCount(t *testing.T) {
	ctx := context.Background()
	store, err := sqlstore.Open(ctx, sqlstore.Config{Name: "local", Driver: "sqlite", Path: filepath.Join(t.TempDir(), "q.db"), Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, id := range []string{"h1", "h2", "h3"} {
		work(t, store, id, func() {})
	}
	journal := []model.AuditRecord{{At: time.Now().Add(-10 * time.Minute), Source: "local", Action: model.ActionTakeover, Result: "applied"}}

	// The process starts.
	tr := stats.New()
	h := hub.New(hub.Config{Feeds: []hub.Feed{{Source: store}}, Observe: tr.Observe})
	c := New(Config{Tracker: tr, Journal: func() ([]model.AuditRecord, error) { return journal, nil }})
	h.Once(ctx)
	body := scrape(t, c)
	for _, ev := range stats.Kinds() {
		series := `claimdeck_lease_events_total{event="` + ev.String() + `",source="local"}`
		if v, ok := sample(body, series); !ok || v != "0" {
			t.Errorf("first scrape: %s = %q (present %v); want 0", series, v, ok)
		}
	}
	if _, ok := sample(body, `claimdeck_overrides_total{action="takeover",result="applied"}`); ok {
		t.Error("first scrape counts an override the journal recorded before the process started")
	}
	if rep := tr.Report(time.Now()); rep.Overall.Completions.Total != 3 {
		t.Errorf("the Stats view's hour holds %d completions; want the 3 the store shows", rep.Overall.Completions.Total)
	}

	// Then an agent works a task, and a person overrides.
	work(t, store, "n1", func() { h.Once(ctx) }) // the hub sees the claim, then the finish
	journal = append(journal, model.AuditRecord{At: time.Now(), Source: "local", Action: model.ActionTakeover, Result: "applied"})
	h.Once(ctx)
	body = scrape(t, c)
	for series, want := range map[string]string{
		`claimdeck_lease_events_total{event="claim",source="local"}`:    "1",
		`claimdeck_lease_events_total{event="complete",source="local"}`: "1",
		`claimdeck_overrides_total{action="takeover",result="applied"}`: "1",
	} {
		if v, ok := sample(body, series); v != want {
			t.Errorf("after one task and one override: %s = %q (present %v); want %s", series, v, ok, want)
		}
	}

	// Each counter carries the process's start as its created timestamp.
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counters := 0
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if m.GetCounter() == nil {
				continue
			}
			counters++
			if ct := m.GetCounter().GetCreatedTimestamp(); !ct.AsTime().Equal(c.start) {
				t.Errorf("%s %v: created %v; want the collector's start %v", f.GetName(), m.GetLabel(), ct.AsTime(), c.start)
			}
		}
	}
	if counters == 0 {
		t.Fatal("no counter gathered")
	}
}
