package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// override is one operator command's parameters.
type override struct {
	task, reason, to, priority, expect string
	unblock, artifacts                 string
	filter                             string
	// by, when set, is who asks instead of the configured actor at the
	// command line (an MCP client, an ntask agent).
	by                 model.Actor
	reserve            time.Duration
	yes, force, dryRun bool
}

// openJournal opens the configured audit log, or says what to set when
// there is no HOME to put the default one in.
func (a *app) openJournal() (*sources.Journal, error) {
	if a.cfg.AuditLog == "" {
		return nil, noHome("the audit log", "XDG_DATA_HOME", "audit_log")
	}
	return sources.OpenJournal(expand(a.cfg.AuditLog))
}

// desk builds the Desk every human action goes through.
func (a *app) desk() (*sources.Desk, func(), error) {
	j, err := a.openJournal()
	if err != nil {
		return nil, nil, model.Wrap(model.CodeMisconfigured, "audit", "", err)
	}
	d := &sources.Desk{Actor: a.cfg.Actor, Door: model.DoorCLI, Journal: j, ReadOnly: a.cfg.readOnly, SelfApprove: a.cfg.Review.SelfApprove}
	return d, func() { _ = j.Close() }, nil
}

// printOverride applies an operator command and prints the task after it.
func (a *app) printOverride(ctx context.Context, action model.Action, o *override) error {
	if o.filter != "" || o.dryRun {
		return a.bulkOverride(ctx, action, o)
	}
	t, err := a.applyOverride(ctx, action, o)
	if err != nil {
		return err
	}
	p := a.out()
	p.holder = action == model.ActionTakeover // a takeover hands the new token to its taker
	return p.task(t)
}

// applyOverride reads the task, checks --expect-token, asks on a terminal
// unless --yes, and applies the action through the Desk.
func (a *app) applyOverride(ctx context.Context, action model.Action, o *override) (*model.Task, error) {
	if err := requiredAt(o.by.Door, "task", o.task); err != nil {
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
		if o.expect != "" && !model.TokenSeen(seen.Claim().Token, o.expect) {
			e := model.Errorf(model.CodeConflict, string(action), o.task, "%s no longer matches: the task is %s, held by %q", expectArg(o.by.Door), seen.State, seen.Claim().Name)
			e.Current = seen
			return e
		}
		req := sources.Request{Action: action, Seen: seen, Reason: o.reason, To: o.to, For: o.reserve, Priority: o.priority, Unblock: o.unblock, Artifacts: o.artifacts, By: o.by}
		// Refused before anyone is asked: what the action needs, a task
		// not in Review, a claim that is not the person's own.
		if err := desk.Precheck(seen, req); err != nil {
			return err
		}
		if err := a.confirmed(action, seen, o, true); err != nil {
			return err
		}
		after, err = desk.Apply(ctx, src, req)
		return err
	})
	return after, err
}

// expectArg names the token an override expects as the door spells it:
// the command line's --expect-token is an MCP tool's lock_token.
func expectArg(door model.Door) string {
	if a := argAt(door, "lock-token"); !strings.HasPrefix(a, "--") {
		return a
	}
	return "--expect-token"
}

// isTerminal reports whether r is a terminal a person can answer on. A
// character device is not enough: /dev/null (stdin under cron) is one.
func isTerminal(r any) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// confirmed asks the person at the terminal y/N before action on t when
// model.Action.Needs says it needs a confirmation and --yes was not given;
// nil when it is confirmed or nobody is to be asked. With no terminal to
// ask on, an override (mustAsk) is refused; a person's own claim finished
// by a script without its token goes on unasked, as it always has.
func (a *app) confirmed(action model.Action, t *model.Task, o *override, mustAsk bool) error {
	if !action.Needs().Confirm || o.yes {
		return nil
	}
	if !isTerminal(a.stdin) {
		if !mustAsk {
			return nil
		}
		return model.Errorf(model.CodeMisconfigured, string(action), t.ID, "no terminal to confirm on: pass --yes to act without asking; nothing was done")
	}
	if !a.confirm(action, t, o) {
		return model.Errorf(model.CodeMisconfigured, string(action), t.ID, "not confirmed; nothing was done")
	}
	return nil
}

// confirm asks y/N on the terminal; anything but y/yes is No.
func (a *app) confirm(action model.Action, t *model.Task, o *override) bool {
	holder := "nobody"
	if t.Held() {
		holder = t.Claim().Holder.String() + " " + t.Claim().Name
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
	f.StringVar(&o.expect, "expect-token", "", "refuse with CONFLICT unless the task still holds this lock token (in full, or the prefix list and get show)")
	f.BoolVarP(&o.yes, "yes", "y", false, "do not ask for confirmation")
	bulkFlags(cmd, o)
}

func bulkFlags(cmd *cobra.Command, o *override) {
	f := cmd.Flags()
	f.StringVar(&o.filter, "filter", "", "act on every task the filter matches, e.g. 'node:ORACLE_LOCAL level>=stale' (instead of --task); node: and level read the mesh as the registry last recorded it (no pings)")
	f.BoolVar(&o.dryRun, "dry-run", false, "with --filter: print what would be done and refused; change nothing")
}

// bulkOverride is an operator command over every task --filter matches in
// every source (or --source): the preview as JSON, then, unless --dry-run
// or not confirmed, each task applied through the desk and the summary.
func (a *app) bulkOverride(ctx context.Context, action model.Action, o *override) error {
	op := string(action)
	if o.task != "" || o.expect != "" {
		return model.Errorf(model.CodeMisconfigured, op, o.task, "--filter selects the tasks: drop --task and --expect-token")
	}
	if o.filter == "" {
		return model.Errorf(model.CodeMisconfigured, op, "", "--dry-run previews a --filter: pass --filter")
	}
	f, err := model.ParseFilter(o.filter)
	if err != nil {
		return model.Wrap(model.CodeMisconfigured, op, "", err)
	}
	desk, closeDesk, err := a.desk()
	if err != nil {
		return err
	}
	defer closeDesk()
	standing, err := a.standing()
	if err != nil {
		return err
	}
	// Finished tasks are history no action applies to: only live work is read.
	byName, all, closeSrcs, err := a.readAll(ctx, sources.PollOption{FinishedAfter: time.Now(), Uncounted: true})
	if err != nil {
		return fmt.Errorf("%w; nothing was done", err)
	}
	defer closeSrcs()
	req := sources.Request{Action: action, Reason: o.reason, To: o.to, For: o.reserve, Priority: o.priority}
	preview := desk.PreviewBulk(req, f.Select(all, standing, time.Now()))
	out := map[string]any{"ok": true, "filter": o.filter, "dry_run": o.dryRun, "preview": preview}
	if o.dryRun {
		return a.out().json(out)
	}
	if action.Needs().Confirm && !o.yes && len(preview.Apply) > 0 {
		if !isTerminal(a.stdin) {
			return model.Errorf(model.CodeMisconfigured, op, "", "no terminal to confirm on: pass --yes to act without asking (--dry-run to preview); nothing was done")
		}
		fmt.Fprintf(a.stderr, "%s %d of %d tasks matching %q (%d refused)\nProceed? [y/N] ", action, len(preview.Apply), preview.Count, o.filter, len(preview.Refused))
		line, _ := bufio.NewReader(a.stdin).ReadString('\n')
		if answer := strings.ToLower(strings.TrimSpace(line)); answer != "y" && answer != "yes" {
			return model.Errorf(model.CodeMisconfigured, op, "", "not confirmed; nothing was done")
		}
	}
	summary := desk.ApplyBulk(ctx, func(name string) sources.Source { return byName[name] }, preview, req, a.stderrProgress(op))
	out["summary"] = summary
	serr := summary.Err()
	out["ok"] = serr == nil
	if err := a.out().json(out); err != nil {
		return err
	}
	if serr != nil {
		return exitStatus(model.CodeOf(serr).ExitStatus())
	}
	return nil
}

func (a *app) operatorCommands() []*cobra.Command {
	takeover := a.overrideCommand(model.ActionTakeover, &override{})

	rel := &override{}
	release := &cobra.Command{
		Use:   "release",
		Short: "Give your own claim back to the queue, or (--force) release anyone's (operator; audited)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !rel.force {
				return a.releaseOwn(cmd.Context(), rel)
			}
			return a.printOverride(cmd.Context(), model.ActionForceRelease, rel)
		},
	}
	a.overrideFlags(release, rel)
	release.Flags().BoolVar(&rel.force, "force", false, "release even though an agent or human holds the task")

	// The target and the priority words are the desk's to check
	// (model.Action.Needs), as at every door.
	hand := &override{}
	handoff := a.overrideCommand(model.ActionHandoff, hand)
	handoff.Flags().StringVar(&hand.to, "to", "", "the agent to hand to, or ANY")
	handoff.Flags().StringVar(&hand.priority, "priority", "normal", strings.Join(model.HandoffPriorities, ", ")+" (seed 001)")
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
			if o.filter != "" {
				return model.Errorf(model.CodeMisconfigured, "cancel", "", "cancelling the tasks a filter matches needs --force")
			}
			return run(cmd, args)
		}
		o.task, o.reason = tf.task, tf.reason
		if o.filter != "" && o.task != "" {
			return model.Errorf(model.CodeMisconfigured, "cancel", o.task, "--filter selects the tasks: drop --task")
		}
		// Asked once before a filter's tasks are read; the rule is the
		// desk's (model.Action.Needs).
		if model.ActionCancel.Needs().Reason {
			if err := required("reason", o.reason); err != nil {
				return err
			}
		}
		return a.printOverride(cmd.Context(), model.ActionCancel, o)
	}
	f := cmd.Flags()
	f.BoolVar(&o.force, "force", false, "cancel as an operator, whoever holds the task")
	f.StringVar(&o.expect, "expect-token", "", "with --force: refuse with CONFLICT unless the task still holds this lock token")
	f.BoolVarP(&o.yes, "yes", "y", false, "with --force: do not ask for confirmation")
	bulkFlags(cmd, o)
}
