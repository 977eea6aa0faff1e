package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/mesh"
	"github.com/claimdeck/claimdeck/sources/webserver"
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

// addMesh registers `sweep`, `node serve` and the dashboard's --enforce.
func (a *app) addMesh(root *cobra.Command, grouped func(*cobra.Command)) {
	root.Flags().Bool("enforce", false, "run the escalation sweep from the dashboard (mesh.enforce in config)")
	node := &cobra.Command{Use: "node", Short: "Run this host as a mesh node, or watch the mesh's health"}
	node.AddCommand(a.nodeServeCommand(), a.nodeWatchCommand())
	for _, c := range []*cobra.Command{a.sweepCommand(), node} {
		grouped(c)
		root.AddCommand(c)
	}
}

// registry loads the configured registry, or nil when there is none.
// Warnings go to stderr: they never stop the command.
func (a *app) registry() (*mesh.Registry, error) {
	if a.cfg.Mesh.Registry == "" {
		return nil, nil
	}
	reg, warns, err := mesh.LoadRegistry(expand(a.cfg.Mesh.Registry))
	if err != nil {
		return nil, model.Wrap(model.CodeMisconfigured, "mesh", "", err)
	}
	for _, w := range warns {
		fmt.Fprintln(a.stderr, "warning:", model.Redact(fmt.Sprint(w)))
	}
	return reg, nil
}

// openAll opens every configured source (or the one --source names); one
// that fails to open stands in with its error.
func (a *app) openAll(ctx context.Context) ([]sources.Source, error) {
	var out []sources.Source
	for _, sc := range a.cfg.Sources {
		if a.sourceName != "" && sc.Name != a.sourceName {
			continue
		}
		src, err := openSource(ctx, a.cfg, sc, a.create)
		if err != nil {
			src = unavailable{name: sc.Name, err: err}
		}
		out = append(out, src)
	}
	if len(out) == 0 {
		return nil, model.Errorf(model.CodeMisconfigured, "", "", "--source %q: no such source in the configuration", a.sourceName)
	}
	return out, nil
}

func closeAll(srcs []sources.Source) {
	for _, s := range srcs {
		s.Close()
	}
}

func taskSources[S sources.Source](srcs []S) []mesh.TaskSource {
	out := make([]mesh.TaskSource, len(srcs))
	for i, s := range srcs {
		out[i] = s
	}
	return out
}

// sweeper builds the escalation sweep the configuration asks for. nodes
// gives the mesh's health (nil: none known).
func (a *app) sweeper(reg *mesh.Registry, nodes func() []model.Node, from string, dryRun bool) (*mesh.Sweeper, error) {
	m := a.cfg.Mesh
	var rec *mesh.Record
	var err error
	if dryRun {
		rec, err = mesh.OpenRecord("") // a dry run remembers nothing
	} else if path := expand(m.Record); path != "" {
		if err = sources.PrivateDir("sweep record directory", filepath.Dir(path)); err == nil {
			rec, err = mesh.OpenRecord(path)
		}
	} else if stateDir() == "" {
		return nil, noHome("the sweep record", "XDG_STATE_HOME", "mesh.record")
	}
	if err != nil {
		return nil, model.Wrap(model.CodeMisconfigured, "sweep", "", err)
	}
	sw := &mesh.Sweeper{Policy: a.cfg.Policy(), Record: rec, Nodes: nodes, Holders: m.Holders, DryRun: dryRun}
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
func (a *app) standing() (func(*model.Task) model.Classification, error) {
	reg, err := a.registry()
	if err != nil {
		return nil, err
	}
	var nodes []model.Node
	if f := a.meshNodes(reg); f != nil {
		nodes = f()
	}
	m, p, now := model.NewMesh(nodes, a.cfg.Mesh.Holders), a.cfg.Policy(), time.Now()
	return func(t *model.Task) model.Classification { return model.Classify(t, now, p, m) }, nil
}

// book is the node health record, or nil when there is no mesh or no
// state directory to keep it in.
func (a *app) book() *mesh.Book {
	if a.cfg.Mesh.Registry == "" || a.cfg.Mesh.Health == "" {
		return nil
	}
	return mesh.OpenBook(expand(a.cfg.Mesh.Health))
}

// meshNodes is the mesh as the health record last saw it, over the
// registry: what every door that does not ping reads, read afresh at each
// call. A record that cannot be read is warned about once; the registry
// stands in.
func (a *app) meshNodes(reg *mesh.Registry) func() []model.Node {
	if reg == nil {
		return nil
	}
	book := a.book()
	var once sync.Once
	return func() []model.Node {
		nodes, err := book.Nodes(reg)
		if err != nil {
			once.Do(func() { fmt.Fprintln(a.stderr, "warning:", model.Redact(err.Error())) })
		}
		return nodes
	}
}

// poller pings the registry's nodes and writes every round to the health
// record as by.
func (a *app) poller(reg *mesh.Registry, by string) (*mesh.Poller, error) {
	m := a.cfg.Mesh
	cfg := mesh.PollerConfig{Every: m.PingEvery, Timeout: m.Timeout, DownAfter: m.DownAfter, By: by}
	if book := a.book(); book != nil {
		if err := sources.PrivateDir("node health record directory", filepath.Dir(book.Path())); err != nil {
			return nil, model.Wrap(model.CodeMisconfigured, "mesh", "", err)
		}
		cfg.Book = book
	}
	return mesh.NewPoller(reg, cfg), nil
}

type markJSON struct {
	Source  string `json:"source"`
	Task    string `json:"task"`
	Level   string `json:"level"`
	Applied bool   `json:"applied"`
	Error   string `json:"error,omitempty"`
}

type rescueJSON struct {
	Source  string `json:"source"`
	Task    string `json:"task"`
	Holder  string `json:"dead_holder"`
	Expired string `json:"lock_expired_at"`
	Applied bool   `json:"applied"`
	Error   string `json:"error,omitempty"`
}

type deliveryJSON struct {
	Source string `json:"source"`
	Task   string `json:"task"`
	Target string `json:"target"`
	Sent   bool   `json:"sent"`
	Error  string `json:"error,omitempty"`
}

// sweepResult is the JSON `claimdeck sweep` prints, and the error that
// decides its exit status: a source that could not be read, a mark that
// failed other than by a re-claim (LOST_LOCK is the ladder starting over,
// not a failure), or a notification that could not be delivered to a node
// not known to be DOWN.
func sweepResult(rep mesh.SweepReport, swept []string, dryRun bool) (map[string]any, error) {
	var first error
	fail := func(err error) {
		if first == nil {
			first = err
		}
	}
	marks := []markJSON{}
	for _, m := range rep.Marks {
		j := markJSON{Source: m.Source, Task: m.Task, Level: m.Level.String(), Applied: m.Applied}
		if m.Err != nil {
			j.Error = m.Err.Error()
			if !errors.Is(m.Err, model.ErrLostLock) {
				fail(m.Err)
			}
		}
		marks = append(marks, j)
	}
	deliveries := []deliveryJSON{}
	for _, d := range rep.Deliveries {
		j := deliveryJSON{Source: d.Source, Task: d.Task, Target: d.Target, Sent: d.Err == nil && !d.DryRun}
		if d.Err != nil {
			j.Error = d.Err.Error()
			if !errors.Is(d.Err, mesh.ErrNodeDown) {
				fail(model.Wrap(model.CodeAPIError, "notify", d.Task, d.Err))
			}
		}
		deliveries = append(deliveries, j)
	}
	rescues := []rescueJSON{}
	for _, r := range rep.Rescues {
		j := rescueJSON{Source: r.Source, Task: r.Task, Holder: r.Holder, Expired: stamp(r.Expired), Applied: r.Applied}
		if r.Err != nil {
			j.Error = r.Err.Error()
			if model.CodeOf(r.Err) != model.CodeConflict {
				fail(r.Err) // a CONFLICT is the task changed since the poll: nothing to put back
			}
		}
		rescues = append(rescues, j)
	}
	errs := []string{}
	for _, err := range rep.Errors {
		errs = append(errs, err.Error())
		fail(err)
	}
	out := map[string]any{"ok": first == nil, "dry_run": dryRun, "sources": swept, "marks": marks, "rescues": rescues, "notifications": deliveries, "errors": errs}
	if first != nil {
		out["error"] = map[string]string{"code": string(model.CodeOf(first)), "message": first.Error()}
	}
	return out, first
}

func (a *app) sweepCommand() *cobra.Command {
	var dryRun, ping bool
	var from string
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "One pass of the escalation ladder over every source, then exit",
		Long: `sweep climbs seed 001's escalation ladder once, for cron: claims stuck
past escalation.stale_after are marked stale (their lease ends, so they can
be claimed), then urgent, then the mesh is notified ({"message": …,
"deliver": false} to every other node's webhook with its bearer token, and
to mesh.webhook), then escalated. Claims of nodes recorded DOWN (in the
node health record mesh.health, which the dashboard, node watch and
sweep --ping write, or else the registry) are stale at once. --ping pings
every node once first and records it: failures count across runs, so
mesh.down_after runs from cron make a dead node DOWN. Every mark is conditional on the claim's lock token,
and each task is notified once per level, however often sweep runs
(mesh.record remembers). In sources whose next keeps a dead holder's task
out of the pool (Notion, seed 002), a claim whose lease ended grace ago is
put back in the queue instead, as ntask reap does (Ready, the Assignee
kept: a reap, not an alarm), conditional on the version read and recorded
in the task's trail with the dead holder's name ("rescues"). --dry-run shows
what would happen.

Exit status: 0 when everything applied; 5 when a source could not be read
or a notification not delivered; 3 for a bad registry or configuration.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if !dryRun && a.cfg.ReadOnly {
				return model.Errorf(model.CodeMisconfigured, "sweep", "", "read-only mode: use --dry-run")
			}
			reg, err := a.registry()
			if err != nil {
				return err
			}
			if from == "" {
				from = a.cfg.Mesh.Node
			}
			if ping && reg != nil {
				if err := a.pingOnce(ctx, reg, dryRun); err != nil {
					return err
				}
			}
			sw, err := a.sweeper(reg, a.meshNodes(reg), from, dryRun)
			if err != nil {
				return err
			}
			srcs, err := a.openAll(ctx)
			if err != nil {
				return err
			}
			defer closeAll(srcs)
			var names []string
			var writable []mesh.TaskSource
			for _, s := range srcs {
				names = append(names, s.Name())
				if a.cfg.readOnly(s.Name()) {
					writable = append(writable, readOnlySource{s}) // marks show, unapplied
					continue
				}
				writable = append(writable, s)
			}
			out, ferr := sweepResult(sw.Sweep(ctx, writable...), names, dryRun)
			if err := a.out().json(out); err != nil {
				return err
			}
			if ferr != nil {
				return exitStatus(model.CodeOf(ferr).ExitStatus())
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "show what would be marked and notified; change nothing")
	cmd.Flags().StringVar(&from, "node", "", "the node this sweep runs as, never notified (default mesh.node)")
	cmd.Flags().BoolVar(&ping, "ping", false, "ping every node once first and record its health (not with --dry-run)")
	return cmd
}

// pingOnce is one ping round by the sweep, recorded; a dry run pings and
// records nothing, since recording changes what every door reads.
func (a *app) pingOnce(ctx context.Context, reg *mesh.Registry, dryRun bool) error {
	if dryRun {
		return nil
	}
	p, err := a.poller(reg, "sweep")
	if err != nil {
		return err
	}
	p.PollOnce(ctx)
	if err := p.BookErr(); err != nil {
		return model.Wrap(model.CodeMisconfigured, "sweep", "", err)
	}
	return nil
}

// readOnlySource is a source read-only by configuration, as the sweep sees
// it: polled, its marks shown unapplied.
type readOnlySource struct{ src sources.Source }

func (r readOnlySource) Name() string { return r.src.Name() }
func (r readOnlySource) Caps() sources.Caps {
	c := r.src.Caps()
	c.Escalation, c.Lacks = false, append(c.Lacks, "escalation marks: read-only by configuration")
	return c
}
func (r readOnlySource) Poll(ctx context.Context, c sources.Cursor, opt ...sources.PollOption) (sources.Delta, error) {
	return r.src.Poll(ctx, c, opt...)
}
func (r readOnlySource) MarkEscalation(_ context.Context, id, _ string, _ model.Level) error {
	return model.Errorf(model.CodeMisconfigured, "escalate", id, "source %q is read-only", r.src.Name())
}

func (a *app) nodeServeCommand() *cobra.Command {
	var name, listen, tokenEnv string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Answer seed 001's POST /hooks/health (and /hooks/agent) for one node",
		Long: `node serve runs one mesh node: POST /hooks/health answers seed 001's
report (node, status, last_task_at, queue_depth, claimed_tasks) from the
configured sources, and POST /hooks/agent accepts mesh notifications. Both
need "Authorization: Bearer <token>": the registry entry's token or
token_env for --name, or --token-env. It prints {"ok": true, "node": …,
"listen": …} once listening and serves until interrupted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if strings.TrimSpace(name) == "" {
				return model.Errorf(model.CodeMisconfigured, "node serve", "", "--name is required")
			}
			token, err := a.nodeToken(name, tokenEnv)
			if err != nil {
				return err
			}
			if err := token.CheckStrength(); err != nil {
				return model.Errorf(model.CodeMisconfigured, "node serve", "", "node %s: %v", name, err)
			}
			srcs, err := a.openAll(ctx)
			if err != nil {
				return err
			}
			defer closeAll(srcs)
			var agents []string
			for agent, node := range a.cfg.Mesh.Holders {
				if strings.EqualFold(node, name) {
					agents = append(agents, agent)
				}
			}
			status := mesh.StatusFrom(name, agents, taskSources(srcs), time.Now)
			ln, err := a.listen("node serve", listen)
			if err != nil {
				return err
			}
			srv := webserver.New(mesh.NodeHandler(name, token, status, mesh.NewInbox(token.Reveal())), webserver.Limits{})
			if err := a.out().json(map[string]any{"ok": true, "node": name, "listen": ln.Addr().String()}); err != nil {
				ln.Close()
				return err
			}
			return model.Wrap(model.CodeAPIError, "node serve", "", srv.Serve(ctx, ln))
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "name", "", "the node's name, as in the registry (e.g. SANDMAN)")
	f.StringVar(&listen, "listen", "127.0.0.1:18789", "address to listen on")
	f.StringVar(&tokenEnv, "token-env", "", "environment variable holding the bearer token (default: the registry's)")
	return cmd
}

// nodeToken finds the bearer token node serve requires. It is never
// printed: mesh.Token redacts itself.
func (a *app) nodeToken(name, tokenEnv string) (mesh.Token, error) {
	if tokenEnv != "" {
		if t := mesh.Token(os.Getenv(tokenEnv)); t.Set() {
			return t, nil
		}
		return "", model.Errorf(model.CodeMisconfigured, "node serve", "", "--token-env %s is unset or empty", tokenEnv)
	}
	reg, err := a.registry()
	if err != nil {
		return "", err
	}
	if reg != nil {
		if n, ok := reg.Node(name); ok && n.Token.Set() {
			return n.Token, nil
		}
	}
	return "", model.Errorf(model.CodeMisconfigured, "node serve", "",
		"no token for node %s: give it token or token_env in the registry, or --token-env; an endpoint without one is not served", name)
}

// startMesh runs the health poller when a registry is configured and puts
// it in the hub's configuration with the holders mapping; with enforcement
// on, the hub also hands each snapshot to the sweep, for every source not
// read-only, and shows what it did in Activity.
func (a *app) startMesh(ctx context.Context, cmd *cobra.Command, hc *hub.Config) error {
	enforce, _ := cmd.Flags().GetBool("enforce")
	enforce = enforce || a.cfg.Mesh.Enforce
	if enforce && a.cfg.ReadOnly {
		return model.Errorf(model.CodeMisconfigured, "", "", "--enforce writes escalation marks: not in read-only mode")
	}
	reg, err := a.registry()
	if err != nil {
		return err
	}
	m := a.cfg.Mesh
	hc.Holders = m.Holders
	if reg != nil {
		by := "dashboard"
		if cmd.HasParent() {
			by = cmd.Name() // metrics
		}
		p, err := a.poller(reg, by)
		if err != nil {
			return err
		}
		a.background.Go(func() { _ = p.Run(ctx) })
		hc.Nodes = p.Nodes
	}
	if !enforce {
		return nil
	}
	sw, err := a.sweeper(reg, hc.Nodes, m.Node, false)
	if err != nil {
		return err
	}
	var srcs []mesh.TaskSource
	for _, f := range hc.Feeds {
		if !a.cfg.readOnly(f.Source.Name()) {
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
