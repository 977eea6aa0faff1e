package ntask

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// The ntask grammar: today's notion-task skill (openclaw-skills at 75590fd,
// binary 0.4.x, CLI Contract v1.x) over every backend, under the name
// `ntask` or as `claimdeck ntask …`. Each command resolves its positional
// task id and applies the agent command of the same rules that serve the
// older grammar and MCP (agentOps); only the words differ.

// ntaskName is the program name under which claimdeck speaks today's contract.
const Name = "ntask"

// ntaskLease is the lease claim takes by default and heartbeat always
// extends to (Claim.swift: leaseMin = 15; Heartbeat.swift: 15 minutes).
const ntaskLease = 15 * time.Minute

// calledAsNtask reports whether argv[0] names the ntask binary (a symlink or
// a copy of claimdeck).
func CalledAs(argv0 string) bool {
	return strings.TrimSuffix(filepath.Base(argv0), ".exe") == Name
}

// ntaskEnv names the environment today's ntask reads.
const (
	EnvNotionToken = "NOTION_TOKEN"
	EnvNotionDB    = "NOTION_TASKS_DB_ID"
	EnvNotionAgent = "NOTION_AGENT_USER_ID"
	EnvNtaskSource = "NTASK_SOURCE"
)

// ntaskContract is the binary version whose contract the grammar follows.
const ntaskContract = "0.4.1"

// runNtask executes one ntask command line and returns its exit status:
// 0, 10 NO_TASKS, 20 CONFLICT, 21 LOST_LOCK, 30 API_ERROR, 40
// MISCONFIGURED, 41 INCOMPLETE_SUBTASKS.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	n := &Ntask{Env: &cmdutil.Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, NoCompletions: !cmdutil.CompletionRequest(args)}}
	return cmdutil.Execute(ctx, n.Root(), args, stdin, stdout, stderr, n.fail)
}

type Ntask struct {
	*cmdutil.Env
	lockToken string // --lock-token: the token given instead of the state file
	warning   string // what went wrong after a write landed, for the answer
}

// print writes v as the binary does: one JSON document, keys sorted,
// indented.
func (n *Ntask) print(v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = n.Stdout.Write(append(b, '\n'))
	return err
}

// fail prints the error envelope (Responses.swift's NTaskErrorResponse),
// with the task as it is now when the error carries it.
func (n *Ntask) fail(err error) int {
	code := model.CodeOf(err)
	// The code is the envelope's own field; the message need not repeat it.
	msg := strings.TrimPrefix(model.Redact(err.Error()), string(code)+": ")
	out := map[string]any{"ok": false, "error": map[string]string{"code": string(code), "message": msg}}
	if t := model.CurrentOf(err); t != nil {
		out["task"] = ntaskTask(t)
	}
	if code == model.CodeNoTasks {
		out["message"] = msg // where the binary's own answer (Next.swift) keeps it
	}
	_ = n.print(out)
	return code.ExitStatusV1()
}

// ok prints a success envelope with one task.
func (n *Ntask) ok(t *model.Task, extra map[string]any) error {
	task := ntaskTask(t)
	for k, v := range extra {
		task[k] = v
	}
	out := map[string]any{"ok": true, "task": task}
	if n.warning != "" {
		out["warning"] = n.warning
	}
	return n.print(out)
}

// ntaskTask is a task in Responses.swift's TaskSummary shape: sorted keys,
// absent fields left out, statuses and classes in title case. The lock
// token is claim's answer alone; title is claimdeck's addition.
func ntaskTask(t *model.Task) map[string]any {
	status := t.State.Title(t.RawStatus)
	if t.InBacklog() {
		status = "Backlog"
	}
	m := map[string]any{"page_id": t.ID, "task_id": t.DisplayKey(), "status": status, "class": t.Class.Title()}
	put := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	put("title", t.Title)
	if t.Priority != 0 {
		m["priority"] = t.Priority
	}
	if t.State == model.StateClaimed {
		put("agent_run", t.Claim().RunID)
		put("lock_expires", cmdutil.Stamp(t.Claim().Expires.Time()))
		put("started_at", cmdutil.Stamp(t.Claim().ClaimedAt.Time()))
	}
	switch t.State {
	case model.StateBlocked:
		put("blocker_reason", t.More().Reason)
		put("unblock_action", t.UnblockAction())
		put("next_check_at", cmdutil.Stamp(t.NextCheckAt()))
	case model.StateDone:
		put("done_at", cmdutil.Stamp(t.EditedAt.Time()))
	default:
		put("reason", t.More().Reason)
	}
	put("parent_task_id", t.More().Parent)
	return m
}

// root is the ntask command tree, in NTaskCommand.swift's order.
func (n *Ntask) Root() *cobra.Command {
	root := &cobra.Command{
		Use:   Name,
		Short: "Task queue CLI for agents on today's notion-task skill (ntask 0.4), over every claimdeck source",
		Long: `ntask is claimdeck under today's notion-task skill's grammar: positional task
ids (TASK-42, 42, or the row, page or lock id), the lock kept in
~/.openclaw/state/current-task.json, JSON on stdout, exit status 0, 10
NO_TASKS, 20 CONFLICT, 21 LOST_LOCK, 30 API_ERROR, 40 MISCONFIGURED, 41
INCOMPLETE_SUBTASKS. With no claimdeck configuration, NOTION_TOKEN and
NOTION_TASKS_DB_ID configure a Notion source; with several sources,
NTASK_SOURCE or default_source picks one.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := LoadNtaskConfig()
			if err != nil {
				return err
			}
			n.Cfg = cfg
			// The embedded queue is made by the first command, doctor and
			// next too: an agent's run starts with them.
			n.Create = cfg.Implicit
			return nil
		},
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return model.Errorf(model.CodeMisconfigured, "", "", "%v", err)
	})
	root.AddCommand(n.doctor(), n.next(), n.claim(), n.heartbeat(), n.block(),
		n.moveCommand(model.ActionUnblock, "", ""),
		n.escalate(),
		n.createCmd(), n.list(), n.get(), n.comment(), n.review(),
		n.moveCommand(model.ActionApprove, "summary", "optional approval summary, kept in the trail"),
		n.moveCommand(model.ActionRework, "reason", "reason for rework (feedback for the worker)"),
		n.cancel(), n.update(), n.reap(), n.version())
	n.Decorate(root)
	return root
}

// loadNtaskConfig is the usual configuration, except that with none at all
// the binary's own environment configures a Notion source.
func LoadNtaskConfig() (*cmdutil.Config, error) {
	cfg, err := cmdutil.LoadConfig("")
	if err != nil {
		return nil, err
	}
	if cfg.Implicit && os.Getenv(EnvNotionToken) != "" && os.Getenv(EnvNotionDB) != "" {
		cfg.Sources = []cmdutil.SourceConfig{{Name: "notion", Kind: "notion", TokenEnv: EnvNotionToken,
			DatabaseID: strings.TrimSpace(os.Getenv(EnvNotionDB)), Schema: "ntask"}}
		cfg.Implicit = false
		if err := cfg.Validate(); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

// pick is the source ntask acts on: $NTASK_SOURCE, else what every door
// falls back to (cmdutil.PickSource: $CLAIMDECK_DEFAULT_SOURCE,
// default_source, the only one); 40 naming the choices when there are
// several and nothing picks one.
func (n *Ntask) pick() (cmdutil.SourceConfig, error) {
	return cmdutil.PickSourceBy(n.Cfg, strings.TrimSpace(os.Getenv(EnvNtaskSource)), "$"+EnvNtaskSource)
}

// on opens the picked source for the length of one command.
func (n *Ntask) on(ctx context.Context, fn func(src sources.Source) error) error {
	sc, err := n.pick()
	if err != nil {
		return err
	}
	src, err := cmdutil.OpenSource(ctx, n.Cfg, sc, n.Create)
	if err != nil {
		return err
	}
	defer src.Close()
	return fn(src)
}

// apply runs the agent command name of agentOps on src.
func (n *Ntask) apply(ctx context.Context, src sources.Source, name string, tf *cmdutil.TaskFlags) (*model.Task, error) {
	tf.Door = model.DoorNtask
	an, err := n.RunOpOn(ctx, src, n.AgentOp(name), tf)
	n.warning = an.Warning
	return an.Task, err
}

// desked applies a move or a cancel through the desk, as the agent: the
// same rules, audit log and CONFLICT explanation as claimdeck's own.
func (n *Ntask) desked(ctx context.Context, src sources.Source, req sources.Request) (*model.Task, error) {
	desk, closeDesk, err := n.Desk()
	if err != nil {
		return nil, err
	}
	defer closeDesk()
	req.By = model.Actor{Name: n.agent(), Door: model.DoorNtask}
	if cmdutil.HumanOpOf(req.Action).Caller {
		// A reviewer's move is the calling agent's, named by
		// NOTION_AGENT_USER_ID, never the configured person: the desk
		// refuses a nameless one and an approval by the review's author.
		req.By.Name = strings.TrimSpace(os.Getenv(EnvNotionAgent))
	}
	if err := cmdutil.CheckCaller(req.Action, req.Seen.ID, req.By); err != nil {
		req.By.Name = cmdutil.RefusedName
		return nil, desk.Refuse(ctx, src, req, err)
	}
	return desk.Apply(ctx, src, req)
}

// agent is who claims: the binary's NOTION_AGENT_USER_ID, else the
// configured actor.
func (n *Ntask) agent() string {
	if a := strings.TrimSpace(os.Getenv(EnvNotionAgent)); a != "" {
		return a
	}
	return n.Cfg.Actor
}

// resolve finds the task an agent names: a native id, or the key in any
// case, or else its number alone (model.NamedBy).
func resolve(ctx context.Context, src sources.Source, ref string) (*model.Task, error) {
	ref = strings.TrimSpace(ref)
	if err := model.CheckText("the task id", ref); err != nil {
		return nil, model.Errorf(model.CodeMisconfigured, "", "", "%v", err)
	}
	if ref == "" {
		return nil, model.Errorf(model.CodeMisconfigured, "", "", "a task id is required (e.g. TASK-42)")
	}
	t, err := cmdutil.Retrying(ctx, func() (*model.Task, error) { return src.Get(ctx, ref) })
	if err == nil {
		return t, nil
	}
	if model.CodeOf(err) != model.CodeMisconfigured {
		return nil, err
	}
	d, err := cmdutil.Retrying(ctx, func() (sources.Delta, error) { return src.Poll(ctx, "") })
	if err != nil {
		return nil, err
	}
	var found []*model.Task
	best := model.NamedNot
	for _, t := range d.Tasks {
		switch how := model.NamedBy(t, ref); {
		case how > best:
			found, best = []*model.Task{t}, how
		case how == best && how != model.NamedNot:
			found = append(found, t)
		}
	}
	switch len(found) {
	case 0:
		return nil, model.Errorf(model.CodeMisconfigured, "", ref, "%w: no task has this id or key (ntask list shows them)", model.ErrNoSuchTask)
	case 1:
		return cmdutil.Retrying(ctx, func() (*model.Task, error) { return src.Get(ctx, found[0].ID) })
	}
	keys := make([]string, len(found))
	for i, t := range found {
		keys[i] = t.DisplayKey() + " (" + t.ID + ")"
	}
	return nil, model.Errorf(model.CodeMisconfigured, "", ref, "%d tasks answer to this id: give one of %s", len(found), strings.Join(keys, ", "))
}

// held is the lock the agent holds on t: --lock-token, else the state file,
// which must be for this task (LockState.swift: "Lock state is for X, not Y").
func (n *Ntask) held(ref string, t *model.Task) (string, error) {
	if n.lockToken != "" {
		return n.lockToken, nil
	}
	s, err := LoadState()
	if err != nil {
		return "", err
	}
	if s.TaskID != ref && s.PageID != t.ID && model.NamedBy(t, s.TaskID) != model.NamedExactly {
		return "", model.Errorf(model.CodeMisconfigured, "", "", "Lock state is for %s, not %s", s.TaskID, ref)
	}
	return s.LockToken, nil
}

// command is one ntask command taking a positional task id.
func (n *Ntask) command(use, short string, run func(ctx context.Context, src sources.Source, ref string, t *model.Task) error) *cobra.Command {
	return &cobra.Command{
		Use:   use + " <task-id>",
		Short: short,
		Args:  exactlyOneTask,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return n.on(ctx, func(src sources.Source) error {
				t, err := resolve(ctx, src, args[0])
				if err != nil {
					return err
				}
				return run(ctx, src, args[0], t)
			})
		},
	}
}

func exactlyOneTask(_ *cobra.Command, args []string) error {
	if len(args) != 1 {
		return model.Errorf(model.CodeMisconfigured, "", "", "give exactly one task id (e.g. TASK-42), not %d arguments", len(args))
	}
	return nil
}

// lockFlag adds --lock-token, which the binary no longer needs but an
// agent may still give instead of the state file.
func (n *Ntask) lockFlag(cmd *cobra.Command) *cobra.Command {
	cmd.Flags().StringVar(&n.lockToken, "lock-token", "", "the lock token, instead of ~/.openclaw/state/current-task.json")
	return cmd
}

func (n *Ntask) doctor() *cobra.Command {
	return &cobra.Command{
		Use: "doctor", Short: "Validate the configuration and the source's access", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sc, err := n.pick()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			r := n.Diagnose(ctx, sc)
			checks := map[string]any{
				// claimdeck speaks to Notion itself: no ntn CLI is needed.
				"notion_cli":            map[string]any{"found": true, "version": "claimdeck " + model.Build().String() + " (built in)"},
				"db_accessible":         r.OK,
				"source":                sc.Name,
				"kind":                  sc.Kind,
				"env_" + EnvNotionDB:    os.Getenv(EnvNotionDB) != "",
				"env_" + EnvNotionAgent: os.Getenv(EnvNotionAgent) != "",
			}
			if sc.Kind == "notion" {
				checks["notion_token"] = map[string]any{"available": r.OK || os.Getenv(EnvNotionToken) != ""}
			}
			var problems []string
			if !r.OK {
				problems = append(problems, r.Problems())
			}
			// claim keeps the lock token in the state file: without it no
			// claim is made.
			serr := stateWritable()
			checks["state_writable"] = serr == nil
			if serr != nil {
				problems = append(problems, serr.Error())
			}
			if len(problems) > 0 {
				return n.printExit(map[string]any{"ok": false, "checks": checks,
					"error": map[string]string{"code": string(model.CodeMisconfigured), "message": "Environment check failed: " + model.Redact(strings.Join(problems, "; "))}},
					model.CodeMisconfigured)
			}
			return n.print(map[string]any{"ok": true, "checks": checks})
		},
	}
}

// printExit prints v and ends with code's exit status.
func (n *Ntask) printExit(v any, code model.Code) error {
	if err := n.print(v); err != nil {
		return err
	}
	return cmdutil.ExitStatus(code.ExitStatusV1())
}

func (n *Ntask) next() *cobra.Command {
	return &cobra.Command{
		Use: "next", Short: "Get the highest-priority ready task", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			return n.on(ctx, func(src sources.Source) error {
				t, err := n.apply(ctx, src, "next", &cmdutil.TaskFlags{Agent: n.agent()})
				if err != nil {
					return err
				}
				if t == nil {
					// workflow.md: "No tasks (exit 10 = NO_TASKS)"; the binary's
					// message (Next.swift) kept.
					return model.Errorf(model.CodeNoTasks, "", "", "No ready tasks found")
				}
				return n.ok(t, nil)
			})
		},
	}
}

func (n *Ntask) claim() *cobra.Command {
	var leaseMin int
	cmd := n.command("claim", "Claim a task for this agent run", func(ctx context.Context, src sources.Source, ref string, t *model.Task) error {
		if leaseMin < 1 || leaseMin > 24*60 {
			return model.Errorf(model.CodeMisconfigured, "", "", "--lease-min %d: want 1 to 1440 minutes", leaseMin)
		}
		// The token lives in the state file alone: a claim it cannot be
		// saved for would hold the task for a whole lease, unreachable.
		if err := stateWritable(); err != nil {
			return err
		}
		if err := n.homeHeld(ctx, src); err != nil {
			return err
		}
		tf := &cmdutil.TaskFlags{Task: t.ID, Agent: n.agent(), RunID: uuid.NewString(), Lease: time.Duration(leaseMin) * time.Minute}
		got, err := n.apply(ctx, src, "claim", tf)
		if err != nil {
			return err
		}
		if err := SaveState(LockState{TaskID: ref, RunID: got.Claim().RunID, LockToken: got.Claim().Token,
			LockExpires: cmdutil.Stamp(got.Claim().Expires.Time()), PageID: got.ID}); err != nil {
			return n.unclaim(ctx, src, got, err)
		}
		return n.ok(got, map[string]any{"lock_token": got.Claim().Token})
	})
	cmd.Flags().IntVar(&leaseMin, "lease-min", int(ntaskLease/time.Minute), "lease duration in minutes")
	return cmd
}

// homeHeld refuses a claim whose lock state would overwrite another
// agent's live claim: two agents sharing a HOME share one state file, and
// the first would lose its lock token. MISCONFIGURED (40), not CONFLICT:
// the agent is to stop and be given a HOME of its own, not go on to the
// next task and meet the same refusal. A state file that cannot be read,
// or whose claim is over, this agent's own, or in another source, is
// written over as the binary does.
func (n *Ntask) homeHeld(ctx context.Context, src sources.Source) error {
	s, err := LoadState()
	if err != nil {
		return nil
	}
	id := s.PageID
	if id == "" {
		id = s.TaskID
	}
	t, err := src.Get(ctx, id)
	if err != nil {
		return nil
	}
	c := t.Claim()
	if !c.Held() || c.Token != s.LockToken || c.Name == n.agent() || (!c.Expires.Time().IsZero() && !c.Expires.Time().After(time.Now())) {
		return nil
	}
	path, _ := StatePath()
	return model.Errorf(model.CodeMisconfigured, "claim", "", "the lock state %s holds agent %s's live claim on %s (lease until %s): one HOME per agent — run agent %s with a HOME of its own; nothing was claimed",
		path, c.Name, t.DisplayKey(), cmdutil.Stamp(c.Expires.Time()), n.agent())
}

// unclaim gives back a claim whose lock state could not be saved (saveErr)
// and answers saveErr, saying the claim was given back, or that it could
// not be and when its lease ends.
func (n *Ntask) unclaim(ctx context.Context, src sources.Source, got *model.Task, saveErr error) error {
	_, err := src.Handoff(ctx, got.ID, sources.Handoff{Human: sources.Human{Actor: n.agent(), Reason: "the lock state could not be saved"},
		Token: got.Claim().Token, To: model.AnyAgent})
	e := model.Errorf(model.CodeMisconfigured, "claim", got.ID, "%s; the claim was given back to the queue", strings.TrimPrefix(saveErr.Error(), string(model.CodeMisconfigured)+": "))
	if err != nil {
		e = model.Errorf(model.CodeMisconfigured, "claim", got.ID, "%s; giving the claim back failed too (%v): it holds the task until %s", strings.TrimPrefix(saveErr.Error(), string(model.CodeMisconfigured)+": "), err, cmdutil.Stamp(got.Claim().Expires.Time()))
	}
	return e
}

// holderOp runs a holder's agent command on t with the lock the agent
// holds, then forgets the lock when the command gave it up.
func (n *Ntask) holderOp(ctx context.Context, src sources.Source, ref string, t *model.Task, name string, tf *cmdutil.TaskFlags, releases bool) (*model.Task, error) {
	token, err := n.held(ref, t)
	if err != nil {
		return nil, err
	}
	// The trail names the caller, never the claim's holder (WriterName).
	tf.Task, tf.Token, tf.Agent = t.ID, token, n.agent()
	got, err := n.apply(ctx, src, name, tf)
	if err != nil {
		return nil, err
	}
	if releases && n.lockToken == "" {
		return got, ClearState()
	}
	return got, nil
}

func (n *Ntask) heartbeat() *cobra.Command {
	return n.lockFlag(n.command("heartbeat", "Extend the lock lease on a claimed task", func(ctx context.Context, src sources.Source, ref string, t *model.Task) error {
		got, err := n.holderOp(ctx, src, ref, t, "heartbeat", &cmdutil.TaskFlags{Lease: ntaskLease}, false)
		if err != nil {
			return err
		}
		if n.lockToken == "" {
			s, err := LoadState()
			if err != nil {
				return err
			}
			s.LockExpires = cmdutil.Stamp(got.Claim().Expires.Time())
			if err := SaveState(s); err != nil {
				return err
			}
		}
		return n.ok(got, nil)
	}))
}

func (n *Ntask) block() *cobra.Command {
	var reason, unblock, next string
	cmd := n.lockFlag(n.command("block", "Mark a task as Blocked with reason", func(ctx context.Context, src sources.Source, ref string, t *model.Task) error {
		if next != "" {
			if _, err := time.Parse(time.RFC3339, next); err != nil {
				return model.Errorf(model.CodeMisconfigured, "", "", "--next-check %q is not an ISO 8601 time (e.g. 2026-02-01T09:00:00Z)", next)
			}
		}
		got, err := n.holderOp(ctx, src, ref, t, "block", &cmdutil.TaskFlags{Reason: reason, Unblock: unblock, NextCheck: next}, true)
		if err != nil {
			return err
		}
		return n.ok(got, nil)
	}))
	cmd.Flags().StringVar(&reason, "reason", "", "reason the task is blocked")
	cmd.Flags().StringVar(&unblock, "unblock-action", "", "what needs to happen to unblock")
	cmd.Flags().StringVar(&next, "next-check", "", "ISO 8601 time for the next check (optional)")
	_ = cmd.MarkFlagRequired("reason")
	_ = cmd.MarkFlagRequired("unblock-action")
	return cmd
}

func (n *Ntask) escalate() *cobra.Command {
	return n.lockFlag(n.command("escalate", "Escalate a claimed task to human attention (claimdeck's escalation mark; ends the lease)", func(ctx context.Context, src sources.Source, ref string, t *model.Task) error {
		token, err := n.held(ref, t)
		if err != nil {
			return err
		}
		if err := n.Writable(src, "escalate", t.ID); err != nil {
			return err
		}
		if err := src.MarkEscalation(ctx, t.ID, token, model.LevelEscalated); err != nil {
			return err
		}
		if n.lockToken == "" {
			if err := ClearState(); err != nil {
				return err
			}
		}
		got, err := src.Get(ctx, t.ID)
		if err != nil {
			return err
		}
		return n.ok(got, map[string]any{"escalation": got.Escalated.String()})
	}))
}

func (n *Ntask) createCmd() *cobra.Command {
	var title, class, parent, status, ac string
	var prio int
	cmd := &cobra.Command{
		Use: "create", Short: "Create a new task or subtask", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if err := checkNtaskPriority(prio); err != nil {
				return err
			}
			st, err := cmdutil.ParseStatus(status)
			if err != nil {
				return err
			}
			if st != model.StateQueued {
				return model.Errorf(model.CodeMisconfigured, "", "", "Initial status must be Backlog or Ready, got '%s'", status)
			}
			return n.on(ctx, func(src sources.Source) error {
				// Create.swift's default: Backlog, parked until triaged.
				parked := strings.EqualFold(strings.TrimSpace(status), "backlog")
				tf := &cmdutil.TaskFlags{Title: title, Priority: fmt.Sprint(prio), Class: class, Parked: parked}
				if parent != "" {
					p, err := resolve(ctx, src, parent)
					if err != nil {
						return err
					}
					tf.Parent = p.ID
				}
				got, err := n.apply(ctx, src, "create", tf)
				if err != nil {
					return err
				}
				if err := n.criteria(ctx, src, got, ac); err != nil {
					return err
				}
				return n.ok(got, nil)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&title, "title", "", "task title")
	f.IntVar(&prio, "priority", 2, "priority 1-3 (higher = more urgent)")
	f.StringVar(&class, "class", "Standard", "class of service: Expedite, Fixed Date, Standard, Intangible")
	f.StringVar(&parent, "parent", "", "parent task id to create a subtask under")
	f.StringVar(&status, "status", "Backlog", "initial status: Backlog (parked: next never pulls it until update --status Ready) or Ready")
	acFlags(f, &ac)
	_ = cmd.MarkFlagRequired("title")
	return cmd
}

// acFlags adds --acceptance-criteria and its alias --ac.
func acFlags(f *pflag.FlagSet, ac *string) {
	f.StringVar(ac, "acceptance-criteria", "", "acceptance criteria, kept as a comment in the task's trail")
	f.StringVar(ac, "ac", "", "alias of --acceptance-criteria")
}

// criteria keeps acceptance criteria, which no claimdeck backend has a
// field for, as a comment in the task's trail.
func (n *Ntask) criteria(ctx context.Context, src sources.Source, t *model.Task, ac string) error {
	if strings.TrimSpace(ac) == "" {
		return nil
	}
	return src.Comment(ctx, t.ID, sources.Note{Author: n.agent(), Text: "Acceptance criteria: " + ac})
}

// checkNtaskPriority is the binary's range (Create.swift, Update.swift).
func checkNtaskPriority(p int) error {
	if p < 1 || p > 3 {
		return model.Errorf(model.CodeMisconfigured, "", "", "Priority must be 1-3, got %d", p)
	}
	return nil
}

func (n *Ntask) list() *cobra.Command {
	var status string
	var limit int
	cmd := &cobra.Command{
		Use: "list", Short: "List tasks with optional status filter", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if limit < 1 {
				return model.Errorf(model.CodeMisconfigured, "", "", "--limit %d: want 1 or more", limit)
			}
			return n.on(ctx, func(src sources.Source) error {
				an, err := n.RunOpOn(ctx, src, n.AgentOp("list"), &cmdutil.TaskFlags{Status: status})
				if err != nil {
					return err
				}
				tasks := an.Tasks
				if len(tasks) > limit {
					tasks = tasks[:limit]
				}
				out := make([]map[string]any, len(tasks))
				for i, t := range tasks {
					out[i] = ntaskTask(t)
				}
				return n.print(map[string]any{"ok": true, "tasks": out, "count": len(out)})
			})
		},
	}
	cmd.Flags().StringVar(&status, "status", "", "filter by status (Ready, In Progress, Blocked, Review, Done, Canceled; any case)")
	cmd.Flags().IntVar(&limit, "limit", 50, "maximum number of results")
	return cmd
}

func (n *Ntask) get() *cobra.Command {
	return n.command("get", "Get full details of a specific task", func(_ context.Context, _ sources.Source, _ string, t *model.Task) error {
		return n.ok(t, nil)
	})
}

func (n *Ntask) comment() *cobra.Command {
	var text string
	cmd := n.command("comment", "Add a comment to a task", func(ctx context.Context, src sources.Source, ref string, t *model.Task) error {
		if _, err := n.apply(ctx, src, "comment", &cmdutil.TaskFlags{Task: t.ID, Agent: n.agent(), Body: text}); err != nil {
			return err
		}
		return n.print(map[string]any{"ok": true, "task_id": ref, "comment": text})
	})
	cmd.Flags().StringVar(&text, "text", "", "comment text")
	_ = cmd.MarkFlagRequired("text")
	return cmd
}

func (n *Ntask) review() *cobra.Command {
	var summary string
	cmd := n.lockFlag(n.command("review", "Move a claimed task to Review for human inspection; releases the lock", func(ctx context.Context, src sources.Source, ref string, t *model.Task) error {
		if strings.TrimSpace(summary) == "" {
			return model.Errorf(model.CodeMisconfigured, "", "", "--summary is required: what was done, for the reviewer")
		}
		if _, err := n.held(ref, t); err != nil {
			return err
		}
		if err := model.CheckReview(t); err != nil {
			return err
		}
		got, err := n.holderOp(ctx, src, ref, t, "review", &cmdutil.TaskFlags{Reason: summary}, true)
		if err != nil {
			return err
		}
		return n.ok(got, nil)
	}))
	cmd.Flags().StringVar(&summary, "summary", "", "work summary for the reviewer")
	_ = cmd.MarkFlagRequired("summary")
	return cmd
}

// ntaskShorts are the ntask contract's own words for its human commands
// (commands.json at 75590fd); a human command the contract does not name
// shows its action's row (model.ActionRows).
var ntaskShorts = map[model.Action]string{
	model.ActionApprove: "Approve a reviewed task and mark as Done",
	model.ActionRework:  "Send a reviewed task back for rework",
	model.ActionCancel:  "Cancel a task with reason (conditional lock: required from In Progress, lock-free from other statuses)",
}

// ntaskShort is the one line of help ntask shows for a human action.
func ntaskShort(a model.Action) string {
	if s, ok := ntaskShorts[a]; ok {
		return s
	}
	return a.Row().Help
}

// reasonFlag adds the text flag of a human action, required when the
// action needs a reason (model.Action.Needs).
func reasonFlag(cmd *cobra.Command, a model.Action, text *string, flag, help string) {
	cmd.Flags().StringVar(text, flag, "", help)
	if a.Needs().Reason {
		_ = cmd.MarkFlagRequired(flag)
	}
}

// moveCommand is approve, rework or unblock: a lock-free move of the task
// as read (model.Action.Move) through the desk, with its text flag, which
// is required when the action needs a reason.
func (n *Ntask) moveCommand(a model.Action, flag, help string) *cobra.Command {
	var text string
	cmd := n.command(a.Row().Word, ntaskShort(a), func(ctx context.Context, src sources.Source, _ string, t *model.Task) error {
		got, err := n.desked(ctx, src, sources.Request{Action: a, Seen: t, Reason: text})
		if err != nil {
			return err
		}
		extra := map[string]any{}
		if a.Needs().Reason {
			extra["reason"] = text
		}
		return n.ok(got, extra)
	})
	if flag != "" {
		reasonFlag(cmd, a, &text, flag, help)
	}
	return cmd
}

func (n *Ntask) cancel() *cobra.Command {
	var reason string
	cmd := n.lockFlag(n.command(model.ActionCancel.Row().Word, ntaskShort(model.ActionCancel), func(ctx context.Context, src sources.Source, ref string, t *model.Task) error {
		if model.ActionCancel.Needs().Reason && strings.TrimSpace(reason) == "" {
			return model.Errorf(model.CodeMisconfigured, "", "", "--reason is required")
		}
		switch {
		case t.State == model.StateDone || t.State == model.StateCanceled:
			// Cancel.swift: idempotent in a terminal state.
			return n.ok(t, map[string]any{"reason": reason})
		case t.State == model.StateClaimed:
			got, err := n.holderOp(ctx, src, ref, t, "cancel", &cmdutil.TaskFlags{Reason: reason}, true)
			if err != nil {
				return err
			}
			return n.ok(got, nil)
		}
		got, err := n.desked(ctx, src, sources.Request{Action: model.ActionCancel, Seen: t, Reason: reason})
		if err != nil {
			return err
		}
		return n.ok(got, nil)
	}))
	reasonFlag(cmd, model.ActionCancel, &reason, "reason", "reason for cancellation")
	return cmd
}

func (n *Ntask) update() *cobra.Command {
	var prio int
	var class, status, ac string
	cmd := n.command("update", "Update task properties (priority, class, status)", func(ctx context.Context, src sources.Source, ref string, t *model.Task) error {
		tf := &cmdutil.TaskFlags{Task: t.ID, Agent: n.agent(), Given: map[string]bool{}}
		if prio != 0 {
			if err := checkNtaskPriority(prio); err != nil {
				return err
			}
			tf.Priority, tf.Given["priority"] = fmt.Sprint(prio), true
		}
		if class != "" {
			tf.Class, tf.Given["class"] = class, true
		}
		if status != "" {
			st, err := cmdutil.ParseStatus(status)
			if err != nil {
				return err
			}
			// Update.swift: these statuses belong to their commands.
			if cmd, ok := map[model.State]string{model.StateDone: "complete", model.StateClaimed: "claim", model.StateReview: "review"}[st]; ok {
				return model.Errorf(model.CodeMisconfigured, "", "", "Cannot set status to %s via update — use the '%s' command instead", st.Title(""), cmd)
			}
			tf.Status, tf.Given["status"] = status, true
		}
		if len(tf.Given) == 0 {
			if ac == "" {
				return model.Errorf(model.CodeMisconfigured, "", "", "At least one property must be specified (--priority, --class, --status, --acceptance-criteria)")
			}
			if err := n.criteria(ctx, src, t, ac); err != nil {
				return err
			}
			return n.ok(t, nil)
		}
		// A task this agent holds is edited under its lock.
		if s, err := LoadState(); err == nil && t.State == model.StateClaimed && (s.PageID == t.ID || s.TaskID == ref) {
			tf.Token = s.LockToken
		}
		if n.lockToken != "" {
			tf.Token = n.lockToken
		}
		got, err := n.apply(ctx, src, "update", tf)
		if err != nil {
			return err
		}
		if err := n.criteria(ctx, src, got, ac); err != nil {
			return err
		}
		return n.ok(got, nil)
	})
	n.lockFlag(cmd)
	f := cmd.Flags()
	f.IntVar(&prio, "priority", 0, "new priority 1-3 (higher = more urgent)")
	f.StringVar(&class, "class", "", "new class of service: Expedite, Fixed Date, Standard, Intangible")
	f.StringVar(&status, "status", "", "new status: Backlog, Ready or Blocked (cancel, review, approve, rework own the others)")
	acFlags(f, &ac)
	return cmd
}

func (n *Ntask) version() *cobra.Command {
	return &cobra.Command{
		Use: "version", Short: "Print version information", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return n.print(map[string]any{"ok": true, "version": model.Build().String(), "contract": ntaskContract})
		},
	}
}
