package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/metrics"
	"github.com/claimdeck/claimdeck/sources/stats"
	"github.com/claimdeck/claimdeck/sources/webserver"
)

// fleetNumbers is what the stats view, `stats` and `metrics` read: one
// tracker fed by the hub, and the journal for human overrides.
type fleetNumbers struct {
	tracker *stats.Tracker
	journal string
}

// overrides re-reads the audit journal into the tracker; a journal not
// yet written holds no overrides.
func (f fleetNumbers) overrides() ([]model.AuditRecord, error) {
	recs, err := sources.ReadJournal(f.journal)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	f.tracker.Overrides(recs)
	return recs, nil
}

// report is the numbers at now, with the journal read afresh.
func (f fleetNumbers) report(now time.Time) stats.Report {
	_, _ = f.overrides() // an unreadable journal leaves the overrides last read
	return f.tracker.Report(now)
}

func (a *app) statsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "stats",
		Short: "The fleet's numbers as JSON: throughput, queue and work times, lease ages, overrides",
		Long: `stats polls every configured source once and prints, per source, per
agent, per node and over all: claims, completions, failures and blocks per
minute over the last hour, time from queued to claimed and from claimed to
done (p50/p95), current lease ages and heartbeat gaps, and the human
overrides of the audit log. A single look sees the last hour as the tasks
show it (running claims, finishes by their last edit); the dashboard's Stats
view and "claimdeck metrics" count every transition as it happens.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			srcs, err := a.openForHub(ctx)
			if err != nil {
				return err
			}
			defer closeAll(srcs)
			f := fleetNumbers{tracker: stats.New(), journal: expand(a.cfg.AuditLog)}
			hc := a.readHub(a.cfg.Policy(), dashboardEvery, srcs...)
			hc.Holders, hc.Observe = a.cfg.Mesh.Holders, f.tracker.Observe
			snap := hub.New(hc).Once(ctx)
			if _, err := f.overrides(); err != nil {
				return model.Wrap(model.CodeMisconfigured, "stats", "", err)
			}
			rep := f.tracker.Report(snap.At)
			if a.output == "table" {
				return statsTable(a, rep)
			}
			return a.out().json(map[string]any{"ok": true, "stats": rep})
		},
	}
}

func statsTable(a *app, rep stats.Report) error {
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "GROUP\tCLAIMS\tDONE\tFAILED\tBLOCKED\tWAIT p50/p95\tWORK p50/p95\tLEASES\n")
	row := func(name string, g stats.Group) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\t%d\n", name, g.Claims.Total, g.Completions.Total, g.Failures.Total,
			g.Blocks.Total, pair(g.QueueWait), pair(g.WorkTime), g.LeaseAge.N)
	}
	row("all", rep.Overall)
	for _, g := range rep.Sources {
		row("source "+g.Name, g)
	}
	for _, g := range rep.Agents {
		row("agent "+g.Name, g)
	}
	for _, g := range rep.Nodes {
		row("node "+g.Name, g)
	}
	return tw.Flush()
}

func pair(q stats.Quantiles) string {
	if q.N == 0 {
		return "-"
	}
	d := func(s float64) string { return (time.Duration(s) * time.Second).String() }
	return d(q.P50) + "/" + d(q.P95)
}

func (a *app) metricsCommand() *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:   "metrics --listen ADDR",
		Short: "Serve Prometheus metrics at ADDR/metrics",
		Long: `metrics polls every configured source as the dashboard does (and pings
the mesh when mesh.registry is set) and serves what it sees at
http://ADDR/metrics: tasks by state, lease ages, stuck claims by escalation
level, node health and ping latency, poll durations and errors, lease events
and human overrides. A scrape reads no backend. Example alert rules:
sources/metrics/alerts.yml.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if listen == "" {
				return model.Errorf(model.CodeMisconfigured, "metrics", "", "--listen ADDR is required (e.g. 127.0.0.1:9464)")
			}
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			srcs, err := a.openForHub(ctx)
			if err != nil {
				return err
			}
			defer closeAll(srcs)
			f := fleetNumbers{tracker: stats.New(), journal: expand(a.cfg.AuditLog)}
			hc := a.readHub(a.cfg.Policy(), dashboardEvery, srcs...)
			hc.Observe = f.tracker.Observe
			if err := a.startMesh(ctx, cmd, &hc); err != nil {
				return err
			}
			h := hub.New(hc)
			go h.Run(ctx)
			go drain(ctx, h)
			ln, err := a.listen("metrics", listen)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stderr, "claimdeck metrics: serving http://%s/metrics\n", ln.Addr())
			return serveMetrics(ctx, ln, f)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "address to serve /metrics on, e.g. 127.0.0.1:9464")
	return cmd
}

// drain empties the hub's snapshot channel when nothing else reads it:
// the tracker sees every snapshot through Observe.
func drain(ctx context.Context, h *hub.Hub) {
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
func (a *app) listen(op, addr string) (net.Listener, error) {
	warning, err := webserver.CheckAddr(addr)
	if err != nil {
		return nil, model.Errorf(model.CodeMisconfigured, op, "", "%v", err)
	}
	if warning != "" {
		fmt.Fprintf(a.stderr, "WARNING: claimdeck %s: %s\n", op, warning)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, model.Errorf(model.CodeMisconfigured, op, "", "listen on %s: %v", addr, err)
	}
	return ln, nil
}

// serveMetrics serves /metrics on ln until ctx ends.
func serveMetrics(ctx context.Context, ln net.Listener, f fleetNumbers) error {
	handler, err := metrics.Handler(metrics.New(metrics.Config{Tracker: f.tracker, Journal: f.overrides}))
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
