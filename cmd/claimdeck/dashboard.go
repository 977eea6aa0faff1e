package main

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/cmd/claimdeck/internal/demo"
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
		return noHome("the audit log", "XDG_DATA_HOME", "audit_log")
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
	desk := &sources.Desk{Actor: a.cfg.Actor, Door: model.DoorDashboard, Journal: j, ReadOnly: a.cfg.readOnly, SelfApprove: a.cfg.Review.SelfApprove}
	d.hub.Desk = desk
	f := fleetNumbers{tracker: stats.New(), journal: d.journal}
	d.hub.Observe = f.tracker.Observe
	h := hub.New(d.hub)
	if d.metrics != "" {
		ln, err := a.listen("metrics", d.metrics)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() { _ = serveMetrics(ctx, ln, f) }()
	}
	return tui.Run(ctx, tui.Options{
		Stats:      f.report,
		Hub:        h,
		ReadOnly:   a.cfg.ReadOnly,
		Theme:      theme.Options{Mode: mode, SourceColors: d.colors}.FromEnv(),
		Keys:       a.cfg.Keys,
		Filters:    a.cfg.Filters,
		SaveFilter: a.cfg.saveFilter(),
		Journal:    history,
		Alerts:     tui.AlertOptions{Bell: a.cfg.Alerts.Bell, Desktop: a.cfg.Alerts.Desktop},
		Speed:      d.speed,
	})
}

// dashboardEvery is how often a dashboard polls each source between the
// hints of a source that can watch.
const dashboardEvery = hub.DefaultEvery

// readHub is the hub a dashboard reads its sources with: the policy, the
// history window, every source polled each every. A relay reads with the
// same (relay.HubConfig over it), so what it serves is what a dashboard
// reading the store would see.
func (a *app) readHub(policy model.Policy, every time.Duration, srcs ...sources.Source) hub.Config {
	hc := hub.Config{Policy: policy, Window: a.cfg.HistoryWindow}
	for _, src := range srcs {
		hc.Feeds = append(hc.Feeds, hub.Feed{Source: src, Every: every})
	}
	return hc
}

// dashboardCommand is `claimdeck` with no arguments: every configured source.
func (a *app) dashboardRun(themeName *string) func(cmd *cobra.Command, _ []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		ctx := cmd.Context()
		srcs, err := a.openForHub(ctx) // a broken source stands in with its error
		if err != nil {
			return err
		}
		defer closeAll(srcs)
		d := dashboard{hub: a.readHub(a.cfg.Policy(), dashboardEvery, srcs...), colors: map[string]string{}, journal: expand(a.cfg.AuditLog),
			metrics: a.cfg.MetricsListen}
		for _, sc := range a.cfg.Sources {
			if sc.Color != "" {
				d.colors[sc.Name] = sc.Color
			}
		}
		if err = a.startMesh(ctx, cmd, &d.hub); err != nil {
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
			if a.cfg.Actor == "" {
				a.cfg.Actor = "demo"
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
			hc := a.readHub(policy, time.Second, src)
			hc.Nodes = nodes.Nodes
			err = a.runDashboard(ctx, *themeName, dashboard{
				hub: hc, colors: map[string]string{src.Name(): "green"}, journal: filepath.Join(dir, "audit.jsonl"),
				speed: o.Speed, metrics: a.cfg.MetricsListen,
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
		return openNotionDemoSource(ctx, dir, lease)
	}
	return nil, model.Errorf(model.CodeMisconfigured, "demo", "", "--backend %q: want sqlite, lockdir or notion", backend)
}

// unavailable stands in for a source that failed to open, so the dashboard
// shows it degraded, with its error, beside the sources that work. Every
// call answers that error.
type unavailable struct {
	name string
	err  error
}

func (u unavailable) Name() string { return u.name }
func (u unavailable) Caps() sources.Caps {
	return sources.Caps{Lacks: []string{"everything: " + u.err.Error()}}
}
func (u unavailable) Close() error { return nil }
func (u unavailable) Poll(context.Context, sources.Cursor, ...sources.PollOption) (sources.Delta, error) {
	return sources.Delta{}, u.err
}
func (u unavailable) Archive(context.Context, sources.ArchiveQuery) ([]*model.Task, error) {
	return nil, u.err
}
func (u unavailable) Get(context.Context, string) (*model.Task, error) { return nil, u.err }
func (u unavailable) Create(context.Context, sources.NewTask) (*model.Task, error) {
	return nil, u.err
}
func (u unavailable) Next(context.Context, string) (*model.Task, error) { return nil, u.err }
func (u unavailable) Claim(context.Context, string, sources.ClaimRequest) (*model.Task, error) {
	return nil, u.err
}
func (u unavailable) ClaimNext(context.Context, sources.ClaimRequest) (*model.Task, error) {
	return nil, u.err
}
func (u unavailable) Heartbeat(context.Context, string, string, time.Duration) (*model.Task, error) {
	return nil, u.err
}
func (u unavailable) Finish(context.Context, string, string, sources.Outcome) (*model.Task, error) {
	return nil, u.err
}
func (u unavailable) Takeover(context.Context, string, sources.Human) (*model.Task, error) {
	return nil, u.err
}
func (u unavailable) ForceRelease(context.Context, string, sources.Human) (*model.Task, error) {
	return nil, u.err
}
func (u unavailable) Cancel(context.Context, string, sources.Human) (*model.Task, error) {
	return nil, u.err
}
func (u unavailable) Handoff(context.Context, string, sources.Handoff) (*model.Task, error) {
	return nil, u.err
}
func (u unavailable) Comment(context.Context, string, sources.Note) error { return u.err }
func (u unavailable) Update(context.Context, string, sources.Edit) (*model.Task, error) {
	return nil, u.err
}
func (u unavailable) MarkEscalation(context.Context, string, string, model.Level) error { return u.err }
func (u unavailable) CheckWrite(context.Context) error                                  { return u.err }
