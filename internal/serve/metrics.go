package serve

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/hub"
)

func (a *app) metricsCommand() *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:   "metrics --listen ADDR",
		Short: "Serve Prometheus metrics at ADDR/metrics",
		Long: `metrics polls every configured source as the dashboard does (and pings
the mesh when mesh.registry is set) and serves what it sees at
http://ADDR/metrics: tasks by state, lease ages, stuck claims by escalation
level, node health and ping latency, poll durations and errors, lease events
and human overrides. A scrape reads no backend but the sources' shared
trails, at most every 10 s: claimdeck_overrides_total counts the overrides
they gained since the start, made from any HOME (a read-only unit too);
claimdeck_overrides_trail_up{source} is 0 where a source's trail cannot be
read (the store is down), whose overrides are then not counted. Example
alert rules: sources/metrics/alerts.yml.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if listen == "" {
				return model.Errorf(model.CodeMisconfigured, "metrics", "", "--listen ADDR is required (e.g. 127.0.0.1:9464)")
			}
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			srcs, err := a.OpenForHub(ctx)
			if err != nil {
				return err
			}
			defer cmdutil.CloseAll(srcs)
			// Overrides from the sources' shared trails: a read-only
			// unit counts the team's, made from any HOME.
			f := cmdutil.TeamCounters(ctx, srcs)
			hc := a.ReadHub(a.Cfg.Policy(), cmdutil.DashboardEvery, srcs...)
			hc.Observe = f.Tracker.Observe
			if err := a.StartMesh(ctx, cmd, &hc); err != nil {
				return err
			}
			h := hub.New(hc)
			go h.Run(ctx)
			go cmdutil.Drain(ctx, h)
			ln, err := a.Listen("metrics", listen)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.Stderr, "claimdeck metrics: serving http://%s/metrics\n", ln.Addr())
			return cmdutil.ServeMetrics(ctx, ln, f)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "address to serve /metrics on, e.g. 127.0.0.1:9464")
	return cmd
}
