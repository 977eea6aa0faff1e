package dashboard

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/internal/demo"
	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/lockdir"
	"github.com/claimdeck/claimdeck/sources/sqlstore"
	"github.com/claimdeck/claimdeck/sources/stats"
	"github.com/claimdeck/claimdeck/theme"
	"github.com/claimdeck/claimdeck/tui"
)

// dashboard is what the dashboard and the demo share: open sources, a desk
// with its journal, a hub, and the Bubble Tea program.
type dashboard struct {
	hub     hub.Config // readHub's, with the mesh; the desk is added here
	colors  map[string]string
	journal string
	speed   float64 // the demo's: task times are shown in its time
	metrics string  // address to serve Prometheus metrics on; "": none
}

func (a *app) runDashboard(ctx context.Context, themeName string, d dashboard) error {
	mode, ok := theme.ParseMode(themeName)
	if !ok {
		return model.Errorf(model.CodeMisconfigured, "", "", "--theme %q: want auto, light or dark", themeName)
	}
	if d.journal == "" {
		return cmdutil.NoHome("the audit log", "XDG_DATA_HOME", "audit_log")
	}
	j, err := sources.OpenJournal(d.journal)
	if err != nil {
		return model.Wrap(model.CodeMisconfigured, "audit", "", err)
	}
	defer j.Close()
	history, err := sources.ReadJournal(d.journal)
	if err != nil {
		return model.Wrap(model.CodeMisconfigured, "audit", "", err)
	}
	desk := &sources.Desk{Actor: a.Cfg.Actor, Door: model.DoorDashboard, Journal: j, ReadOnly: a.Cfg.ReadOnlyFor, SelfApprove: a.Cfg.Review.SelfApprove, Grace: a.Cfg.Policy().Grace}
	d.hub.Desk = desk
	// The Stats view counts the team's overrides of the last hour from the
	// sources' shared trails, as `stats` does in any HOME.
	srcs := make([]sources.Source, len(d.hub.Feeds))
	for i, feed := range d.hub.Feeds {
		srcs[i] = feed.Source
	}
	f := cmdutil.TeamNumbers(srcs, time.Now().Add(-stats.Window), cmdutil.TrailEvery)
	d.hub.Observe = f.Tracker.Observe
	h := hub.New(d.hub)
	if d.metrics != "" {
		ln, err := a.Listen("metrics", d.metrics)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		// Counters start at zero with the process: the trails as they
		// stand now are the baseline. The lease events are the view's.
		m := cmdutil.TeamCounters(ctx, srcs)
		m.Tracker = f.Tracker
		go func() { _ = cmdutil.ServeMetrics(ctx, ln, m) }()
	}
	return tui.Run(ctx, tui.Options{
		Stats:      f.Report,
		Hub:        h,
		ReadOnly:   a.Cfg.ReadOnly,
		Theme:      theme.Options{Mode: mode, SourceColors: d.colors}.FromEnv(),
		Keys:       a.Cfg.Keys,
		Filters:    a.Cfg.Filters,
		SaveFilter: a.Cfg.SaveFilter(),
		Journal:    history,
		Alerts:     tui.AlertOptions{Bell: a.Cfg.Alerts.Bell, Desktop: a.Cfg.Alerts.Desktop},
		Speed:      d.speed,
	})
}

// dashboardCommand is `claimdeck` with no arguments: every configured source.
func (a *app) dashboardRun(themeName *string) func(cmd *cobra.Command, _ []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		ctx := cmd.Context()
		srcs, err := a.OpenForHub(ctx) // a broken source stands in with its error
		if err != nil {
			return err
		}
		defer cmdutil.CloseAll(srcs)
		d := dashboard{hub: a.ReadHub(a.Cfg.Policy(), cmdutil.DashboardEvery, srcs...), colors: map[string]string{}, journal: cmdutil.Expand(a.Cfg.AuditLog),
			metrics: a.Cfg.MetricsListen}
		for _, sc := range a.Cfg.Sources {
			if sc.Color != "" {
				d.colors[sc.Name] = sc.Color
			}
		}
		if err = a.StartMesh(ctx, cmd, &d.hub); err != nil {
			return err
		}
		return a.runDashboard(ctx, *themeName, d)
	}
}

func (a *app) demoCommand(themeName *string) *cobra.Command {
	var o demo.Options
	var backend string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "The dashboard over a throwaway queue worked by simulated agents",
		Long: `demo creates a queue in a temporary directory, seeds it with tasks, and
runs simulated agents against it through the real protocol: they claim in
pull order, heartbeat, complete, block, go to review, fail, and sometimes die
mid-lease. They run on three mesh nodes served on 127.0.0.1 and pinged like
seed 001's; one node goes down after about 40 s (view 4, Nodes). Time runs --speed times faster (default 60: the two-hour
escalation ladder shows in two minutes). Try the human actions on it:
c claim as HUMAN, r force-release, x cancel, h hand off.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Check(); err != nil {
				return model.Errorf(model.CodeMisconfigured, "demo", "", "%v", err)
			}
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			dir, err := os.MkdirTemp("", "claimdeck-demo-")
			if err != nil {
				return model.Wrap(model.CodeMisconfigured, "demo", "", err)
			}
			defer os.RemoveAll(dir)
			policy := demo.Policy(o.Speed)
			src, err := openDemoSource(ctx, backend, dir, policy.Lease)
			if err != nil {
				return err
			}
			defer src.Close()
			if a.Cfg.Actor == "" {
				a.Cfg.Actor = "demo"
			}
			nodes, err := demo.StartMesh(ctx, src, demo.MeshOptions{Speed: o.Speed})
			if err != nil {
				return model.Wrap(model.CodeAPIError, "demo", "", err)
			}
			o.Nodes, o.NodeUp = nodes.Names(), nodes.Up
			// The simulation must not outlive the dashboard, nor the other way round.
			errs := make(chan error, 1)
			go func() {
				err := demo.Run(ctx, src, o)
				if ctx.Err() != nil {
					err = nil // stopped with the dashboard (q, or a signal): not a failure
				}
				errs <- err
			}()
			hc := a.ReadHub(policy, time.Second, src)
			hc.Nodes = nodes.Nodes
			err = a.runDashboard(ctx, *themeName, dashboard{
				hub: hc, colors: map[string]string{src.Name(): "green"}, journal: filepath.Join(dir, "audit.jsonl"),
				speed: o.Speed, metrics: a.Cfg.MetricsListen,
			})
			cancel()
			if simErr := <-errs; err == nil && simErr != nil {
				err = simErr
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&backend, "backend", "sqlite", "the queue to simulate: sqlite, lockdir or notion")
	f.IntVar(&o.Agents, "agents", 6, "simulated agents")
	f.IntVar(&o.Tasks, "tasks", 40, "tasks to seed the queue with")
	f.Float64Var(&o.Speed, "speed", 60, "how much faster than real time the simulation runs")
	f.Int64Var(&o.Seed, "seed", 1, "random seed, for a reproducible run")
	return cmd
}

func openDemoSource(ctx context.Context, backend, dir string, lease time.Duration) (sources.Source, error) {
	switch backend {
	case "sqlite":
		return sqlstore.Open(ctx, sqlstore.Config{Name: "demo", Driver: "sqlite", Path: filepath.Join(dir, "queue.db"), Create: true, Lease: lease})
	case "lockdir":
		return lockdir.Open(lockdir.Config{Name: "demo-locks", Path: filepath.Join(dir, ".locks"), Lease: lease})
	case "notion":
		return cmdutil.OpenNotionDemoSource(ctx, dir, lease)
	}
	return nil, model.Errorf(model.CodeMisconfigured, "demo", "", "--backend %q: want sqlite, lockdir or notion", backend)
}
