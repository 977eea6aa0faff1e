package main

import (
	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

func (a *app) copyCommand() *cobra.Command {
	var from, to string
	var dryRun bool
	c := &cobra.Command{
		Use:   "copy --from SOURCE --to SOURCE",
		Short: "Copy a queue into another source: tasks, live claims with their leases, history",
		Long: `copy writes every task of one configured source into another, e.g. the
embedded queue into a team's PostgreSQL: each task with its state, its live
claim (holder, run, node, lock token and lease expiry, so the holder's
next heartbeat with the same token works in the new queue) and its history.

It refuses, copying nothing, when the target already holds a task with the
id of one being copied; tasks with other ids are left alone. Each task is
written atomically. The origin is not changed: point the agents at the new
source once the copy is done. --dry-run lists what would be copied.

The target must be SQLite, PostgreSQL (made with claimdeck migrate --create)
or a lock directory; Notion cannot take a copy.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" || to == "" || from == to {
				return model.Errorf(model.CodeMisconfigured, "copy", "", "give two different sources: --from SOURCE --to SOURCE")
			}
			fc, err := pickSource(a.cfg, from)
			if err != nil {
				return err
			}
			tc, err := pickSource(a.cfg, to)
			if err != nil {
				return err
			}
			if !dryRun && a.cfg.readOnly(tc.Name) {
				return model.Errorf(model.CodeMisconfigured, "copy", "", "source %q is read-only", tc.Name)
			}
			ctx := cmd.Context()
			src, err := openSource(ctx, a.cfg, fc, false)
			if err != nil {
				return err
			}
			defer src.Close()
			dst, err := openSource(ctx, a.cfg, tc, a.create)
			if err != nil {
				return err
			}
			defer dst.Close()
			plan, err := sources.PlanCopy(ctx, src, dst)
			if err != nil {
				return err
			}
			list := make([]map[string]any, len(plan.Tasks))
			for i, t := range plan.Tasks {
				list[i] = map[string]any{"id": t.ID, "state": t.State.String(), "holder": t.Claim.Name, "history": len(t.History)}
			}
			out := map[string]any{"ok": true, "from": fc.Name, "to": tc.Name, "dry_run": dryRun, "tasks": list}
			if dryRun {
				return a.out().json(out)
			}
			n, err := plan.Apply(ctx, dst)
			if err != nil {
				return model.Errorf(model.CodeOf(err), "copy", "", "%d of %d task(s) copied before: %v", n, len(plan.Tasks), err)
			}
			out["copied"] = n
			return a.out().json(out)
		},
	}
	f := c.Flags()
	f.StringVar(&from, "from", "", "the configured source to copy from")
	f.StringVar(&to, "to", "", "the configured source to copy into")
	f.BoolVar(&dryRun, "dry-run", false, "list what would be copied; write nothing")
	return c
}
