package main

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
	name, short string
	// tool is the MCP tool's one line where short names a command-line
	// flag, which an MCP client has not.
	tool string
	// args are the taskFlags names it takes; required ones must be given.
	args, required []string
	run            func(ctx context.Context, src sources.Source, tf *taskFlags) (answer, error)
}

// answer is what an agent command prints: one task (possibly none) or a
// list.
type answer struct {
	task  *model.Task
	tasks []*model.Task
	list  bool
	// classify adds each task's standing to what a read command prints.
	classify func(*model.Task) model.Classification
	// holder marks an answer to the token's holder: it carries the full
	// lock token; every other answer shows model.ShownToken.
	holder bool
	// warning says what went wrong after the write landed (its trail note).
	warning string
}

// payload is the answer in the ntask contract's JSON shape.
func (an answer) payload() map[string]any {
	p := printer{classify: an.classify, holder: an.holder}
	if an.list {
		out := make([]*taskJSON, len(an.tasks))
		for i, t := range an.tasks {
			out[i] = p.toJSON(t)
		}
		return map[string]any{"ok": true, "tasks": out}
	}
	out := map[string]any{"ok": true, "task": p.toJSON(an.task)}
	if an.warning != "" {
		out["warning"] = an.warning
	}
	return out
}

// noted is the answer to a write that landed, after its trail note: a
// note that failed is a warning on the answer, never the write's error —
// the caller must not take a landed write for a failed one and retry it.
func noted(an answer, noteErr error) (answer, error) {
	if noteErr != nil {
		an.warning = "the write landed, but its note in the task's trail could not be written: " + model.Redact(noteErr.Error())
	}
	return an, nil
}

func one(t *model.Task, err error) (answer, error) { return answer{task: t}, err }

// holder is the answer to the holder of the task's token: a claim hands the
// token over, a holder write echoes the token its caller gave.
func holder(t *model.Task, err error) (answer, error) { return answer{task: t, holder: true}, err }

// ownActions are the holder commands a person may run on their own claim
// without its token.
var ownActions = map[string]model.Action{"complete": model.ActionComplete, "block": model.ActionBlock, "review": model.ActionReview}

// agentOps are the agent commands, in the contract's order.
func (a *app) agentOps() []agentOp {
	finish := func(name, short string, state model.State, args ...string) agentOp {
		req := []string{"task"}
		if state == model.StateBlocked || state == model.StateCanceled {
			req = append(req, "reason")
		}
		return agentOp{name: name, short: short, required: req,
			args: append([]string{"task", "lock-token", "run-id", "agent-name"}, args...),
			run: func(ctx context.Context, src sources.Source, tf *taskFlags) (answer, error) {
				if own := ownActions[name]; own != "" && tf.actor(a.cfg.Actor).Person() {
					if t, handled, err := a.finishOwn(ctx, src, own, tf); handled {
						return one(t, err)
					}
				}
				if err := tf.checkToken(); err != nil {
					return answer{}, err
				}
				o := sources.Outcome{State: state, Reason: tf.reason, UnblockAction: tf.unblock, Artifacts: tf.artifacts, Writer: tf.writer()}
				if tf.nextCheck != "" {
					at, err := time.Parse(time.RFC3339, tf.nextCheck)
					if err != nil {
						return answer{}, model.Errorf(model.CodeMisconfigured, "", "", "--next-check-at %q is not an RFC 3339 time (e.g. 2026-02-01T09:00:00Z)", tf.nextCheck)
					}
					o.NextCheckAt = at
				}
				t, err := src.Finish(ctx, tf.task, tf.token, o)
				if err != nil {
					return answer{}, err
				}
				return noted(answer{task: t, holder: true}, tf.recordRun(ctx, src, name, t))
			}}
	}
	cancel := finish("cancel", "Cancel a task: the holder with --lock-token, an operator with --force --reason", model.StateCanceled, "reason")
	cancel.tool = "Cancel a task you hold (lock_token), with a reason"
	return []agentOp{
		{name: "next", short: "Show the first task eligible for this agent (claims nothing)", args: []string{"agent-name"},
			run: func(ctx context.Context, src sources.Source, tf *taskFlags) (answer, error) {
				return one(retrying(ctx, func() (*model.Task, error) { return src.Next(ctx, tf.agent) }))
			}},
		{name: "claim", short: "Claim a task (or, without --task, the next eligible one)", tool: "Claim a task (or, without task, the next eligible one)", args: []string{"task", "agent-name", "run-id", "lease"}, required: []string{"agent-name"},
			run: func(ctx context.Context, src sources.Source, tf *taskFlags) (answer, error) {
				req := sources.ClaimRequest{Agent: tf.agent, RunID: tf.runID, Lease: tf.lease}
				if tf.task == "" {
					t, err := src.ClaimNext(ctx, req)
					return holder(tf.recordClient(ctx, src, "claim", t, err))
				}
				t, err := src.Claim(ctx, tf.task, req)
				return holder(tf.recordClient(ctx, src, "claim", t, err))
			}},
		{name: "heartbeat", short: "Extend the lease of a claimed task", args: []string{"task", "lock-token", "run-id", "agent-name", "lease"}, required: []string{"task"},
			run: func(ctx context.Context, src sources.Source, tf *taskFlags) (answer, error) {
				if err := tf.checkToken(); err != nil {
					return answer{}, err
				}
				t, err := retrying(ctx, func() (*model.Task, error) { return src.Heartbeat(ctx, tf.task, tf.token, tf.lease) })
				if err != nil {
					return answer{}, err
				}
				return noted(answer{task: t, holder: true}, tf.recordRun(ctx, src, "heartbeat", t))
			}},
		finish("complete", "Mark a claimed task done", model.StateDone, "artifacts"),
		finish("block", "Park a claimed task as blocked", model.StateBlocked, "reason", "unblock-action", "next-check-at"),
		finish("review", "Hand a claimed task to review", model.StateReview, "artifacts"),
		finish("fail", "Mark a claimed task failed", model.StateFailed, "reason"),
		cancel,
		{name: "comment", short: "Add a comment to a task's trail (a Notion comment, the SQL audit table, the lock file's history)",
			args: []string{"task", "agent-name", "body"}, required: []string{"task", "body"},
			run: func(ctx context.Context, src sources.Source, tf *taskFlags) (answer, error) {
				if err := src.Comment(ctx, tf.task, sources.Note{Author: tf.author(a.cfg.Actor), Text: tf.body}); err != nil {
					return answer{}, err
				}
				return one(src.Get(ctx, tf.task))
			}},
		{name: "get", short: "Read one task, fresh", args: []string{"task"}, required: []string{"task"},
			run: func(ctx context.Context, src sources.Source, tf *taskFlags) (answer, error) {
				return one(retrying(ctx, func() (*model.Task, error) { return src.Get(ctx, tf.task) }))
			}},
		{name: "list", short: "List tasks in pull order (of every source when several are configured and no --source is given)", tool: "List tasks in pull order", args: []string{"status"},
			run: func(ctx context.Context, src sources.Source, tf *taskFlags) (answer, error) {
				d, err := retrying(ctx, func() (sources.Delta, error) { return src.Poll(ctx, "") })
				if err != nil {
					return answer{}, err
				}
				return listed(d.Tasks, tf.status)
			}},
		{name: "create", short: "Add a task to the queue", args: []string{"title", "priority", "class", "description", "parent"}, required: []string{"title"},
			run: func(ctx context.Context, src sources.Source, tf *taskFlags) (answer, error) {
				prio, err := model.ParsePriority(tf.priority)
				if err != nil {
					return answer{}, model.Errorf(model.CodeMisconfigured, "", "", "--priority: %v", err)
				}
				class, err := model.ParseClass(tf.class)
				if err != nil {
					return answer{}, model.Errorf(model.CodeMisconfigured, "", "", "--class: %v", err)
				}
				t, err := src.Create(ctx, sources.NewTask{Title: tf.title, Description: tf.desc, Priority: prio, Class: class, Parent: tf.parent, Parked: tf.parked})
				return one(tf.recordClient(ctx, src, "create", t, err))
			}},
		{name: "update", short: "Edit a task's title, priority, class, or status between READY and BLOCKED (a claimed task only by its holder)",
			args: []string{"task", "lock-token", "run-id", "agent-name", "title", "priority", "class", "status", "reason"}, required: []string{"task"},
			run: func(ctx context.Context, src sources.Source, tf *taskFlags) (answer, error) {
				e, err := tf.edit(a.cfg.Actor)
				if err != nil {
					return answer{}, err
				}
				t, err := src.Update(ctx, tf.task, e)
				if err != nil {
					return answer{}, err
				}
				return noted(answer{task: t, holder: e.Token != ""}, tf.recordRun(ctx, src, "update", t))
			}},
	}
}

// edit is the update the flags ask for; only the fields given change.
func (tf *taskFlags) edit(actor string) (sources.Edit, error) {
	e := sources.Edit{Actor: tf.author(actor), Reason: tf.reason}
	if tf.token != "" || tf.tokenFile != "" {
		if err := tf.checkToken(); err != nil {
			return e, err
		}
		// A holder write: the trail names the caller, not the configured actor.
		e.Token, e.Actor = tf.token, tf.writer()
	}
	if tf.given["title"] {
		e.Title = &tf.title
	}
	if tf.given["priority"] {
		p, err := model.ParsePriority(tf.priority)
		if err != nil {
			return e, model.Errorf(model.CodeMisconfigured, "", "", "--priority: %v", err)
		}
		e.Priority = &p
	}
	if tf.given["class"] {
		c, err := model.ParseClass(tf.class)
		if err != nil {
			return e, model.Errorf(model.CodeMisconfigured, "", "", "--class: %v", err)
		}
		e.Class = &c
	}
	if tf.given["status"] {
		st, err := parseStatus(tf.status)
		if err != nil {
			return e, err
		}
		e.State = st
	}
	if e.Empty() {
		return e, model.Errorf(model.CodeMisconfigured, "update", tf.task, "nothing to update: give --title, --priority, --class or --status")
	}
	return e, nil
}

// runOp applies one agent command to the chosen source: required
// arguments, read-only mode, then the command itself.
func (a *app) runOp(ctx context.Context, op agentOp, tf *taskFlags) (answer, error) {
	for _, r := range op.required {
		if err := requiredAt(tf.door, r, tf.value(r)); err != nil {
			return answer{}, err
		}
	}
	if op.name == "list" && a.sourceName == "" && len(a.cfg.Sources) > 1 {
		return a.listEverySource(ctx, tf)
	}
	with := a.withSource
	if op.name == "get" {
		with = func(ctx context.Context, fn func(sources.Source) error) error {
			return a.withTaskSource(ctx, tf.task, fn)
		}
	}
	var an answer
	err := with(ctx, func(src sources.Source) error {
		var err error
		an, err = a.runOpOn(ctx, src, op, tf)
		return err
	})
	return an, err
}

// listEverySource is list over every configured source, in one pull order.
func (a *app) listEverySource(ctx context.Context, tf *taskFlags) (answer, error) {
	_, all, closeSrcs, err := a.readAll(ctx)
	if err != nil {
		return answer{}, err
	}
	defer closeSrcs()
	an, err := listed(all, tf.status)
	if err != nil {
		return an, err
	}
	an.classify, err = a.standing()
	return an, err
}

// listed is list's answer: tasks in the state status names (all for ""),
// in pull order.
func listed(tasks []*model.Task, status string) (answer, error) {
	var want model.State
	if status != "" {
		s, err := parseStatus(status)
		if err != nil {
			return answer{}, err
		}
		want = s
	}
	out := []*model.Task{}
	for _, t := range tasks {
		if want == model.StateUnknown || t.State == want {
			out = append(out, t)
		}
	}
	model.SortPullOrder(out)
	return answer{tasks: out, list: true}, nil
}

// runOpOn applies one agent command to an open source: read-only mode,
// then the command itself, with each task's standing for a read.
func (a *app) runOpOn(ctx context.Context, src sources.Source, op agentOp, tf *taskFlags) (answer, error) {
	if tf.agent != "" {
		// The name every trail line of this call is recorded under.
		if err := model.CheckCallerName("the agent name", tf.agent); err != nil {
			return answer{}, model.Wrap(model.CodeMisconfigured, op.name, tf.task, err)
		}
	}
	if !readCommands[op.name] {
		if err := a.writable(src, op.name, tf.task); err != nil {
			return answer{}, err
		}
	}
	an, err := op.run(ctx, src, tf)
	if err != nil || !readCommands[op.name] {
		return an, err
	}
	an.classify, err = a.standing()
	return an, err
}

// writable refuses op on a read-only source.
func (a *app) writable(src sources.Source, op, id string) error {
	if a.cfg.readOnly(src.Name()) {
		return model.Errorf(model.CodeMisconfigured, op, id, "source %q is read-only", src.Name())
	}
	return nil
}

// agentOp is the agent command of that name in agentOps.
func (a *app) agentOp(name string) agentOp {
	for _, op := range a.agentOps() {
		if op.name == name {
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
type humanOp struct {
	action model.Action
	mcp    bool
	// args are the taskFlags names the MCP tool takes; its lock_token is
	// the command's --expect-token and agent_name its --to.
	args []string
}

// humanOps are the human and reviewer actions, in model.ActionRows order.
var humanOps = []humanOp{
	{model.ActionTakeover, true, []string{"task", "reason", "lock-token"}},
	{model.ActionForceRelease, true, []string{"task", "reason", "lock-token"}},
	{model.ActionHandoff, true, []string{"task", "reason", "lock-token", "agent-name", "priority"}},
	// MCP's agent tool cancel is the holder's; this one is that tool with
	// force: true (the command line's cancel --force).
	{model.ActionCancel, true, []string{"task", "reason", "lock-token"}},
	{model.ActionApprove, true, []string{"task", "reason"}},
	{model.ActionRework, true, []string{"task", "reason"}},
	{model.ActionUnblock, true, []string{"task", "reason"}},
	{model.ActionComplete, false, nil},
	{model.ActionReview, false, nil},
	{model.ActionBlock, false, nil},
	{model.ActionRelease, false, nil},
}

// tool is the MCP tool's name: the action's word.
func (h humanOp) tool() string { return h.action.Row().Word }

// short is the one line of help every door shows: the action's row.
func (h humanOp) short() string { return h.action.Row().Help }

// required are the tool arguments a call must give: the task, and what
// the action needs (model.Action.Needs).
func (h humanOp) required() []string {
	out := []string{"task"}
	n := h.action.Needs()
	if n.Reason {
		out = append(out, "reason")
	}
	if n.Target {
		out = append(out, "agent-name")
	}
	return out
}

// humanOpOf is the row of action in humanOps.
func humanOpOf(action model.Action) humanOp {
	for _, h := range humanOps {
		if h.action == action {
			return h
		}
	}
	panic("no human action " + string(action))
}
