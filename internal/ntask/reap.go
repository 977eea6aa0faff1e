package ntask

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// reaped is one entry of ntask 0.5's answer (Reap.swift's ReapedTask).
type reaped struct {
	TaskID        string `json:"task_id"`
	LockExpiredAt string `json:"lock_expired_at"`
}

// refusedReap is a task the reap read as dead but left alone: it changed
// since it was read (a heartbeat, a new claim) or could not be written.
type refusedReap struct {
	TaskID string `json:"task_id"`
	Code   string `json:"code"`
	Reason string `json:"reason"`
}

// reap is ntask 0.5's `reap` (openclaw-skills dbc57ff): every In Progress
// task whose agent's lock has expired goes back to Ready, answered as
// {"ok": true, "reaped": [{"task_id", "lock_expired_at"}], "count": n}.
// Unlike the binary's read-then-write, each reap goes through the Desk
// (sources.Desk.Reap): past the grace only, re-checked against the claim
// read, journaled, left in the task's trail, and --dry-run writes nothing.
func (n *Ntask) reap() *cobra.Command {
	var dryRun bool
	var grace time.Duration
	cmd := &cobra.Command{
		Use:   "reap",
		Short: "Reap orphaned tasks with expired locks: In Progress back to Ready, the Assignee kept",
		Long: `reap puts every task whose agent's lock expired at least --grace ago back to
Ready (ntask 0.5). A lock without an expiry and a person's claim are never
reaped. Each reap is conditional on the task as it was read: a task
heartbeated or claimed again in between is left alone and listed under
"refused" (exit 0). Each reap is recorded in the audit log and in the
task's own trail.

Exit status: 0, 30 API_ERROR, 40 MISCONFIGURED.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if grace < 0 {
				return model.Errorf(model.CodeMisconfigured, "reap", "", "--grace %s: want zero or more", grace)
			}
			if !cmd.Flags().Changed("grace") {
				grace = sources.ConfiguredGrace // the desk's, from the configuration
			}
			desk, closeDesk, err := n.Desk()
			if err != nil {
				return err
			}
			defer closeDesk()
			desk.Actor, desk.Door = n.agent(), model.DoorNtask
			ctx := cmd.Context()
			return n.on(ctx, func(src sources.Source) error {
				if err := n.Writable(src, "reap", ""); err != nil {
					return err
				}
				d, err := cmdutil.Retrying(ctx, func() (sources.Delta, error) { return src.Poll(ctx, "") })
				if err != nil {
					return err
				}
				return n.printReap(desk.Reap(ctx, src, d.Tasks, grace, dryRun), dryRun)
			})
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list what would be reaped and write nothing")
	cmd.Flags().DurationVar(&grace, "grace", 0, "how long past its expiry a lock must be before it is reaped (default: the configured grace)")
	return cmd
}

// printReap prints 0.5's answer. A task that changed since it was read is
// refused, not failed; any other error ends the answer with its code after
// the reaps that were applied.
func (n *Ntask) printReap(rs []sources.Reaping, dryRun bool) error {
	out := map[string]any{"ok": true}
	done, refused := []reaped{}, []refusedReap{}
	var failed error
	for _, r := range rs {
		if r.Err == nil {
			done = append(done, reaped{TaskID: r.Task.DisplayKey(), LockExpiredAt: cmdutil.Stamp(r.Task.Claim().Expires.Time())})
			continue
		}
		code := model.CodeOf(r.Err)
		refused = append(refused, refusedReap{TaskID: r.Task.DisplayKey(), Code: string(code), Reason: model.Redact(r.Err.Error())})
		if code != model.CodeConflict && failed == nil {
			failed = r.Err
		}
	}
	out["reaped"], out["count"] = done, len(done)
	if len(refused) > 0 {
		out["refused"] = refused
	}
	if dryRun {
		out["dry_run"] = true
	}
	if failed == nil {
		return n.print(out)
	}
	code := model.CodeOf(failed)
	out["ok"] = false
	out["error"] = map[string]string{"code": string(code), "message": model.Redact(failed.Error())}
	return n.printExit(out, code)
}
