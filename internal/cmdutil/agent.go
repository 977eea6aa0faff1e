package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// taskFlags are the ntask contract's flags (seed 002).
type TaskFlags struct {
	Task, RunID, Agent, Token  string
	tokenFile, Body            string
	Reason, Unblock, NextCheck string
	Artifacts, Status, Title   string
	Priority, Class, Desc      string
	Parent                     string
	// parked creates the task in ntask's Backlog (sources.NewTask.Parked).
	Parked bool
	// via is the remote client a call came through (NAME@mcp-http), for
	// the trail; empty on the command line and MCP stdio.
	Via string
	// door is where the call came in: a person's own-claim path is open
	// at the command line only (model.Actor.Person).
	Door  model.Door
	Lease time.Duration
	// yes: a person finishing their own claim without its token is not
	// asked to confirm (the command line's --yes; never an MCP argument).
	yes bool
	// force: an MCP cancel as the operator (the command line's --force).
	Force bool
	// given names the flags set on this call: update changes only those.
	Given map[string]bool
}

// value is the flag's value as text, for the required-argument check.
func (tf *TaskFlags) value(name string) string {
	switch name {
	case "task":
		return tf.Task
	case "agent-name":
		return tf.Agent
	case "reason":
		return tf.Reason
	case "title":
		return tf.Title
	case "body":
		return tf.Body
	}
	return ""
}

func (tf *TaskFlags) Bind(cmd *cobra.Command, names ...string) {
	f := cmd.Flags()
	for _, n := range names {
		switch n {
		case "task":
			f.StringVar(&tf.Task, "task", "", "task id (native id: row id, page id, lock-file id)")
			f.StringVar(&tf.Task, "page-id", "", "alias of --task")
		case "run-id":
			f.StringVar(&tf.RunID, "run-id", "", "the agent run this claim belongs to")
		case "agent-name":
			f.StringVar(&tf.Agent, "agent-name", "", "the agent's name")
		case "lock-token":
			f.StringVar(&tf.Token, "lock-token", "", "the lock token claim returned (or $CLAIMDECK_LOCK_TOKEN, or --lock-token-file)")
			f.StringVar(&tf.tokenFile, "lock-token-file", "", "read the lock token from this file, so it does not show in ps")
		case "reason":
			f.StringVar(&tf.Reason, "reason", "", "why")
		case "unblock-action":
			f.StringVar(&tf.Unblock, "unblock-action", "", "what would unblock the task")
		case "next-check-at":
			f.StringVar(&tf.NextCheck, "next-check-at", "", "when to look again (RFC 3339)")
		case "artifacts":
			f.StringVar(&tf.Artifacts, "artifacts", "", "links or notes produced")
		case "status":
			f.StringVar(&tf.Status, "status", "", "filter by status: READY, IN_PROGRESS, BLOCKED, REVIEW, DONE, FAILED, CANCELED")
		case "title":
			f.StringVar(&tf.Title, "title", "", "task title")
		case "priority":
			f.StringVar(&tf.Priority, "priority", "", "priority: a number or critical, high, medium, low")
		case "class":
			f.StringVar(&tf.Class, "class", "", "class: EXPEDITE, FIXED_DATE, STANDARD, INTANGIBLE")
		case "description":
			f.StringVar(&tf.Desc, "description", "", "task description")
		case "parent":
			f.StringVar(&tf.Parent, "parent", "", "make the new task a sub-task of this task id")
		case "body":
			f.StringVar(&tf.Body, "body", "", "the comment")
		case "lease":
			f.DurationVar(&tf.Lease, "lease", 0, "lease to take or extend (default: the configured lease)")
		}
	}
}

func Required(flag, value string) error { return requiredAt(model.DoorCLI, flag, value) }

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
		return ArgName(flag)
	}
	return "--" + flag
}

// lockTokenEnv holds the lock token for agents that keep it out of argv.
const LockTokenEnv = "CLAIMDECK_LOCK_TOKEN"

// checkToken resolves the lock token (--lock-token, else --lock-token-file,
// else $CLAIMDECK_LOCK_TOKEN) and checks it is a UUID, naming where it came
// from when it is not.
func (tf *TaskFlags) checkToken() error {
	if err := requiredAt(tf.Door, "task", tf.Task); err != nil {
		return err
	}
	from := argAt(tf.Door, "lock-token")
	switch {
	case tf.Token != "":
	case tf.tokenFile != "":
		from = "--lock-token-file " + tf.tokenFile
		// The path is the caller's own for this run: a link is followed, but
		// only to a regular file of token size (no FIFO to hang on).
		b, _, err := sources.ReadShared(tf.tokenFile, sources.SharedRead{What: "--lock-token-file", Limit: 4096, FollowLinks: true})
		if err != nil {
			return model.Errorf(model.CodeMisconfigured, "", "", "%v", err)
		}
		tf.Token = strings.TrimSpace(string(b))
	case tf.Door == model.DoorMCPStdio || tf.Door == model.DoorMCPHTTP:
		// The server's own environment is no caller's token.
		return model.Errorf(model.CodeMisconfigured, "", "", "%s is required: the token claim returned", from)
	case os.Getenv(LockTokenEnv) != "":
		from = "$" + LockTokenEnv
		tf.Token = strings.TrimSpace(os.Getenv(LockTokenEnv))
	default:
		return model.Errorf(model.CodeMisconfigured, "", "", "--lock-token is required (or --lock-token-file, or $%s)", LockTokenEnv)
	}
	if _, err := uuid.Parse(tf.Token); err != nil {
		return model.Errorf(model.CodeMisconfigured, "", "", "the lock token from %s is not a UUID", from)
	}
	return nil
}

// recordRun notes in the task's trail which agent run made a holder write,
// under the caller's own name (model.WriterName), never the holder's: the
// contract's --run-id identifies the run, the lock token stays the fence. A heartbeat from the run that claimed adds nothing worth a note.
func (tf *TaskFlags) recordRun(ctx context.Context, src sources.Source, op string, t *model.Task) error {
	if tf.RunID == "" || (op == "heartbeat" && t != nil && t.Claim().RunID == tf.RunID) {
		return nil
	}
	return src.Comment(ctx, tf.Task, sources.Note{Author: tf.writer(), Text: op + " by run " + tf.RunID})
}

// recordClient notes in the trail which remote client made a claim or a
// create, which the backends record under the agent's name alone (the
// agent is who holds the lease) or under no name: NAME@mcp-http, as every
// other write through that client is. A local call adds nothing. The note
// is best effort: the claim or create has landed, and its answer (a claim's
// token above all) must reach the client even when the note cannot be
// written — a claim whose token is lost holds the task for a whole lease.
func (tf *TaskFlags) recordClient(ctx context.Context, src sources.Source, op string, t *model.Task, err error) (*model.Task, error) {
	if err != nil || t == nil || tf.Via == "" {
		return t, err
	}
	_ = src.Comment(ctx, t.ID, sources.Note{Author: tf.author(""), Text: op + " through " + tf.Via})
	return t, nil
}

// author is who a comment or an edit is recorded as: the agent name given,
// else the local operator; a remote client's name always, never the
// operator's.
func (tf *TaskFlags) author(operator string) string {
	if tf.Via != "" && tf.Agent == "" {
		return tf.Via
	}
	if tf.Via != "" {
		return tf.Agent + " via " + tf.Via
	}
	if tf.Agent != "" {
		return tf.Agent
	}
	return operator
}

// writer is who this caller's holder write is recorded as: its own agent
// and run (model.WriterName), and the remote client it came through.
func (tf *TaskFlags) writer() string {
	w := model.WriterName(tf.Agent, tf.RunID)
	if tf.Via != "" {
		w += " via " + tf.Via
	}
	return w
}

// withSource opens the chosen source for the length of one command.
func (a *Env) withSource(ctx context.Context, fn func(src sources.Source) error) error {
	sc, err := PickSource(a.Cfg, a.SourceName)
	if err != nil {
		return err
	}
	src, err := OpenSource(ctx, a.Cfg, sc, a.Create)
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
func (a *Env) WithTaskSource(ctx context.Context, id string, fn func(src sources.Source) error) error {
	if a.SourceName != "" || len(a.Cfg.Sources) == 1 || id == "" {
		return a.withSource(ctx, fn)
	}
	srcs, err := a.OpenAll(ctx)
	if err != nil {
		return err
	}
	defer CloseAll(srcs)
	var holders, names []string
	var at sources.Source
	var unread error
	for _, src := range srcs {
		_, err := Retrying(ctx, func() (*model.Task, error) { return src.Get(ctx, id) })
		switch {
		case err == nil && !slices.Contains(holders, src.Name()):
			// a moved source is served by its target: one queue, one holder
			holders, at = append(holders, src.Name()), src
		case err == nil:
		case errors.Is(err, model.ErrNoSuchTask) || model.CodeOf(err) == model.CodeMisconfigured:
			// not there, or an id this backend cannot hold
		case unread == nil:
			unread = fmt.Errorf("source %s: %w", src.Name(), err)
		}
		names = append(names, src.Name())
	}
	if def, _ := a.Cfg.DefaultName(); len(holders) > 1 && slices.Contains(holders, def) {
		// the default source answers for an id it holds too
		holders, at = []string{def}, srcs[slices.IndexFunc(srcs, func(s sources.Source) bool { return s.Name() == def })]
	}
	switch {
	case len(holders) > 1:
		return model.Errorf(model.CodeMisconfigured, "", id, "sources %s all hold a task with this id: choose one with --source", strings.Join(holders, " and "))
	case len(holders) == 1 && unread != nil:
		fmt.Fprintln(a.Stderr, "warning: reading", at.Name(), "as the only holder of", id, "but", model.Redact(unread.Error()))
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
func Transient(err error) bool {
	return model.CodeOf(err) == model.CodeAPIError && !errors.Is(err, model.ErrNoSuchTask)
}

// retrying runs an idempotent call again on a transient fault with
// exponential backoff, four tries in all.
func Retrying[T any](ctx context.Context, call func() (T, error)) (T, error) {
	wait := 200 * time.Millisecond
	for attempt := 1; ; attempt++ {
		v, err := call()
		if err == nil || !Transient(err) || attempt == 4 {
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
func (a *Env) opCommand(op agentOp) (*cobra.Command, *TaskFlags) {
	tf := &TaskFlags{}
	cmd := &cobra.Command{
		Use:   op.Name,
		Short: op.Short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tf.Given, tf.Door = map[string]bool{}, model.DoorCLI
			cmd.Flags().Visit(func(f *pflag.Flag) { tf.Given[f.Name] = true })
			an, err := a.RunOp(cmd.Context(), op, tf)
			if err != nil {
				return err
			}
			return a.Out().answer(an)
		},
	}
	tf.Bind(cmd, op.Args...)
	return cmd, tf
}

// agentCommands are the agent commands; comment, update, cancel and a
// person's own finishes (--yes) add what only a person at a shell needs.
func (a *Env) AgentCommands() []*cobra.Command {
	var out []*cobra.Command
	for _, op := range a.AgentOps() {
		cmd, tf := a.opCommand(op)
		switch op.Name {
		case "comment":
			a.commentExtras(cmd, op, tf)
		case "update":
			updateExtras(cmd)
		case "cancel":
			a.cancelExtras(cmd, tf)
		case "list":
			a.listExtras(cmd, tf)
		}
		if ownActions[op.Name] != "" {
			cmd.Flags().BoolVarP(&tf.yes, "yes", "y", false, "finishing your own claim without --lock-token: do not ask for confirmation")
		}
		out = append(out, cmd)
	}
	return out
}

// actor is who the call acts as where the desk records it: the configured
// actor at the command line; elsewhere the agent name given, else the
// remote client's name (NAME@mcp-http), else the configured actor.
func (tf *TaskFlags) actor(operator string) model.Actor {
	if tf.Door == model.DoorCLI {
		return model.Actor{Name: operator, Door: tf.Door}
	}
	return model.Actor{Name: tf.author(operator), Door: tf.Door}
}

// Set stores one flag's value as cobra would.
func (tf *TaskFlags) Set(flag, v string) error {
	dst := map[string]*string{
		"task": &tf.Task, "run-id": &tf.RunID, "agent-name": &tf.Agent, "lock-token": &tf.Token,
		"reason": &tf.Reason, "unblock-action": &tf.Unblock, "next-check-at": &tf.NextCheck,
		"artifacts": &tf.Artifacts, "status": &tf.Status, "title": &tf.Title, "priority": &tf.Priority,
		"class": &tf.Class, "description": &tf.Desc, "parent": &tf.Parent, "body": &tf.Body,
	}
	if p, ok := dst[flag]; ok {
		*p = v
		return nil
	}
	if flag == "force" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return model.Errorf(model.CodeMisconfigured, "", "", "force %q: want true or false", v)
		}
		tf.Force = b
		return nil
	}
	if flag == "lease" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return model.Errorf(model.CodeMisconfigured, "", "", "lease %q: want a duration such as 20m", v)
		}
		tf.Lease = d
		return nil
	}
	return model.Errorf(model.CodeMisconfigured, "", "", "unknown argument %q", ArgName(flag))
}
