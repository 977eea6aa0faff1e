package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// taskFlags are the ntask contract's flags (seed 002).
type taskFlags struct {
	task, runID, agent, token  string
	tokenFile, body            string
	reason, unblock, nextCheck string
	artifacts, status, title   string
	priority, class, desc      string
	parent                     string
	// parked creates the task in ntask's Backlog (sources.NewTask.Parked).
	parked bool
	// via is the remote client a call came through (NAME@mcp-http), for
	// the trail; empty on the command line and MCP stdio.
	via string
	// door is where the call came in: a person's own-claim path is open
	// at the command line only (model.Actor.Person).
	door  model.Door
	lease time.Duration
	// yes: a person finishing their own claim without its token is not
	// asked to confirm (the command line's --yes; never an MCP argument).
	yes bool
	// force: an MCP cancel as the operator (the command line's --force).
	force bool
	// given names the flags set on this call: update changes only those.
	given map[string]bool
}

// value is the flag's value as text, for the required-argument check.
func (tf *taskFlags) value(name string) string {
	switch name {
	case "task":
		return tf.task
	case "agent-name":
		return tf.agent
	case "reason":
		return tf.reason
	case "title":
		return tf.title
	case "body":
		return tf.body
	}
	return ""
}

func (tf *taskFlags) bind(cmd *cobra.Command, names ...string) {
	f := cmd.Flags()
	for _, n := range names {
		switch n {
		case "task":
			f.StringVar(&tf.task, "task", "", "task id (native id: row id, page id, lock-file id)")
			f.StringVar(&tf.task, "page-id", "", "alias of --task")
		case "run-id":
			f.StringVar(&tf.runID, "run-id", "", "the agent run this claim belongs to")
		case "agent-name":
			f.StringVar(&tf.agent, "agent-name", "", "the agent's name")
		case "lock-token":
			f.StringVar(&tf.token, "lock-token", "", "the lock token claim returned (or $CLAIMDECK_LOCK_TOKEN, or --lock-token-file)")
			f.StringVar(&tf.tokenFile, "lock-token-file", "", "read the lock token from this file, so it does not show in ps")
		case "reason":
			f.StringVar(&tf.reason, "reason", "", "why")
		case "unblock-action":
			f.StringVar(&tf.unblock, "unblock-action", "", "what would unblock the task")
		case "next-check-at":
			f.StringVar(&tf.nextCheck, "next-check-at", "", "when to look again (RFC 3339)")
		case "artifacts":
			f.StringVar(&tf.artifacts, "artifacts", "", "links or notes produced")
		case "status":
			f.StringVar(&tf.status, "status", "", "filter by status: READY, IN_PROGRESS, BLOCKED, REVIEW, DONE, FAILED, CANCELED")
		case "title":
			f.StringVar(&tf.title, "title", "", "task title")
		case "priority":
			f.StringVar(&tf.priority, "priority", "", "priority: a number or critical, high, medium, low")
		case "class":
			f.StringVar(&tf.class, "class", "", "class: EXPEDITE, FIXED_DATE, STANDARD, INTANGIBLE")
		case "description":
			f.StringVar(&tf.desc, "description", "", "task description")
		case "parent":
			f.StringVar(&tf.parent, "parent", "", "make the new task a sub-task of this task id")
		case "body":
			f.StringVar(&tf.body, "body", "", "the comment")
		case "lease":
			f.DurationVar(&tf.lease, "lease", 0, "lease to take or extend (default: the configured lease)")
		}
	}
}

func required(flag, value string) error { return requiredAt(model.DoorCLI, flag, value) }

// requiredAt is required naming the argument as the door spells it.
func requiredAt(door model.Door, flag, value string) error {
	name := argAt(door, flag)
	if flag == "task" {
		// A task id is taken as given, spaces and all (seed 003 rows may
		// have the id ' '), on every path; only an empty one is missing.
		if value == "" {
			return model.Errorf(model.CodeMisconfigured, "", "", "%s is required", name)
		}
		return model.Wrap(model.CodeMisconfigured, "", "", model.CheckText(name, value))
	}
	if strings.TrimSpace(value) == "" {
		return model.Errorf(model.CodeMisconfigured, "", "", "%s is required", name)
	}
	return nil
}

// argAt is a flag's name as a door spells it: --lock-token on a command
// line, lock_token to an MCP client, which has no flags.
func argAt(door model.Door, flag string) string {
	if door == model.DoorMCPStdio || door == model.DoorMCPHTTP {
		return argName(flag)
	}
	return "--" + flag
}

// lockTokenEnv holds the lock token for agents that keep it out of argv.
const lockTokenEnv = "CLAIMDECK_LOCK_TOKEN"

// checkToken resolves the lock token (--lock-token, else --lock-token-file,
// else $CLAIMDECK_LOCK_TOKEN) and checks it is a UUID, naming where it came
// from when it is not.
func (tf *taskFlags) checkToken() error {
	if err := requiredAt(tf.door, "task", tf.task); err != nil {
		return err
	}
	from := argAt(tf.door, "lock-token")
	switch {
	case tf.token != "":
	case tf.tokenFile != "":
		from = "--lock-token-file " + tf.tokenFile
		// The path is the caller's own for this run: a link is followed, but
		// only to a regular file of token size (no FIFO to hang on).
		b, _, err := sources.ReadShared(tf.tokenFile, sources.SharedRead{What: "--lock-token-file", Limit: 4096, FollowLinks: true})
		if err != nil {
			return model.Errorf(model.CodeMisconfigured, "", "", "%v", err)
		}
		tf.token = strings.TrimSpace(string(b))
	case tf.door == model.DoorMCPStdio || tf.door == model.DoorMCPHTTP:
		// The server's own environment is no caller's token.
		return model.Errorf(model.CodeMisconfigured, "", "", "%s is required: the token claim returned", from)
	case os.Getenv(lockTokenEnv) != "":
		from = "$" + lockTokenEnv
		tf.token = strings.TrimSpace(os.Getenv(lockTokenEnv))
	default:
		return model.Errorf(model.CodeMisconfigured, "", "", "--lock-token is required (or --lock-token-file, or $%s)", lockTokenEnv)
	}
	if _, err := uuid.Parse(tf.token); err != nil {
		return model.Errorf(model.CodeMisconfigured, "", "", "the lock token from %s is not a UUID", from)
	}
	return nil
}

// recordRun notes in the task's trail which agent run made a holder write,
// under the caller's own name (model.WriterName), never the holder's: the
// contract's --run-id identifies the run, the lock token stays the fence. A heartbeat from the run that claimed adds nothing worth a note.
func (tf *taskFlags) recordRun(ctx context.Context, src sources.Source, op string, t *model.Task) error {
	if tf.runID == "" || (op == "heartbeat" && t != nil && t.Claim().RunID == tf.runID) {
		return nil
	}
	return src.Comment(ctx, tf.task, sources.Note{Author: tf.writer(), Text: op + " by run " + tf.runID})
}

// recordClient notes in the trail which remote client made a claim or a
// create, which the backends record under the agent's name alone (the
// agent is who holds the lease) or under no name: NAME@mcp-http, as every
// other write through that client is. A local call adds nothing. The note
// is best effort: the claim or create has landed, and its answer (a claim's
// token above all) must reach the client even when the note cannot be
// written — a claim whose token is lost holds the task for a whole lease.
func (tf *taskFlags) recordClient(ctx context.Context, src sources.Source, op string, t *model.Task, err error) (*model.Task, error) {
	if err != nil || t == nil || tf.via == "" {
		return t, err
	}
	_ = src.Comment(ctx, t.ID, sources.Note{Author: tf.author(""), Text: op + " through " + tf.via})
	return t, nil
}

// author is who a comment or an edit is recorded as: the agent name given,
// else the local operator; a remote client's name always, never the
// operator's.
func (tf *taskFlags) author(operator string) string {
	if tf.via != "" && tf.agent == "" {
		return tf.via
	}
	if tf.via != "" {
		return tf.agent + " via " + tf.via
	}
	if tf.agent != "" {
		return tf.agent
	}
	return operator
}

// writer is who this caller's holder write is recorded as: its own agent
// and run (model.WriterName), and the remote client it came through.
func (tf *taskFlags) writer() string {
	w := model.WriterName(tf.agent, tf.runID)
	if tf.via != "" {
		w += " via " + tf.via
	}
	return w
}

// withSource opens the chosen source for the length of one command.
func (a *app) withSource(ctx context.Context, fn func(src sources.Source) error) error {
	sc, err := pickSource(a.cfg, a.sourceName)
	if err != nil {
		return err
	}
	src, err := openSource(ctx, a.cfg, sc, a.create)
	if err != nil {
		return err
	}
	defer src.Close()
	return fn(src)
}

// withTaskSource opens the source that holds the task id: --source, the
// only source, or else the one configured source holding it, so an id the
// dashboard copied needs no --source. An id two sources hold is
// MISCONFIGURED naming both; one no source holds is an unknown task. A
// source that cannot be read while another holds the id is warned about.
func (a *app) withTaskSource(ctx context.Context, id string, fn func(src sources.Source) error) error {
	if a.sourceName != "" || len(a.cfg.Sources) == 1 || id == "" {
		return a.withSource(ctx, fn)
	}
	srcs, err := a.openAll(ctx)
	if err != nil {
		return err
	}
	defer closeAll(srcs)
	var holders, names []string
	var at sources.Source
	var unread error
	for _, src := range srcs {
		_, err := retrying(ctx, func() (*model.Task, error) { return src.Get(ctx, id) })
		switch {
		case err == nil:
			holders, at = append(holders, src.Name()), src
		case errors.Is(err, model.ErrNoSuchTask) || model.CodeOf(err) == model.CodeMisconfigured:
			// not there, or an id this backend cannot hold
		case unread == nil:
			unread = fmt.Errorf("source %s: %w", src.Name(), err)
		}
		names = append(names, src.Name())
	}
	switch {
	case len(holders) > 1:
		return model.Errorf(model.CodeMisconfigured, "", id, "sources %s all hold a task with this id: choose one with --source", strings.Join(holders, " and "))
	case len(holders) == 1 && unread != nil:
		fmt.Fprintln(a.stderr, "warning: reading", at.Name(), "as the only holder of", id, "but", model.Redact(unread.Error()))
	case len(holders) == 0 && unread != nil:
		return unread
	case len(holders) == 0:
		return model.Errorf(model.CodeMisconfigured, "", id, "%w: no configured source holds it (looked in %s)", model.ErrNoSuchTask, strings.Join(names, ", "))
	}
	return fn(at)
}

// transient reports a fault worth trying again: API_ERROR is a transport,
// storage or rate-limit failure. CONFLICT, LOST_LOCK, MISCONFIGURED and an
// unknown task id are answers, not faults.
func transient(err error) bool {
	return model.CodeOf(err) == model.CodeAPIError && !errors.Is(err, model.ErrNoSuchTask)
}

// retrying runs an idempotent call again on a transient fault with
// exponential backoff, four tries in all.
func retrying[T any](ctx context.Context, call func() (T, error)) (T, error) {
	wait := 200 * time.Millisecond
	for attempt := 1; ; attempt++ {
		v, err := call()
		if err == nil || !transient(err) || attempt == 4 {
			return v, err
		}
		logOf(ctx).Debug("transient error; trying again", "attempt", attempt, "wait", wait, "error", err)
		select {
		case <-ctx.Done():
			return v, err
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// readCommands change nothing: they are allowed on a read-only source and
// never create a missing queue.
var readCommands = map[string]bool{"get": true, "next": true, "list": true, "doctor": true, "stats": true, "metrics": true}

// opCommand is the cobra command of an agent command.
func (a *app) opCommand(op agentOp) (*cobra.Command, *taskFlags) {
	tf := &taskFlags{}
	cmd := &cobra.Command{
		Use:   op.name,
		Short: op.short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tf.given, tf.door = map[string]bool{}, model.DoorCLI
			cmd.Flags().Visit(func(f *pflag.Flag) { tf.given[f.Name] = true })
			an, err := a.runOp(cmd.Context(), op, tf)
			if err != nil {
				return err
			}
			return a.out().answer(an)
		},
	}
	tf.bind(cmd, op.args...)
	return cmd, tf
}

// agentCommands are the agent commands; comment, update, cancel and a
// person's own finishes (--yes) add what only a person at a shell needs.
func (a *app) agentCommands() []*cobra.Command {
	var out []*cobra.Command
	for _, op := range a.agentOps() {
		cmd, tf := a.opCommand(op)
		switch op.name {
		case "comment":
			a.commentExtras(cmd, op, tf)
		case "update":
			updateExtras(cmd)
		case "cancel":
			a.cancelExtras(cmd, tf)
		case "list":
			a.listExtras(cmd, tf)
		}
		if ownActions[op.name] != "" {
			cmd.Flags().BoolVarP(&tf.yes, "yes", "y", false, "finishing your own claim without --lock-token: do not ask for confirmation")
		}
		out = append(out, cmd)
	}
	return out
}

// actor is who the call acts as where the desk records it: the configured
// actor at the command line; elsewhere the agent name given, else the
// remote client's name (NAME@mcp-http), else the configured actor.
func (tf *taskFlags) actor(operator string) model.Actor {
	if tf.door == model.DoorCLI {
		return model.Actor{Name: operator, Door: tf.door}
	}
	return model.Actor{Name: tf.author(operator), Door: tf.door}
}
