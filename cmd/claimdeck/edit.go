package main

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// statusAliases are the seeds' status words for the states `update
// --status` may set: seed 002's READY/BLOCKED/REVIEW/DONE/CANCELED, seed
// 000's OPEN/COMPLETED/CANCELLED, seed 003's pending/completed/failed.
var statusAliases = map[string]model.State{
	"ready": model.StateQueued, "open": model.StateQueued, "pending": model.StateQueued,
	"completed": model.StateDone, "complete": model.StateDone, "cancelled": model.StateCanceled,
}

func parseStatus(s string) (model.State, error) {
	if st, ok := statusAliases[strings.ToLower(strings.TrimSpace(s))]; ok {
		return st, nil
	}
	st, err := model.ParseState(s)
	if err != nil {
		return model.StateUnknown, model.Errorf(model.CodeMisconfigured, "", "", "--status: %v", err)
	}
	return st, nil
}

func (a *app) commentCommand() *cobra.Command {
	tf := &taskFlags{}
	var text string
	cmd := &cobra.Command{
		Use:   "comment --task ID [--text] TEXT",
		Short: "Add a comment to a task's trail (a Notion comment, the SQL audit table, the lock file's history)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if text != "" {
					return model.Errorf(model.CodeMisconfigured, "comment", "", "give the text once: as --text or as the argument")
				}
				text = args[0]
			}
			if err := required("task", tf.task); err != nil {
				return err
			}
			if err := required("text", text); err != nil {
				return err
			}
			author := tf.agent
			if author == "" {
				author = a.cfg.Actor
			}
			return a.withWritable(cmd.Context(), "comment", tf.task, func(ctx context.Context, src sources.Source) error {
				if err := src.Comment(ctx, tf.task, sources.Note{Author: author, Text: text}); err != nil {
					return err
				}
				t, err := src.Get(ctx, tf.task)
				if err != nil {
					return err
				}
				return a.out().task(t)
			})
		},
	}
	tf.bind(cmd, "task", "agent-name")
	cmd.Flags().StringVar(&text, "text", "", "the comment")
	return cmd
}

func (a *app) updateCommand() *cobra.Command {
	tf := &taskFlags{}
	cmd := &cobra.Command{
		Use:   "update --task ID [--title T] [--priority P] [--class C] [--status S] [--lock-token TOKEN]",
		Short: "Edit a task's title, priority, class or status (a claimed task only by its holder)",
		Long: `update edits a task's descriptive fields. A task under a live claim can be
edited only by its holder, who names its --lock-token; its status then
changes only through complete, block, review or cancel. A free task's
--status may be set to queued (READY), blocked, review, done, failed or
canceled; claiming goes through claim.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := required("task", tf.task); err != nil {
				return err
			}
			e := sources.Edit{Actor: a.cfg.Actor, Token: tf.token, Reason: tf.reason}
			if tf.agent != "" {
				e.Actor = tf.agent
			}
			if tf.token != "" {
				if err := tf.checkToken(); err != nil {
					return err
				}
			}
			f := cmd.Flags()
			if f.Changed("title") {
				e.Title = &tf.title
			}
			if f.Changed("priority") {
				p, err := model.ParsePriority(tf.priority)
				if err != nil {
					return model.Errorf(model.CodeMisconfigured, "", "", "--priority: %v", err)
				}
				e.Priority = &p
			}
			if f.Changed("class") {
				c, err := model.ParseClass(tf.class)
				if err != nil {
					return model.Errorf(model.CodeMisconfigured, "", "", "--class: %v", err)
				}
				e.Class = &c
			}
			if f.Changed("status") {
				st, err := parseStatus(tf.status)
				if err != nil {
					return err
				}
				e.State = st
			}
			if e.Empty() {
				return model.Errorf(model.CodeMisconfigured, "update", tf.task, "nothing to update: give --title, --priority, --class or --status")
			}
			return a.withWritable(cmd.Context(), "update", tf.task, func(ctx context.Context, src sources.Source) error {
				t, err := src.Update(ctx, tf.task, e)
				if err != nil {
					return err
				}
				return a.out().task(t)
			})
		},
	}
	tf.bind(cmd, "task", "lock-token", "agent-name", "title", "priority", "class", "reason")
	cmd.Flags().StringVar(&tf.status, "status", "", "new status: queued (READY), blocked, review, done, failed, canceled")
	return cmd
}

// withWritable opens the source for a write that is not part of the lease
// protocol, refusing it on a read-only source.
func (a *app) withWritable(ctx context.Context, op, id string, fn func(ctx context.Context, src sources.Source) error) error {
	return a.withSource(ctx, func(src sources.Source) error {
		if a.cfg.readOnly(src.Name()) {
			return model.Errorf(model.CodeMisconfigured, op, id, "source %q is read-only", src.Name())
		}
		return fn(ctx, src)
	})
}
