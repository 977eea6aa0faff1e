package cli

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/mesh"
)

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
		j := rescueJSON{Source: r.Source, Task: r.Task, Holder: r.Holder, Expired: cmdutil.Stamp(r.Expired), Applied: r.Applied}
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
			if !dryRun && a.Cfg.ReadOnly {
				return model.Errorf(model.CodeMisconfigured, "sweep", "", "read-only mode: use --dry-run")
			}
			reg, err := a.Registry()
			if err != nil {
				return err
			}
			if from == "" {
				from = a.Cfg.Mesh.Node
			}
			if ping && reg != nil {
				if err := a.pingOnce(ctx, reg, dryRun); err != nil {
					return err
				}
			}
			sw, err := a.Sweeper(reg, a.MeshNodes(reg), from, dryRun)
			if err != nil {
				return err
			}
			srcs, err := a.OpenAll(ctx)
			if err != nil {
				return err
			}
			defer cmdutil.CloseAll(srcs)
			var names []string
			var writable []mesh.TaskSource
			for _, s := range srcs {
				names = append(names, s.Name())
				if a.Cfg.ReadOnlyFor(s.Name()) {
					writable = append(writable, readOnlySource{s}) // marks show, unapplied
					continue
				}
				writable = append(writable, s)
			}
			out, ferr := sweepResult(sw.Sweep(ctx, writable...), names, dryRun)
			if err := a.Out().JSON(out); err != nil {
				return err
			}
			if ferr != nil {
				return cmdutil.ExitStatus(model.CodeOf(ferr).ExitStatus())
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
	p, err := a.Poller(reg, "sweep")
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
