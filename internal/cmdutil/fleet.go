package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/metrics"
	"github.com/claimdeck/claimdeck/sources/stats"
	"github.com/claimdeck/claimdeck/sources/webserver"
)

// fleetNumbers is what the stats view, `stats` and `metrics` read: one
// tracker fed by the hub, and the human overrides — from the sources'
// shared trails when Trails is set (the team's, the same in every HOME),
// else from the local journal.
type FleetNumbers struct {
	Tracker *stats.Tracker
	Journal string
	Trails  *sources.OverrideFeed
}

// TrailEvery is how often a long-running reader (metrics, the Stats view)
// reads the shared trails for overrides at most.
const TrailEvery = 10 * time.Second

// TeamNumbers is the fleet numbers of srcs with the overrides read from
// their shared trails from start on, at most once per every.
func TeamNumbers(srcs []sources.Source, start time.Time, every time.Duration) FleetNumbers {
	return FleetNumbers{Tracker: stats.New(), Trails: &sources.OverrideFeed{Sources: srcs, Start: start, Every: every}}
}

// TeamCounters is TeamNumbers for counters from now (metrics): the
// trails are read once here, and what they hold already is the baseline,
// not counted. Make it before saying the server is up.
func TeamCounters(ctx context.Context, srcs []sources.Source) FleetNumbers {
	f := TeamNumbers(srcs, time.Now(), TrailEvery)
	f.Trails.Baseline = true
	f.Trails.Read(ctx)
	return f
}

// overrides re-reads the overrides into the tracker: the shared trails'
// (a source whose trail cannot be read is named as not counted), else
// the audit journal's; a journal not yet written holds no overrides.
func (f FleetNumbers) Overrides() ([]model.AuditRecord, error) {
	if f.Trails != nil {
		recs, unread := f.Trails.Read(context.Background())
		f.Tracker.Overrides(recs)
		f.Tracker.OverridesUnread(unread)
		return recs, nil
	}
	recs, err := sources.ReadJournal(f.Journal)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	f.Tracker.Overrides(recs)
	return recs, nil
}

// report is the numbers at now, with the journal read afresh.
func (f FleetNumbers) Report(now time.Time) stats.Report {
	_, _ = f.Overrides() // an unreadable journal leaves the overrides last read
	return f.Tracker.Report(now)
}

// drain empties the hub's snapshot channel when nothing else reads it:
// the tracker sees every snapshot through Observe.
func Drain(ctx context.Context, h *hub.Hub) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.Snapshots():
		}
	}
}

// listen opens a listener for op (metrics, mcp, node serve) under
// webserver.CheckAddr: an explicit host, and a loud warning on stderr when
// it is not loopback.
func (a *Env) Listen(op, addr string) (net.Listener, error) {
	warning, err := webserver.CheckAddr(addr)
	if err != nil {
		return nil, model.Errorf(model.CodeMisconfigured, op, "", "%v", err)
	}
	if warning != "" {
		fmt.Fprintf(a.Stderr, "WARNING: claimdeck %s: %s\n", op, warning)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, model.Errorf(model.CodeMisconfigured, op, "", "listen on %s: %v", addr, err)
	}
	return ln, nil
}

// serveMetrics serves /metrics on ln until ctx ends.
func ServeMetrics(ctx context.Context, ln net.Listener, f FleetNumbers) error {
	cfg := metrics.Config{Tracker: f.Tracker, Journal: f.Overrides}
	if f.Trails != nil {
		cfg.Journal, cfg.Trails = nil, func() ([]model.AuditRecord, map[string]string) { return f.Trails.Read(ctx) }
	}
	handler, err := metrics.Handler(metrics.New(cfg))
	if err != nil {
		return model.Wrap(model.CodeMisconfigured, "metrics", "", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", handler)
	if err := webserver.New(mux, webserver.Limits{}).Serve(ctx, ln); err != nil {
		return model.Wrap(model.CodeAPIError, "metrics", "", err)
	}
	return nil
}
