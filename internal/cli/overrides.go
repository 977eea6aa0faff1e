package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

func (a *app) operatorCommands() []*cobra.Command {
	takeover := a.OverrideCommand(model.ActionTakeover, &cmdutil.Override{})

	rel := &cmdutil.Override{}
	release := &cobra.Command{
		Use:   "release",
		Short: "Give your own claim back to the queue, or (--force) release anyone's (operator; audited)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !rel.Force {
				return a.ReleaseOwn(cmd.Context(), rel)
			}
			return a.PrintOverride(cmd.Context(), model.ActionForceRelease, rel)
		},
	}
	a.OverrideFlags(release, rel)
	release.Flags().BoolVar(&rel.Force, "force", false, "release even though an agent or human holds the task")

	// The target and the priority words are the desk's to check
	// (model.Action.Needs), as at every door.
	hand := &cmdutil.Override{}
	handoff := a.OverrideCommand(model.ActionHandoff, hand)
	handoff.Flags().StringVar(&hand.To, "to", "", "the agent to hand to, or ANY")
	handoff.Flags().StringVar(&hand.Priority, "priority", "normal", strings.Join(model.HandoffPriorities, ", ")+" (seed 001)")
	handoff.Flags().DurationVar(&hand.Reserve, "for", sources.DefaultReservation, "how long the task stays reserved")
	return []*cobra.Command{takeover, release, handoff}
}

// reviewCommands are the reviewer's: approve a task in Review (Done),
// send it back with a reason (the queue), or return a blocked task to the
// queue (unblock), one task or every one a filter
// matches, through the desk: conditional on the version read, audited.
func (a *app) reviewCommands() []*cobra.Command {
	approve := a.OverrideCommand(model.ActionApprove, &cmdutil.Override{})
	approve.Flags().Lookup("reason").Usage = "an approval note (recorded in the audit trail)"
	rework := a.OverrideCommand(model.ActionRework, &cmdutil.Override{})
	rework.Flags().Lookup("reason").Usage = "what to change (required; the worker reads it)"
	unblock := a.OverrideCommand(model.ActionUnblock, &cmdutil.Override{})
	return []*cobra.Command{approve, rework, unblock}
}
