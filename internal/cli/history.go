package cli

import (
	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// historyCommand prints one task's timeline, newest last.
func (a *app) historyCommand() *cobra.Command {
	tf := &cmdutil.TaskFlags{}
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Show a task's timeline: claims, heartbeats, hand-offs, human actions and comments, newest last",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cmdutil.Required("task", tf.Task); err != nil {
				return err
			}
			ctx := cmd.Context()
			return a.WithTaskSource(ctx, tf.Task, func(src sources.Source) error {
				t, err := cmdutil.Retrying(ctx, func() (*model.Task, error) { return src.Get(ctx, tf.Task) })
				if err != nil {
					return err
				}
				return a.Out().History(t)
			})
		},
	}
	tf.Bind(cmd, "task")
	return cmd
}
