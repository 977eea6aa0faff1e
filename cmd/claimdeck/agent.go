package main

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// taskFlags are the ntask contract's flags (seed 002).
type taskFlags struct {
	task, runID, agent, token  string
	reason, unblock, nextCheck string
	artifacts, status, title   string
	priority, class, desc      string
	parent                     string
	lease                      time.Duration
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
			f.StringVar(&tf.token, "lock-token", "", "the lock token claim returned")
		case "reason":
			f.StringVar(&tf.reason, "reason", "", "why")
		case "unblock-action":
			f.StringVar(&tf.unblock, "unblock-action", "", "what would unblock the task")
		case "next-check-at":
			f.StringVar(&tf.nextCheck, "next-check-at", "", "when to look again (RFC 3339)")
		case "artifacts":
			f.StringVar(&tf.artifacts, "artifacts", "", "links or notes produced")
		case "status":
			f.StringVar(&tf.status, "status", "", "filter by state (queued, claimed, blocked, review, done, failed, canceled)")
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
		case "lease":
			f.DurationVar(&tf.lease, "lease", 0, "lease to take or extend (default: the configured lease)")
		}
	}
}

func required(flag, value string) error {
	if strings.TrimSpace(value) == "" {
		return model.Errorf(model.CodeMisconfigured, "", "", "--%s is required", flag)
	}
	return nil
}

func (tf *taskFlags) checkToken() error {
	if err := required("task", tf.task); err != nil {
		return err
	}
	if err := required("lock-token", tf.token); err != nil {
		return err
	}
	if _, err := uuid.Parse(tf.token); err != nil {
		return model.Errorf(model.CodeMisconfigured, "", "", "--lock-token %q is not a UUID", tf.token)
	}
	return nil
}

// withSource opens the chosen source for the length of one command.
func (a *app) withSource(ctx context.Context, fn func(src sources.Source) error) error {
	sc, err := pickSource(a.cfg, a.sourceName)
	if err != nil {
		return err
	}
	src, err := openSource(ctx, a.cfg, sc)
	if err != nil {
		return err
	}
	defer src.Close()
	return fn(src)
}

// retrying runs an idempotent call again on API_ERROR with exponential
// backoff; CONFLICT, LOST_LOCK and MISCONFIGURED are answers, not faults.
func retrying[T any](ctx context.Context, call func() (T, error)) (T, error) {
	wait := 200 * time.Millisecond
	for attempt := 1; ; attempt++ {
		v, err := call()
		if err == nil || model.CodeOf(err) != model.CodeAPIError || attempt == 4 {
			return v, err
		}
		select {
		case <-ctx.Done():
			return v, err
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// readCommands change nothing; every other task command is refused on a
// read-only source.
var readCommands = map[string]bool{"get": true, "next": true}

func (a *app) taskCommand(use, short string, flags []string, fn func(ctx context.Context, src sources.Source, tf *taskFlags) (*model.Task, error)) *cobra.Command {
	tf := &taskFlags{}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withSource(cmd.Context(), func(src sources.Source) error {
				if !readCommands[use] && a.cfg.readOnly(src.Name()) {
					return model.Errorf(model.CodeMisconfigured, use, tf.task, "source %q is read-only", src.Name())
				}
				out := a.out()
				if readCommands[use] {
					c, err := a.standing()
					if err != nil {
						return err
					}
					out.classify = c
				}
				t, err := fn(cmd.Context(), src, tf)
				if err != nil {
					return err
				}
				return out.task(t)
			})
		},
	}
	tf.bind(cmd, flags...)
	return cmd
}

func (a *app) finishCommand(use, short string, state model.State, flags ...string) *cobra.Command {
	return a.taskCommand(use, short, append([]string{"task", "lock-token"}, flags...),
		func(ctx context.Context, src sources.Source, tf *taskFlags) (*model.Task, error) {
			if err := tf.checkToken(); err != nil {
				return nil, err
			}
			o := sources.Outcome{State: state, Reason: tf.reason, UnblockAction: tf.unblock, Artifacts: tf.artifacts}
			if tf.nextCheck != "" {
				at, err := time.Parse(time.RFC3339, tf.nextCheck)
				if err != nil {
					return nil, model.Errorf(model.CodeMisconfigured, "", "", "--next-check-at %q is not an RFC 3339 time (e.g. 2026-02-01T09:00:00Z)", tf.nextCheck)
				}
				o.NextCheckAt = at
			}
			if state == model.StateBlocked {
				if err := required("reason", tf.reason); err != nil {
					return nil, err
				}
			}
			return src.Finish(ctx, tf.task, tf.token, o)
		})
}

func (a *app) agentCommands() []*cobra.Command {
	list := &cobra.Command{
		Use:   "list",
		Short: "List tasks in pull order",
		Args:  cobra.NoArgs,
	}
	lf := &taskFlags{}
	lf.bind(list, "status")
	list.RunE = func(cmd *cobra.Command, _ []string) error {
		var want model.State
		if lf.status != "" {
			s, err := model.ParseState(lf.status)
			if err != nil {
				return model.Errorf(model.CodeMisconfigured, "", "", "--status: %v", err)
			}
			want = s
		}
		return a.withSource(cmd.Context(), func(src sources.Source) error {
			d, err := retrying(cmd.Context(), func() (sources.Delta, error) { return src.Poll(cmd.Context(), "") })
			if err != nil {
				return err
			}
			var out []*model.Task
			for _, t := range d.Tasks {
				if want == model.StateUnknown || t.State == want {
					out = append(out, t)
				}
			}
			model.SortPullOrder(out)
			p := a.out()
			if p.classify, err = a.standing(); err != nil {
				return err
			}
			return p.tasks(out)
		})
	}

	return []*cobra.Command{
		list,
		a.taskCommand("get", "Read one task, fresh", []string{"task"},
			func(ctx context.Context, src sources.Source, tf *taskFlags) (*model.Task, error) {
				if err := required("task", tf.task); err != nil {
					return nil, err
				}
				return retrying(ctx, func() (*model.Task, error) { return src.Get(ctx, tf.task) })
			}),
		a.taskCommand("next", "Show the first task eligible for this agent (claims nothing)", []string{"agent-name"},
			func(ctx context.Context, src sources.Source, tf *taskFlags) (*model.Task, error) {
				return retrying(ctx, func() (*model.Task, error) { return src.Next(ctx, tf.agent) })
			}),
		a.taskCommand("claim", "Claim a task (or, without --task, the next eligible one)", []string{"task", "agent-name", "run-id", "lease"},
			func(ctx context.Context, src sources.Source, tf *taskFlags) (*model.Task, error) {
				if err := required("agent-name", tf.agent); err != nil {
					return nil, err
				}
				req := sources.ClaimRequest{Agent: tf.agent, RunID: tf.runID, Lease: tf.lease}
				if tf.task == "" {
					return src.ClaimNext(ctx, req)
				}
				return src.Claim(ctx, tf.task, req)
			}),
		a.taskCommand("heartbeat", "Extend the lease of a claimed task", []string{"task", "lock-token", "lease"},
			func(ctx context.Context, src sources.Source, tf *taskFlags) (*model.Task, error) {
				if err := tf.checkToken(); err != nil {
					return nil, err
				}
				return retrying(ctx, func() (*model.Task, error) { return src.Heartbeat(ctx, tf.task, tf.token, tf.lease) })
			}),
		a.finishCommand("complete", "Mark a claimed task done", model.StateDone, "artifacts"),
		a.finishCommand("block", "Park a claimed task as blocked", model.StateBlocked, "reason", "unblock-action", "next-check-at"),
		a.finishCommand("review", "Hand a claimed task to review", model.StateReview, "artifacts"),
		a.finishCommand("fail", "Mark a claimed task failed", model.StateFailed, "reason"),
		a.cancelCommand(),
		a.taskCommand("create", "Add a task to the queue", []string{"title", "priority", "class", "description", "parent"},
			func(ctx context.Context, src sources.Source, tf *taskFlags) (*model.Task, error) {
				if err := required("title", tf.title); err != nil {
					return nil, err
				}
				prio, err := model.ParsePriority(tf.priority)
				if err != nil {
					return nil, model.Errorf(model.CodeMisconfigured, "", "", "--priority: %v", err)
				}
				class, err := model.ParseClass(tf.class)
				if err != nil {
					return nil, model.Errorf(model.CodeMisconfigured, "", "", "--class: %v", err)
				}
				return src.Create(ctx, sources.NewTask{Title: tf.title, Description: tf.desc, Priority: prio, Class: class, Parent: tf.parent})
			}),
	}
}
