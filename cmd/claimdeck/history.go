package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// historyJSON is a task's timeline as the contract's answers carry it.
func historyJSON(t *model.Task) []eventJSON {
	var out []eventJSON
	for _, e := range model.Timeline(t) {
		out = append(out, eventJSON{At: stamp(e.At), Actor: e.Actor, Action: e.Action, Reason: e.Reason, Detail: e.Detail})
	}
	return out
}

// historyCommand prints one task's timeline, newest last.
func (a *app) historyCommand() *cobra.Command {
	tf := &taskFlags{}
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Show a task's timeline: claims, heartbeats, hand-offs, human actions and comments, newest last",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := required("task", tf.task); err != nil {
				return err
			}
			ctx := cmd.Context()
			return a.withTaskSource(ctx, tf.task, func(src sources.Source) error {
				t, err := retrying(ctx, func() (*model.Task, error) { return src.Get(ctx, tf.task) })
				if err != nil {
					return err
				}
				return a.out().history(t)
			})
		},
	}
	tf.bind(cmd, "task")
	return cmd
}

func (p printer) history(t *model.Task) error {
	if !p.table {
		return p.json(map[string]any{"ok": true, "task_id": t.DisplayKey(), "page_id": t.ID, "source": t.Source, "history": historyJSON(t)})
	}
	fmt.Fprintf(p.w, "%s · %s · %s\n", t.DisplayKey(), t.Source, oneLine(t.Title))
	return p.timeline(t)
}

// timeline writes a task's timeline as a table.
func (p printer) timeline(t *model.Task) error {
	evs := model.Timeline(t)
	if len(evs) == 0 {
		_, err := fmt.Fprintln(p.w, "no history")
		return err
	}
	tw := tabwriter.NewWriter(p.w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WHEN\tACTOR\tACTION\tREASON\tDETAIL")
	for _, e := range evs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", stamp(e.At), oneLine(e.Actor), oneLine(e.Action), oneLine(e.Reason), oneLine(e.Detail))
	}
	return tw.Flush()
}
