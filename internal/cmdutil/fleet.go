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
// tracker fed by the hub, and the journal for human overrides.
type FleetNumbers struct {
	Tracker *stats.Tracker
	Journal string
}

// overrides re-reads the audit journal into the tracker; a journal not
// yet written holds no overrides.
func (f FleetNumbers) Overrides() ([]model.AuditRecord, error) {
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
	handler, err := metrics.Handler(metrics.New(metrics.Config{Tracker: f.Tracker, Journal: f.Overrides}))
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
