package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// override is one operator command's parameters.
type override struct {
	task, reason, to, priority, expect string
	reserve                            time.Duration
	yes, force                         bool
}

// desk builds the Desk every human action goes through.
func (a *app) desk() (*sources.Desk, func(), error) {
	j, err := sources.OpenJournal(expand(a.cfg.AuditLog))
	if err != nil {
		return nil, nil, model.Wrap(model.CodeMisconfigured, "audit", "", err)
	}
	d := &sources.Desk{Actor: a.cfg.Actor, Journal: j, ReadOnly: a.cfg.readOnly}
	return d, func() { _ = j.Close() }, nil
}

// printOverride applies an operator command and prints the task after it.
func (a *app) printOverride(ctx context.Context, action model.Action, o *override) error {
	t, err := a.applyOverride(ctx, action, o)
	if err != nil {
		return err
	}
	return a.out().task(t)
}

// applyOverride reads the task, checks --expect-token, asks on a terminal
// unless --yes, and applies the action through the Desk.
func (a *app) applyOverride(ctx context.Context, action model.Action, o *override) (*model.Task, error) {
	if err := required("task", o.task); err != nil {
		return nil, err
	}
	desk, closeDesk, err := a.desk()
	if err != nil {
		return nil, err
	}
	defer closeDesk()
	var after *model.Task
	err = a.withSource(ctx, func(src sources.Source) error {
		if desk.ReadOnly(src.Name()) {
			return model.Errorf(model.CodeMisconfigured, string(action), o.task, "source %q is read-only", src.Name())
		}
		seen, err := src.Get(ctx, o.task)
		if err != nil {
			return err
		}
		if o.expect != "" && seen.Claim.Token != o.expect {
			e := model.Errorf(model.CodeConflict, string(action), o.task, "--expect-token no longer matches: the task is %s, held by %q", seen.State, seen.Claim.Name)
			e.Current = seen
			return e
		}
		if !o.yes {
			if !isTerminal(a.stdin) {
				return model.Errorf(model.CodeMisconfigured, string(action), o.task, "no terminal to confirm on: pass --yes to act without asking; nothing was done")
			}
			if !a.confirm(action, seen, o) {
				return model.Errorf(model.CodeMisconfigured, string(action), o.task, "not confirmed; nothing was done")
			}
		}
		after, err = desk.Apply(ctx, src, sources.Request{Action: action, Seen: seen, Reason: o.reason, To: o.to, For: o.reserve, Priority: o.priority})
		return err
	})
	return after, err
}

func isTerminal(r any) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// confirm asks y/N on the terminal; anything but y/yes is No.
func (a *app) confirm(action model.Action, t *model.Task, o *override) bool {
	holder := "nobody"
	if t.Claim.Held() {
		holder = t.Claim.Holder.String() + " " + t.Claim.Name
	}
	fmt.Fprintf(a.stderr, "%s %s/%s %q\n  state %s, held by %s", action, t.Source, t.DisplayKey(), t.Title, t.State, holder)
	if o.to != "" {
		fmt.Fprintf(a.stderr, ", hand to %s", o.to)
	}
	fmt.Fprint(a.stderr, "\nProceed? [y/N] ")
	line, _ := bufio.NewReader(a.stdin).ReadString('\n')
	answer := strings.ToLower(strings.TrimSpace(line))
	return answer == "y" || answer == "yes"
}

func (a *app) overrideFlags(cmd *cobra.Command, o *override) {
	f := cmd.Flags()
	f.StringVar(&o.task, "task", "", "task id")
	f.StringVar(&o.task, "page-id", "", "alias of --task")
	f.StringVar(&o.reason, "reason", "", "why (recorded in the audit trail)")
	f.StringVar(&o.expect, "expect-token", "", "refuse with CONFLICT unless the task still holds this lock token")
	f.BoolVarP(&o.yes, "yes", "y", false, "do not ask for confirmation")
}

func (a *app) operatorCommands() []*cobra.Command {
	take := &override{}
	takeover := &cobra.Command{
		Use:   "takeover",
		Short: "Claim a task as HUMAN (operator; audited)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.printOverride(cmd.Context(), model.ActionTakeover, take)
		},
	}
	a.overrideFlags(takeover, take)

	rel := &override{}
	release := &cobra.Command{
		Use:   "release",
		Short: "Force-release a claimed task back to the queue (operator; needs --force; audited)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !rel.force {
				return model.Errorf(model.CodeMisconfigured, "release", rel.task, "releasing someone else's claim needs --force")
			}
			return a.printOverride(cmd.Context(), model.ActionForceRelease, rel)
		},
	}
	a.overrideFlags(release, rel)
	release.Flags().BoolVar(&rel.force, "force", false, "release even though an agent or human holds the task")

	hand := &override{}
	handoff := &cobra.Command{
		Use:   "handoff",
		Short: "Release a task and reserve it for one agent or ANY (audited)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := required("to", hand.to); err != nil {
				return err
			}
			switch hand.priority {
			case "", "normal", "urgent", "critical":
			default:
				return model.Errorf(model.CodeMisconfigured, "handoff", hand.task, "--priority %q: want normal, urgent or critical", hand.priority)
			}
			return a.printOverride(cmd.Context(), model.ActionHandoff, hand)
		},
	}
	a.overrideFlags(handoff, hand)
	handoff.Flags().StringVar(&hand.to, "to", "", "the agent to hand to, or ANY")
	handoff.Flags().StringVar(&hand.priority, "priority", "normal", "normal, urgent or critical (seed 001)")
	handoff.Flags().DurationVar(&hand.reserve, "for", sources.DefaultReservation, "how long the task stays reserved")
	return []*cobra.Command{takeover, release, handoff}
}

// cancelExtras adds the operator's cancel (--force, a reason, audited) to
// the holder's.
func (a *app) cancelExtras(cmd *cobra.Command, tf *taskFlags) {
	o := &override{}
	run := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if !o.force {
			return run(cmd, args)
		}
		o.task, o.reason = tf.task, tf.reason
		if err := required("reason", o.reason); err != nil {
			return err
		}
		return a.printOverride(cmd.Context(), model.ActionCancel, o)
	}
	f := cmd.Flags()
	f.BoolVar(&o.force, "force", false, "cancel as an operator, whoever holds the task")
	f.StringVar(&o.expect, "expect-token", "", "with --force: refuse with CONFLICT unless the task still holds this lock token")
	f.BoolVarP(&o.yes, "yes", "y", false, "with --force: do not ask for confirmation")
}
