package cmdutil

import (
	"context"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// agentOp is one agent command as both doors serve it: the CLI builds a
// cobra command from it and `claimdeck mcp` a tool, so the two never
// disagree on what a command does.
type agentOp struct {
	Name, Short string
	// tool is the MCP tool's one line where short names a command-line
	// flag, which an MCP client has not.
	Tool string
	// args are the taskFlags names it takes; required ones must be given.
	Args, Required []string
	run            func(ctx context.Context, src sources.Source, tf *TaskFlags) (Answer, error)
}

// answer is what an agent command prints: one task (possibly none) or a
// list.
type Answer struct {
	Task  *model.Task
	Tasks []*model.Task
	list  bool
	// classify adds each task's standing to what a read command prints.
	classify func(*model.Task) model.Classification
	// holder marks an answer to the token's holder: it carries the full
	// lock token; every other answer shows model.ShownToken.
	Holder bool
	// warning says what went wrong after the write landed (its trail note).
	Warning string
	// more: a list the source already cut at the limit goes on with this
	// many tasks (sources.MoreUncounted: some, not counted).
	more int
}

// payload is the answer in the ntask contract's JSON shape.
func (an Answer) Payload() map[string]any {
	p := Printer{classify: an.classify, holder: an.Holder}
	if an.list {
		out := make([]*TaskJSON, len(an.Tasks))
		for i, t := range an.Tasks {
			out[i] = p.ToJSON(t)
		}
		return map[string]any{"ok": true, "tasks": out}
	}
	out := map[string]any{"ok": true, "task": p.ToJSON(an.Task)}
	if an.Warning != "" {
		out["warning"] = an.Warning
	}
	return out
}

// noted is the answer to a write that landed, after its trail note: a
// note that failed is a warning on the answer, never the write's error —
// the caller must not take a landed write for a failed one and retry it.
func noted(an Answer, noteErr error) (Answer, error) {
	if noteErr != nil {
		an.Warning = "the write landed, but its note in the task's trail could not be written: " + model.Redact(noteErr.Error())
	}
	return an, nil
}

func one(t *model.Task, err error) (Answer, error) { return Answer{Task: t}, err }

// holder is the answer to the holder of the task's token: a claim hands the
// token over, a holder write echoes the token its caller gave.
func holder(t *model.Task, err error) (Answer, error) { return Answer{Task: t, Holder: true}, err }

// ownActions are the holder commands a person may run on their own claim
// without its token.
var ownActions = map[string]model.Action{"complete": model.ActionComplete, "block": model.ActionBlock, "review": model.ActionReview}

// agentOps are the agent commands, in the contract's order.
func (a *Env) AgentOps() []agentOp {
	finish := func(name, short string, state model.State, args ...string) agentOp {
		req := []string{"task"}
		if state == model.StateBlocked || state == model.StateCanceled {
			req = append(req, "reason")
		}
		return agentOp{Name: name, Short: short, Required: req,
			Args: append([]string{"task", "lock-token", "run-id", "agent-name"}, args...),
			run: func(ctx context.Context, src sources.Source, tf *TaskFlags) (Answer, error) {
				if own := ownActions[name]; own != "" && tf.actor(a.Cfg.Actor).Person() {
					if t, handled, err := a.finishOwn(ctx, src, own, tf); handled {
						return one(t, err)
					}
				}
				if err := tf.checkToken(); err != nil {
					return Answer{}, err
				}
				o := sources.Outcome{State: state, Reason: tf.Reason, UnblockAction: tf.Unblock, Artifacts: tf.Artifacts, Writer: tf.writer(), Door: tf.Door}
				if tf.NextCheck != "" {
					at, err := time.Parse(time.RFC3339, tf.NextCheck)
					if err != nil {
						return Answer{}, model.Errorf(model.CodeMisconfigured, "", "", "--next-check-at %q is not an RFC 3339 time (e.g. 2026-02-01T09:00:00Z)", tf.NextCheck)
					}
					o.NextCheckAt = at
				}
				t, err := src.Finish(ctx, tf.Task, tf.Token, o)
				if err != nil {
					return Answer{}, err
				}
				return noted(Answer{Task: t, Holder: true}, tf.recordRun(ctx, src, name, t))
			}}
	}
	cancel := finish("cancel", "Cancel a task: the holder with --lock-token, an operator with --force --reason", model.StateCanceled, "reason")
	cancel.Tool = "Cancel a task you hold (lock_token), with a reason"
	return []agentOp{
		{Name: "next", Short: "Show the first task eligible for this agent (claims nothing)", Args: []string{"agent-name"},
			run: func(ctx context.Context, src sources.Source, tf *TaskFlags) (Answer, error) {
				return one(Retrying(ctx, func() (*model.Task, error) { return src.Next(ctx, tf.Agent) }))
			}},
		{Name: "claim", Short: "Claim a task (or, without --task, the next eligible one)", Tool: "Claim a task (or, without task, the next eligible one)", Args: []string{"task", "agent-name", "run-id", "lease"}, Required: []string{"agent-name"},
			run: func(ctx context.Context, src sources.Source, tf *TaskFlags) (Answer, error) {
				req := sources.ClaimRequest{Agent: tf.Agent, RunID: tf.RunID, Lease: tf.Lease, Door: tf.Door}
				if tf.Task == "" {
					t, err := src.ClaimNext(ctx, req)
					return holder(tf.recordClient(ctx, src, "claim", t, err))
				}
				t, err := src.Claim(ctx, tf.Task, req)
				return holder(tf.recordClient(ctx, src, "claim", t, err))
			}},
		{Name: "heartbeat", Short: "Extend the lease of a claimed task", Args: []string{"task", "lock-token", "run-id", "agent-name", "lease"}, Required: []string{"task"},
			run: func(ctx context.Context, src sources.Source, tf *TaskFlags) (Answer, error) {
				if err := tf.checkToken(); err != nil {
					return Answer{}, err
				}
				t, err := Retrying(ctx, func() (*model.Task, error) { return src.Heartbeat(ctx, tf.Task, tf.Token, tf.Lease) })
				if err != nil {
					return Answer{}, err
				}
				return noted(Answer{Task: t, Holder: true}, tf.recordRun(ctx, src, "heartbeat", t))
			}},
		finish("complete", "Mark a claimed task done", model.StateDone, "artifacts"),
		finish("block", "Park a claimed task as blocked", model.StateBlocked, "reason", "unblock-action", "next-check-at"),
		finish("review", "Hand a claimed task to review", model.StateReview, "artifacts"),
		finish("fail", "Mark a claimed task failed", model.StateFailed, "reason"),
		cancel,
		{Name: "comment", Short: "Add a comment to a task's trail (a Notion comment, the SQL audit table, the lock file's history)",
			Args: []string{"task", "agent-name", "body"}, Required: []string{"task", "body"},
			run: func(ctx context.Context, src sources.Source, tf *TaskFlags) (Answer, error) {
				if err := src.Comment(ctx, tf.Task, sources.Note{Author: tf.author(a.Cfg.Actor), Text: tf.Body}); err != nil {
					return Answer{}, err
				}
				return one(src.Get(ctx, tf.Task))
			}},
		{Name: "get", Short: "Read one task, fresh", Args: []string{"task"}, Required: []string{"task"},
			run: func(ctx context.Context, src sources.Source, tf *TaskFlags) (Answer, error) {
				return one(Retrying(ctx, func() (*model.Task, error) { return src.Get(ctx, tf.Task) }))
			}},
		{Name: "list", Short: "List tasks in pull order (of every source when several are configured and no --source is given)", Tool: "List tasks in pull order", Args: []string{"status"},
			run: func(ctx context.Context, src sources.Source, tf *TaskFlags) (Answer, error) {
				want, err := listState(tf.Status)
				if err != nil {
					return Answer{}, err
				}
				// The source cuts the list at the limit the answer prints
				// (a first screen of the queue, read from its index).
				type page struct {
					tasks []*model.Task
					more  int
				}
				got, err := Retrying(ctx, func() (page, error) {
					tasks, more, err := sources.List(ctx, src, want, a.Out().limit)
					return page{tasks, more}, err
				})
				return Answer{Tasks: got.tasks, list: true, more: got.more}, err
			}},
		{Name: "create", Short: "Add a task to the queue", Args: []string{"title", "priority", "class", "description", "parent"}, Required: []string{"title"},
			run: func(ctx context.Context, src sources.Source, tf *TaskFlags) (Answer, error) {
				prio, err := model.ParsePriority(tf.Priority)
				if err != nil {
					return Answer{}, model.Errorf(model.CodeMisconfigured, "", "", "--priority: %v", err)
				}
				class, err := model.ParseClass(tf.Class)
				if err != nil {
					return Answer{}, model.Errorf(model.CodeMisconfigured, "", "", "--class: %v", err)
				}
				t, err := src.Create(ctx, sources.NewTask{Title: tf.Title, Description: tf.Desc, Priority: prio, Class: class, Parent: tf.Parent, Parked: tf.Parked})
				return one(tf.recordClient(ctx, src, "create", t, err))
			}},
		{Name: "update", Short: "Edit a task's title, priority, class, or status between READY and BLOCKED (a claimed task only by its holder)",
			Args: []string{"task", "lock-token", "run-id", "agent-name", "title", "priority", "class", "status", "reason"}, Required: []string{"task"},
			run: func(ctx context.Context, src sources.Source, tf *TaskFlags) (Answer, error) {
				e, err := tf.edit(a.Cfg.Actor)
				if err != nil {
					return Answer{}, err
				}
				t, err := src.Update(ctx, tf.Task, e)
				if err != nil {
					return Answer{}, a.Refused(ctx, src, "update", tf.Task, model.Actor{Name: e.Actor, Door: e.Door}, err)
				}
				return noted(Answer{Task: t, Holder: e.Token != ""}, tf.recordRun(ctx, src, "update", t))
			}},
	}
}

// edit is the update the flags ask for; only the fields given change.
func (tf *TaskFlags) edit(actor string) (sources.Edit, error) {
	e := sources.Edit{Actor: tf.author(actor), Door: tf.Door, Reason: tf.Reason}
	if tf.Token != "" || tf.tokenFile != "" {
		if err := tf.checkToken(); err != nil {
			return e, err
		}
		// A holder write: the trail names the caller, not the configured actor.
		e.Token, e.Actor = tf.Token, tf.writer()
	}
	if tf.Given["title"] {
		e.Title = &tf.Title
	}
	if tf.Given["priority"] {
		p, err := model.ParsePriority(tf.Priority)
		if err != nil {
			return e, model.Errorf(model.CodeMisconfigured, "", "", "--priority: %v", err)
		}
		e.Priority = &p
	}
	if tf.Given["class"] {
		c, err := model.ParseClass(tf.Class)
		if err != nil {
			return e, model.Errorf(model.CodeMisconfigured, "", "", "--class: %v", err)
		}
		e.Class = &c
	}
	if tf.Given["status"] {
		st, err := ParseStatus(tf.Status)
		if err != nil {
			return e, err
		}
		e.State = st
	}
	if e.Empty() {
		return e, model.Errorf(model.CodeMisconfigured, "update", tf.Task, "nothing to update: give --title, --priority, --class or --status")
	}
	return e, nil
}

// runOp applies one agent command to the chosen source: required
// arguments, read-only mode, then the command itself.
func (a *Env) RunOp(ctx context.Context, op agentOp, tf *TaskFlags) (Answer, error) {
	for _, r := range op.Required {
		if err := requiredAt(tf.Door, r, tf.value(r)); err != nil {
			return Answer{}, err
		}
	}
	// list reads every source unless one is named or is the default: an
	// agent lists the queue it claims from.
	if def, _ := a.Cfg.DefaultName(); op.Name == "list" && a.SourceName == "" && def == "" && len(a.Cfg.Sources) > 1 {
		return a.listEverySource(ctx, tf)
	}
	with := a.withSource
	if op.Name == "get" {
		with = func(ctx context.Context, fn func(sources.Source) error) error {
			return a.WithTaskSource(ctx, tf.Task, fn)
		}
	}
	var an Answer
	err := with(ctx, func(src sources.Source) error {
		var err error
		an, err = a.RunOpOn(ctx, src, op, tf)
		return err
	})
	return an, err
}

// listEverySource is list over every configured source, in one pull order.
func (a *Env) listEverySource(ctx context.Context, tf *TaskFlags) (Answer, error) {
	_, all, closeSrcs, err := a.readAll(ctx)
	if err != nil {
		return Answer{}, err
	}
	defer closeSrcs()
	an, err := listed(all, tf.Status)
	if err != nil {
		return an, err
	}
	an.classify, err = a.standing()
	return an, err
}

// listed is list's answer over tasks already read: those in the state
// status names (all for ""), in pull order (sources.Listed).
func listed(tasks []*model.Task, status string) (Answer, error) {
	want, err := listState(status)
	if err != nil {
		return Answer{}, err
	}
	return Answer{Tasks: sources.Listed(tasks, want), list: true}, nil
}

// listState is the state list --status names; model.StateUnknown for "".
func listState(status string) (model.State, error) {
	if status == "" {
		return model.StateUnknown, nil
	}
	return ParseStatus(status)
}

// runOpOn applies one agent command to an open source: read-only mode,
// then the command itself, with each task's standing for a read.
func (a *Env) RunOpOn(ctx context.Context, src sources.Source, op agentOp, tf *TaskFlags) (Answer, error) {
	if tf.Agent != "" {
		// The name every trail line of this call is recorded under.
		if err := model.CheckCallerName("the agent name", tf.Agent); err != nil {
			return Answer{}, model.Wrap(model.CodeMisconfigured, op.Name, tf.Task, err)
		}
	}
	if !readCommands[op.Name] {
		if err := a.Writable(src, op.Name, tf.Task); err != nil {
			return Answer{}, err
		}
	}
	an, err := op.run(ctx, src, tf)
	if err != nil || !readCommands[op.Name] {
		return an, err
	}
	an.classify, err = a.standing()
	return an, err
}

// writable refuses op on a read-only source.
func (a *Env) Writable(src sources.Source, op, id string) error {
	if a.Cfg.ReadOnlyFor(src.Name()) {
		return model.Errorf(model.CodeMisconfigured, op, id, "source %q is read-only", src.Name())
	}
	return nil
}

// agentOp is the agent command of that name in agentOps.
func (a *Env) AgentOp(name string) agentOp {
	for _, op := range a.AgentOps() {
		if op.Name == name {
			return op
		}
	}
	panic("no agent command " + name)
}

// humanOp is one human or reviewer action as the doors serve it: the
// claimdeck command and the MCP tool of its model.ActionRow's word (mcp
// false offers no tool), with that row's help. What the action needs
// comes from model.Action.Needs and is enforced by the desk; the doors
// only spell the arguments.
type HumanOp struct {
	Action model.Action
	Mcp    bool
	// args are the taskFlags names the MCP tool takes; its lock_token is
	// the command's --expect-token and agent_name its --to, except where
	// Caller says agent_name names the caller.
	Args []string
	// Caller: the tool's agent_name is who asks (a reviewer's approve or
	// rework), required on stdio and never the configured actor, so the
	// desk can tell a review's approval from its author's.
	Caller bool
}

// humanOps are the human and reviewer actions, in model.ActionRows order.
var HumanOps = []HumanOp{
	{model.ActionTakeover, true, []string{"task", "reason", "lock-token"}, false},
	{model.ActionForceRelease, true, []string{"task", "reason", "lock-token"}, false},
	{model.ActionHandoff, true, []string{"task", "reason", "lock-token", "agent-name", "priority"}, false},
	// MCP's agent tool cancel is the holder's; this one is that tool with
	// force: true (the command line's cancel --force).
	{model.ActionCancel, true, []string{"task", "reason", "lock-token"}, false},
	{model.ActionApprove, true, []string{"task", "reason", "agent-name"}, true},
	{model.ActionRework, true, []string{"task", "reason", "agent-name"}, true},
	{model.ActionUnblock, true, []string{"task", "reason"}, false},
	{model.ActionComplete, false, nil, false},
	{model.ActionReview, false, nil, false},
	{model.ActionBlock, false, nil, false},
	{model.ActionRelease, false, nil, false},
}

// tool is the MCP tool's name: the action's word.
func (h HumanOp) Tool() string { return h.Action.Row().Word }

// short is the one line of help every door shows: the action's row.
func (h HumanOp) Short() string { return h.Action.Row().Help }

// required are the tool arguments a call must give: the task, and what
// the action needs (model.Action.Needs).
func (h HumanOp) Required() []string {
	out := []string{"task"}
	n := h.Action.Needs()
	if n.Reason {
		out = append(out, "reason")
	}
	if n.Target || h.Caller {
		out = append(out, "agent-name")
	}
	return out
}

// humanOpOf is the row of action in humanOps.
func HumanOpOf(action model.Action) HumanOp {
	for _, h := range HumanOps {
		if h.Action == action {
			return h
		}
	}
	panic("no human action " + string(action))
}

// Refused keeps a write a backend refused at an agent door (an update
// that would unblock, edit another's claim, …) in the source's shared
// trail through the desk (Desk.Refuse): who asked, through which door,
// and the refusal, as the desk keeps its own. The refusal is returned as
// it came, with a note when the trail could not record it; a backend that
// could not be reached (API_ERROR) has nothing to record it in.
func (a *Env) Refused(ctx context.Context, src sources.Source, action model.Action, id string, by model.Actor, err error) error {
	if err == nil || id == "" || model.CodeOf(err) == model.CodeAPIError {
		return err
	}
	seen := model.CurrentOf(err)
	if seen == nil {
		t, gerr := src.Get(ctx, id)
		if gerr != nil {
			return err
		}
		seen = t
	}
	desk, closeDesk, derr := a.Desk()
	if derr != nil {
		return err
	}
	defer closeDesk()
	return desk.Refuse(ctx, src, sources.Request{Action: action, Seen: seen, By: by}, err)
}
