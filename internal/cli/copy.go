package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

func (a *app) copyCommand() *cobra.Command {
	var from, to string
	var dryRun, resume bool
	c := &cobra.Command{
		Use:   "copy --from SOURCE --to SOURCE",
		Short: "Copy a queue into another source: tasks, live claims with their leases, history",
		Long: `copy writes every task of one configured source into another, e.g. the
embedded queue into a team's PostgreSQL: each task with its state, its live
claim (holder, run, node, lock token and lease expiry, so the holder's
next heartbeat with the same token works in the new queue) and its history.

Every field arrives unchanged: seed 003's task_type, a finished row's
worker, started_at and completed_at, artifacts, history times, a lock
file's fields claimdeck does not read. Only a SQL row's version and
updated_at start again: they track changes in the new table.

It refuses, copying nothing, when the target already holds a task with the
id of one being copied (--dry-run finds it too); tasks with other ids are
left alone. The copy is all or nothing: one transaction in SQLite and
PostgreSQL; in a lock directory the files written are taken back when one
fails. If a copy was cut short anyway (the process killed), --resume skips
the tasks the target already holds exactly as the origin does. The origin
is not changed: point the agents at the new source once the copy is done.
--dry-run lists what would be copied. On a terminal, progress goes to
stderr.

The target must be SQLite, PostgreSQL (made with claimdeck migrate --create)
or a lock directory; Notion cannot take a copy.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fc, tc, err := a.pickPair("copy", from, to)
			if err != nil {
				return err
			}
			if !dryRun && a.Cfg.ReadOnlyFor(tc.Name) {
				return model.Errorf(model.CodeMisconfigured, "copy", "", "source %q is read-only", tc.Name)
			}
			ctx := cmd.Context()
			src, err := cmdutil.OpenSource(ctx, a.Cfg, fc, false)
			if err != nil {
				return err
			}
			defer src.Close()
			dst, err := cmdutil.OpenSource(ctx, a.Cfg, tc, a.Create)
			if err != nil {
				return err
			}
			defer dst.Close()
			progress := a.progress()
			plan, err := sources.PlanCopy(ctx, src, dst, resume, progress)
			if err != nil {
				return err
			}
			list := make([]map[string]any, len(plan.Tasks))
			for i, t := range plan.Tasks {
				list[i] = map[string]any{"id": t.ID, "state": t.State.String(), "holder": t.Claim().Name, "history": len(t.More().History)}
			}
			out := map[string]any{"ok": true, "from": fc.Name, "to": tc.Name, "dry_run": dryRun, "tasks": list}
			if resume {
				out["already_copied"] = append([]string{}, plan.Already...)
			}
			if dryRun {
				return a.Out().JSON(out)
			}
			n, err := plan.Apply(ctx, dst, progress)
			if err != nil {
				return model.Errorf(model.CodeOf(err), "copy", "", "nothing was copied: %v", err)
			}
			out["copied"] = n
			return a.Out().JSON(out)
		},
	}
	f := c.Flags()
	f.StringVar(&from, "from", "", "the configured source to copy from")
	f.StringVar(&to, "to", "", "the configured source to copy into")
	f.BoolVar(&dryRun, "dry-run", false, "list what would be copied, and refuse a conflicting id; write nothing")
	f.BoolVar(&resume, "resume", false, "skip the tasks the target already holds as the origin does (a copy cut short)")
	return c
}

// progress reports a long step on stderr, on one line rewritten in place,
// only when stderr is a terminal: a script reading stderr gets none.
func (a *app) progress() sources.Progress {
	if !cmdutil.IsTerminal(a.Stderr) {
		return nil
	}
	last := time.Time{}
	return func(what string, n, total int) {
		if n < total && time.Since(last) < 100*time.Millisecond {
			return
		}
		last = time.Now()
		fmt.Fprintf(a.Stderr, "\r\x1b[K%s %d of %d", what, n, total)
		if n == total {
			fmt.Fprintln(a.Stderr)
		}
	}
}

// pickPair finds the two configured sources a copy or a move names: both
// given, and different.
func (a *app) pickPair(op, from, to string) (fc, tc cmdutil.SourceConfig, err error) {
	if from == "" || to == "" || from == to {
		return fc, tc, model.Errorf(model.CodeMisconfigured, op, "", "give two different sources: --from SOURCE --to SOURCE")
	}
	if fc, err = cmdutil.PickSource(a.Cfg, from); err != nil {
		return fc, tc, err
	}
	tc, err = cmdutil.PickSource(a.Cfg, to)
	return fc, tc, err
}
