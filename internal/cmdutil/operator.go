package cmdutil

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
type Override struct {
	Task, Reason, To, Priority, Expect string
	unblock, artifacts                 string
	filter                             string
	// by, when set, is who asks instead of the configured actor at the
	// command line (an MCP client, an ntask agent).
	By                 model.Actor
	Reserve            time.Duration
	Yes, Force, dryRun bool
}

// openJournal opens the configured audit log, or says what to set when
// there is no HOME to put the default one in.
func (a *Env) openJournal() (*sources.Journal, error) {
	if a.Cfg.AuditLog == "" {
		return nil, NoHome("the audit log", "XDG_DATA_HOME", "audit_log")
	}
	return sources.OpenJournal(Expand(a.Cfg.AuditLog))
}

// desk builds the Desk every human action goes through.
func (a *Env) Desk() (*sources.Desk, func(), error) {
	j, err := a.openJournal()
	if err != nil {
		return nil, nil, model.Wrap(model.CodeMisconfigured, "audit", "", err)
	}
	d := &sources.Desk{Actor: a.Cfg.Actor, Door: model.DoorCLI, Journal: j, ReadOnly: a.Cfg.ReadOnlyFor, SelfApprove: a.Cfg.Review.SelfApprove, Grace: a.Cfg.Policy().Grace}
	return d, func() { _ = j.Close() }, nil
}

// printOverride applies an operator command and prints the task after it.
func (a *Env) PrintOverride(ctx context.Context, action model.Action, o *Override) error {
	if o.filter != "" || o.dryRun {
		return a.bulkOverride(ctx, action, o)
	}
	t, err := a.ApplyOverride(ctx, action, o)
	if err != nil {
		return err
	}
	p := a.Out()
	p.holder = action == model.ActionTakeover // a takeover hands the new token to its taker
	return p.task(t)
}

// applyOverride reads the task, checks --expect-token, asks on a terminal
// unless --yes, and applies the action through the Desk.
func (a *Env) ApplyOverride(ctx context.Context, action model.Action, o *Override) (*model.Task, error) {
	if err := requiredAt(o.By.Door, "task", o.Task); err != nil {
		return nil, err
	}
	desk, closeDesk, err := a.Desk()
	if err != nil {
		return nil, err
	}
	defer closeDesk()
	var after *model.Task
	err = a.withSource(ctx, func(src sources.Source) error {
		if desk.ReadOnly(src.Name()) {
			return model.Errorf(model.CodeMisconfigured, string(action), o.Task, "source %q is read-only", src.Name())
		}
		seen, err := src.Get(ctx, o.Task)
		if err != nil {
			return err
		}
		req := sources.Request{Action: action, Seen: seen, Reason: o.Reason, To: o.To, For: o.Reserve, Priority: o.Priority, Unblock: o.unblock, Artifacts: o.artifacts, By: o.By}
		if err := CheckCaller(action, seen.ID, o.By); err != nil {
			req.By.Name = RefusedName
			return desk.Refuse(ctx, src, req, err)
		}
		if o.Expect != "" && !model.TokenSeen(seen.Claim().Token, o.Expect) {
			e := model.Errorf(model.CodeConflict, string(action), o.Task, "%s no longer matches: the task is %s, held by %q", expectArg(o.By.Door), seen.State, seen.Claim().Name)
			e.Current = seen
			return desk.Refuse(ctx, src, req, e)
		}
		// Refused before anyone is asked: what the action needs, a task
		// not in Review, a claim that is not the person's own, a
		// self-approval. Kept in the shared trail like the desk's own.
		if err := desk.Precheck(seen, req); err != nil {
			return desk.Refuse(ctx, src, req, err)
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
func IsTerminal(r any) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// confirmed asks the person at the terminal y/N before action on t when
// model.Action.Needs says it needs a confirmation and --yes was not given;
// nil when it is confirmed or nobody is to be asked. With no terminal to
// ask on, an override (mustAsk) is refused; a person's own claim finished
// by a script without its token goes on unasked, as it always has.
func (a *Env) confirmed(action model.Action, t *model.Task, o *Override, mustAsk bool) error {
	if !action.Needs().Confirm || o.Yes {
		return nil
	}
	if !IsTerminal(a.Stdin) {
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
func (a *Env) confirm(action model.Action, t *model.Task, o *Override) bool {
	holder := "nobody"
	if t.Held() {
		holder = t.Claim().Holder.String() + " " + t.Claim().Name
	}
	fmt.Fprintf(a.Stderr, "%s %s/%s %q\n  state %s, held by %s", action, t.Source, t.DisplayKey(), t.Title, t.State, holder)
	if o.To != "" {
		fmt.Fprintf(a.Stderr, ", hand to %s", o.To)
	}
	fmt.Fprint(a.Stderr, "\nProceed? [y/N] ")
	line, _ := bufio.NewReader(a.Stdin).ReadString('\n')
	answer := strings.ToLower(strings.TrimSpace(line))
	return answer == "y" || answer == "yes"
}

// Proceed asks the person at the terminal y/N after the question format
// says; without a terminal it refuses (MISCONFIGURED naming --yes, and hint
// after it), as every command that acts on more than it names does. The
// caller asks only when --yes was not given.
func (a *Env) Proceed(op, hint, format string, args ...any) error {
	if !IsTerminal(a.Stdin) {
		return model.Errorf(model.CodeMisconfigured, op, "", "no terminal to confirm on: pass --yes to act without asking%s; nothing was done", hint)
	}
	fmt.Fprintf(a.Stderr, format+"\nProceed? [y/N] ", args...)
	line, _ := bufio.NewReader(a.Stdin).ReadString('\n')
	if answer := strings.ToLower(strings.TrimSpace(line)); answer != "y" && answer != "yes" {
		return model.Errorf(model.CodeMisconfigured, op, "", "not confirmed; nothing was done")
	}
	return nil
}

func (a *Env) OverrideFlags(cmd *cobra.Command, o *Override) {
	f := cmd.Flags()
	f.StringVar(&o.Task, "task", "", "task id")
	f.StringVar(&o.Task, "page-id", "", "alias of --task")
	f.StringVar(&o.Reason, "reason", "", "why (recorded in the audit trail)")
	f.StringVar(&o.Expect, "expect-token", "", "refuse with CONFLICT unless the task still holds this lock token (in full, or the prefix list and get show)")
	f.BoolVarP(&o.Yes, "yes", "y", false, "do not ask for confirmation")
	bulkFlags(cmd, o)
}

func bulkFlags(cmd *cobra.Command, o *Override) {
	f := cmd.Flags()
	f.StringVar(&o.filter, "filter", "", "act on every task the filter matches, e.g. 'node:ORACLE_LOCAL level>=stale' (instead of --task); node: and level read the mesh as the registry last recorded it (no pings)")
	f.BoolVar(&o.dryRun, "dry-run", false, "with --filter: print what would be done and refused; change nothing")
}

// bulkOverride is an operator command over every task --filter matches in
// every source (or --source): the preview as JSON, then, unless --dry-run
// or not confirmed, each task applied through the desk and the summary.
func (a *Env) bulkOverride(ctx context.Context, action model.Action, o *Override) error {
	op := string(action)
	if o.Task != "" || o.Expect != "" {
		return model.Errorf(model.CodeMisconfigured, op, o.Task, "--filter selects the tasks: drop --task and --expect-token")
	}
	if o.filter == "" {
		return model.Errorf(model.CodeMisconfigured, op, "", "--dry-run previews a --filter: pass --filter")
	}
	f, err := model.ParseFilter(o.filter)
	if err != nil {
		return model.Wrap(model.CodeMisconfigured, op, "", err)
	}
	desk, closeDesk, err := a.Desk()
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
	req := sources.Request{Action: action, Reason: o.Reason, To: o.To, For: o.Reserve, Priority: o.Priority}
	preview := desk.PreviewBulk(req, f.Select(all, standing, time.Now()))
	out := map[string]any{"ok": true, "filter": o.filter, "dry_run": o.dryRun, "preview": preview}
	if o.dryRun {
		return a.Out().JSON(out)
	}
	if action.Needs().Confirm && !o.Yes && len(preview.Apply) > 0 {
		if err := a.Proceed(op, " (--dry-run to preview)", "%s %d of %d tasks matching %q (%d refused)", action, len(preview.Apply), preview.Count, o.filter, len(preview.Refused)); err != nil {
			return err
		}
	}
	summary := desk.ApplyBulk(ctx, func(name string) sources.Source { return byName[name] }, preview, req, a.StderrProgress(op))
	out["summary"] = summary
	serr := summary.Err()
	out["ok"] = serr == nil
	if err := a.Out().JSON(out); err != nil {
		return err
	}
	if serr != nil {
		return ExitStatus(model.CodeOf(serr).ExitStatus())
	}
	return nil
}

// cancelExtras adds the operator's cancel (--force, a reason, audited) to
// the holder's.
func (a *Env) cancelExtras(cmd *cobra.Command, tf *TaskFlags) {
	o := &Override{}
	run := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if !o.Force {
			if o.filter != "" {
				return model.Errorf(model.CodeMisconfigured, "cancel", "", "cancelling the tasks a filter matches needs --force")
			}
			return run(cmd, args)
		}
		o.Task, o.Reason = tf.Task, tf.Reason
		if o.filter != "" && o.Task != "" {
			return model.Errorf(model.CodeMisconfigured, "cancel", o.Task, "--filter selects the tasks: drop --task")
		}
		// Asked once before a filter's tasks are read; the rule is the
		// desk's (model.Action.Needs).
		if model.ActionCancel.Needs().Reason {
			if err := Required("reason", o.Reason); err != nil {
				return err
			}
		}
		return a.PrintOverride(cmd.Context(), model.ActionCancel, o)
	}
	f := cmd.Flags()
	f.BoolVar(&o.Force, "force", false, "cancel as an operator, whoever holds the task")
	f.StringVar(&o.Expect, "expect-token", "", "with --force: refuse with CONFLICT unless the task still holds this lock token")
	f.BoolVarP(&o.Yes, "yes", "y", false, "with --force: do not ask for confirmation")
	bulkFlags(cmd, o)
}

// CheckCaller holds the name an agent door's caller gives itself (MCP
// stdio's agent_name, ntask's NOTION_AGENT_USER_ID) to
// model.CheckCallerName: no HUMAN: or @mcp-http look-alike, no blank or
// invisible glyph, no trail separator. An HTTP client is named by the
// configuration (checked there) and a person's door by the actor.
func CheckCaller(op model.Action, id string, by model.Actor) error {
	field := "agent_name"
	switch by.Door {
	case model.DoorMCPStdio:
	case model.DoorNtask:
		field = "NOTION_AGENT_USER_ID"
	default:
		return nil
	}
	if strings.TrimSpace(by.Name) == "" {
		return nil // the desk refuses a nameless caller, in the door's words
	}
	if err := model.CheckCallerName(field, by.Name); err != nil {
		return model.Errorf(model.CodeMisconfigured, string(op), id, "%v: nothing was done", err)
	}
	return nil
}

// RefusedName is who a refused attempt is recorded under when the name
// the caller gave was itself refused: never the name it tried to take.
const RefusedName = "(a refused name)"
