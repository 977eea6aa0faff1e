package cmdutil

import (
	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/model"
)

func ParseStatus(s string) (model.State, error) {
	st, err := model.ParseStatus(s)
	if err != nil {
		return model.StateUnknown, model.Errorf(model.CodeMisconfigured, "", "", "--status: %v", err)
	}
	return st, nil
}

// commentExtras lets a person give the text as the argument or --text.
func (a *Env) commentExtras(cmd *cobra.Command, op agentOp, tf *TaskFlags) {
	cmd.Use = "comment --task ID [--body] TEXT"
	cmd.Args = cobra.MaximumNArgs(1)
	cmd.Flags().StringVar(&tf.Body, "text", "", "alias of --body")
	run := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 1 {
			if tf.Body != "" {
				return model.Errorf(model.CodeMisconfigured, "comment", "", "give the text once: as --body (--text) or as the argument")
			}
			tf.Body = args[0]
		}
		return run(cmd, nil)
	}
}

func updateExtras(cmd *cobra.Command) {
	cmd.Use = "update --task ID [--title T] [--priority P] [--class C] [--status S] [--lock-token TOKEN]"
	cmd.Long = `update edits a task's descriptive fields. A task under a live claim can be
edited only by its holder, who names its --lock-token; its status then
changes only through complete, block, review or cancel. A free task's
--status may be set to READY, BLOCKED, REVIEW, DONE, FAILED or CANCELED;
claiming goes through claim.`
}
