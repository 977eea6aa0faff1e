package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/mesh"
)

// MeshConfig is the `mesh:` section: seed 001's node registry, the health
// poller, and escalation enforcement (the ladder itself is `escalation:`).
type MeshConfig struct {
	// Registry is seed 001's mesh-nodes.json; empty means no mesh.
	Registry string `mapstructure:"registry" json:"registry"`
	// Node is the node this claimdeck runs as: its sweeps never notify it.
	Node      string        `mapstructure:"node" json:"node,omitempty"`
	PingEvery time.Duration `mapstructure:"ping_every" json:"ping_every"`
	Timeout   time.Duration `mapstructure:"timeout" json:"timeout"`
	DownAfter int           `mapstructure:"down_after" json:"down_after"`
	// Holders places agents on nodes: agent name → node name.
	Holders map[string]string `mapstructure:"holders" json:"holders,omitempty"`
	// Webhook is an extra webhook every notification also goes to (a chat
	// bridge); its bearer token comes from WebhookTokenEnv.
	Webhook         string `mapstructure:"webhook" json:"webhook,omitempty"`
	WebhookTokenEnv string `mapstructure:"webhook_token_env" json:"webhook_token_env,omitempty"`
	// Enforce runs the sweep from the dashboard, as --enforce does.
	Enforce bool `mapstructure:"enforce" json:"enforce"`
	// SweepEvery is how often the dashboard sweeps with enforcement on.
	SweepEvery time.Duration `mapstructure:"sweep_every" json:"sweep_every"`
	// Record is where sent notifications are remembered between runs.
	Record string `mapstructure:"record" json:"record"`
	// Health is the node health record: every pinger writes it, every
	// door reads it (mesh.Book).
	Health string `mapstructure:"health" json:"health"`
}

// meshDefaults gives every scalar mesh key a default, so that CLAIMDECK_MESH_*
// variables reach Unmarshal (see loadConfig).
func meshDefaults(v *viper.Viper) {
	v.SetDefault("mesh.registry", "")
	v.SetDefault("mesh.node", "")
	v.SetDefault("mesh.ping_every", 2*time.Minute)
	v.SetDefault("mesh.timeout", 10*time.Second)
	v.SetDefault("mesh.down_after", 3)
	v.SetDefault("mesh.webhook", "")
	v.SetDefault("mesh.webhook_token_env", "")
	v.SetDefault("mesh.enforce", false)
	v.SetDefault("mesh.sweep_every", 30*time.Second)
	v.SetDefault("mesh.record", defaultIn(stateDir(), "sweep.json"))
	v.SetDefault("mesh.health", defaultIn(stateDir(), "mesh-health.json"))
}

func (m MeshConfig) problems() []string {
	var out []string
	if m.PingEvery <= 0 || m.Timeout <= 0 || m.SweepEvery <= 0 {
		out = append(out, "mesh: ping_every, timeout and sweep_every must be positive")
	}
	if m.DownAfter < 1 {
		out = append(out, "mesh: down_after must be at least 1")
	}
	return out
}

// stateDir holds what claimdeck remembers between runs (the sweep
// record); "" when neither $XDG_STATE_HOME nor $HOME says where.
func stateDir() string { return userDir("XDG_STATE_HOME", ".local", "state") }

// registry loads the configured registry, or nil when there is none.
// Warnings go to stderr: they never stop the command.
func (a *Env) Registry() (*mesh.Registry, error) {
	if a.Cfg.Mesh.Registry == "" {
		return nil, nil
	}
	reg, warns, err := mesh.LoadRegistry(Expand(a.Cfg.Mesh.Registry))
	if err != nil {
		return nil, model.Wrap(model.CodeMisconfigured, "mesh", "", err)
	}
	for _, w := range warns {
		fmt.Fprintln(a.Stderr, "warning:", model.Redact(fmt.Sprint(w)))
	}
	return reg, nil
}

// openAll opens every configured source (or the one --source names); one
// that fails to open stands in with its error.
func (a *Env) OpenAll(ctx context.Context) ([]sources.Source, error) {
	var out []sources.Source
	for _, sc := range a.Cfg.Sources {
		if a.SourceName != "" && sc.Name != a.SourceName {
			continue
		}
		src, err := OpenSource(ctx, a.Cfg, sc, a.Create)
		if err != nil {
			src = unavailable{name: sc.Name, err: err}
		}
		out = append(out, src)
	}
	if len(out) == 0 {
		return nil, model.Errorf(model.CodeMisconfigured, "", "", "--source %q: no such source in the configuration", a.SourceName)
	}
	return out, nil
}

func CloseAll(srcs []sources.Source) {
	for _, s := range srcs {
		s.Close()
	}
}

func TaskSources[S sources.Source](srcs []S) []mesh.TaskSource {
	out := make([]mesh.TaskSource, len(srcs))
	for i, s := range srcs {
		out[i] = s
	}
	return out
}

// sweeper builds the escalation sweep the configuration asks for. nodes
// gives the mesh's health (nil: none known).
func (a *Env) Sweeper(reg *mesh.Registry, nodes func() []model.Node, from string, dryRun bool) (*mesh.Sweeper, error) {
	m := a.Cfg.Mesh
	var rec *mesh.Record
	var err error
	if dryRun {
		rec, err = mesh.OpenRecord("") // a dry run remembers nothing
	} else if path := Expand(m.Record); path != "" {
		if err = sources.PrivateDir("sweep record directory", filepath.Dir(path)); err == nil {
			rec, err = mesh.OpenRecord(path)
		}
	} else if stateDir() == "" {
		return nil, NoHome("the sweep record", "XDG_STATE_HOME", "mesh.record")
	}
	if err != nil {
		return nil, model.Wrap(model.CodeMisconfigured, "sweep", "", err)
	}
	sw := &mesh.Sweeper{Policy: a.Cfg.Policy(), Record: rec, Nodes: nodes, Holders: m.Holders, DryRun: dryRun}
	if reg != nil || m.Webhook != "" {
		n := &mesh.Notifier{From: from, Extra: m.Webhook, Timeout: m.Timeout}
		if reg != nil {
			n.Nodes = reg.Nodes
		}
		if m.WebhookTokenEnv != "" {
			n.ExtraToken = mesh.Token(os.Getenv(m.WebhookTokenEnv))
		}
		sw.Notifier = n
	}
	return sw, nil
}

// standing classifies tasks for list, get and next as a sweep run from cron
// would: node health as the health record (or the registry) keeps it, the
// holders mapping and the configured policy, at one instant.
func (a *Env) standing() (func(*model.Task) model.Classification, error) {
	reg, err := a.Registry()
	if err != nil {
		return nil, err
	}
	var nodes []model.Node
	if f := a.MeshNodes(reg); f != nil {
		nodes = f()
	}
	m, p, now := model.NewMesh(nodes, a.Cfg.Mesh.Holders), a.Cfg.Policy(), time.Now()
	return func(t *model.Task) model.Classification { return model.Classify(t, now, p, m) }, nil
}

// book is the node health record, or nil when there is no mesh or no
// state directory to keep it in.
func (a *Env) Book() *mesh.Book {
	if a.Cfg.Mesh.Registry == "" || a.Cfg.Mesh.Health == "" {
		return nil
	}
	return mesh.OpenBook(Expand(a.Cfg.Mesh.Health))
}

// meshNodes is the mesh as the health record last saw it, over the
// registry: what every door that does not ping reads, read afresh at each
// call. A record that cannot be read is warned about once; the registry
// stands in.
func (a *Env) MeshNodes(reg *mesh.Registry) func() []model.Node {
	if reg == nil {
		return nil
	}
	book := a.Book()
	var once sync.Once
	return func() []model.Node {
		nodes, err := book.Nodes(reg)
		if err != nil {
			once.Do(func() { fmt.Fprintln(a.Stderr, "warning:", model.Redact(err.Error())) })
		}
		return nodes
	}
}

// poller pings the registry's nodes and writes every round to the health
// record as by.
func (a *Env) Poller(reg *mesh.Registry, by string) (*mesh.Poller, error) {
	m := a.Cfg.Mesh
	cfg := mesh.PollerConfig{Every: m.PingEvery, Timeout: m.Timeout, DownAfter: m.DownAfter, By: by}
	if book := a.Book(); book != nil {
		if err := sources.PrivateDir("node health record directory", filepath.Dir(book.Path())); err != nil {
			return nil, model.Wrap(model.CodeMisconfigured, "mesh", "", err)
		}
		cfg.Book = book
	}
	return mesh.NewPoller(reg, cfg), nil
}

// startMesh runs the health poller when a registry is configured and puts
// it in the hub's configuration with the holders mapping; with enforcement
// on, the hub also hands each snapshot to the sweep, for every source not
// read-only, and shows what it did in Activity.
func (a *Env) StartMesh(ctx context.Context, cmd *cobra.Command, hc *hub.Config) error {
	enforce, _ := cmd.Flags().GetBool("enforce")
	enforce = enforce || a.Cfg.Mesh.Enforce
	if enforce && a.Cfg.ReadOnly {
		return model.Errorf(model.CodeMisconfigured, "", "", "--enforce writes escalation marks: not in read-only mode")
	}
	reg, err := a.Registry()
	if err != nil {
		return err
	}
	m := a.Cfg.Mesh
	hc.Holders = m.Holders
	if reg != nil {
		by := "dashboard"
		if cmd.HasParent() {
			by = cmd.Name() // metrics
		}
		p, err := a.Poller(reg, by)
		if err != nil {
			return err
		}
		a.Background.Go(func() { _ = p.Run(ctx) })
		hc.Nodes = p.Nodes
	}
	if !enforce {
		return nil
	}
	sw, err := a.Sweeper(reg, hc.Nodes, m.Node, false)
	if err != nil {
		return err
	}
	var srcs []mesh.TaskSource
	for _, f := range hc.Feeds {
		if !a.Cfg.ReadOnlyFor(f.Source.Name()) {
			srcs = append(srcs, f.Source)
		}
	}
	hc.EnforceEvery = m.SweepEvery
	hc.Enforce = func(ctx context.Context, s hub.Snapshot) []hub.Notice {
		var tasks []*model.Task
		for _, st := range s.Sources {
			tasks = st.Tasks.AppendTo(tasks)
		}
		return sweepNotices(sw.SweepTasks(ctx, tasks, s.Mesh, srcs...), s.At)
	}
	return nil
}

// sweepNotices puts what a sweep did in Activity's words: each mark, each
// notification, each failure.
func sweepNotices(rep mesh.SweepReport, at time.Time) []hub.Notice {
	var out []hub.Notice
	for _, m := range rep.Marks {
		n := hub.Notice{At: at, Source: m.Source, Task: m.Task, What: "marked " + m.Level.String()}
		if m.Err != nil {
			n.What, n.Failed = "mark "+m.Level.String()+" failed: "+m.Err.Error(), !errors.Is(m.Err, model.ErrLostLock)
		}
		out = append(out, n)
	}
	for _, d := range rep.Deliveries {
		n := hub.Notice{At: at, Source: d.Source, Task: d.Task, What: "notified " + d.Target}
		if d.Err != nil {
			n.What, n.Failed = "not notified "+d.Target+": "+d.Err.Error(), !errors.Is(d.Err, mesh.ErrNodeDown)
		}
		out = append(out, n)
	}
	for _, err := range rep.Errors {
		out = append(out, hub.Notice{At: at, What: "sweep failed: " + err.Error(), Failed: true})
	}
	return out
}
