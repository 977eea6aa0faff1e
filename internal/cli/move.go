package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

func (a *app) moveCommand() *cobra.Command {
	var from, to string
	var dryRun, yes, undo bool
	c := &cobra.Command{
		Use:   "move --from SOURCE --to SOURCE",
		Short: "Move a live queue into another source; calls naming the old one are served by the new one",
		Long: `move hands a queue over to another configured source while agents work:
it prepares the target (a missing SQLite file, lock directory or PostgreSQL
table is made), freezes the origin (every write answers API_ERROR, ntask
exit 30, so agents retry), copies every task with its live claim, lock
token, lease and history, and marks the origin as moved. From then on every
call that names the origin is served by the target, with no restart and no
configuration change; the target must be in the configuration agents read.

A second move of a moved source is refused; a target task with the id of
one being moved is skipped when it is exactly what a move cut short wrote,
and refused otherwise (CONFLICT naming it; the origin serves again). Run a
move cut short again to finish it. --dry-run lists what would move and
writes nothing. --undo takes a move back while the target still holds every
task as the move left it. Without a terminal to confirm on, --yes is
required. Runbook: docs/sources.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fc, tc, err := a.pickPair("move", from, to)
			if err != nil {
				return err
			}
			if !dryRun && (a.Cfg.ReadOnlyFor(fc.Name) || a.Cfg.ReadOnlyFor(tc.Name)) {
				return model.Errorf(model.CodeMisconfigured, "move", "", "source %q or %q is read-only", fc.Name, tc.Name)
			}
			ctx := cmd.Context()
			src, err := cmdutil.OpenSource(ctx, a.Cfg, fc, false)
			if err != nil {
				return err
			}
			defer src.Close()
			if undo {
				dst, err := cmdutil.OpenSource(ctx, a.Cfg, tc, false)
				if err != nil {
					return err
				}
				defer dst.Close()
				if !yes {
					if err := a.Proceed("move", "", "undo the move of %s into %s", fc.Name, tc.Name); err != nil {
						return err
					}
				}
				if err := sources.Undo(ctx, src, dst); err != nil {
					return err
				}
				return a.Out().JSON(map[string]any{"ok": true, "from": fc.Name, "to": tc.Name, "undone": true})
			}
			if !dryRun && !yes {
				if err := a.Proceed("move", " (--dry-run to preview)", "move %s into %s (agents are served by %s from now on)", fc.Name, tc.Name, tc.Name); err != nil {
					return err
				}
			}
			target := sources.Target{Name: tc.Name, Open: func(ctx context.Context, prepare bool) (sources.Source, error) {
				sc := tc
				sc.MakeTable = prepare
				return cmdutil.OpenSource(ctx, a.Cfg, sc, prepare)
			}}
			rep, err := sources.Move(ctx, src, target, sources.MoveOptions{DryRun: dryRun, Progress: a.progress()})
			if err != nil {
				return err
			}
			list := make([]map[string]any, len(rep.Tasks))
			for i, t := range rep.Tasks {
				list[i] = map[string]any{"id": t.ID, "state": t.State.String(), "holder": t.Claim().Name, "history": len(t.More().History)}
			}
			return a.Out().JSON(map[string]any{"ok": true, "from": rep.From, "to": rep.To, "dry_run": rep.DryRun,
				"prepare_target": rep.Prepare, "resumed": rep.Resumed, "tasks": list, "already_there": append([]string{}, rep.Already...)})
		},
	}
	f := c.Flags()
	f.StringVar(&from, "from", "", "the configured source to move")
	f.StringVar(&to, "to", "", "the configured source to move it into")
	f.BoolVar(&dryRun, "dry-run", false, "list what would move; write nothing")
	f.BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	f.BoolVar(&undo, "undo", false, "take back the move of --from into --to while --to is as the move left it")
	return c
}
