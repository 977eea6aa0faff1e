package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// reviewCommands are the reviewer's: approve a task in Review (Done),
// send it back with a reason (the queue), or return a blocked task to the
// queue (unblock), one task or every one a filter
// matches, through the desk: conditional on the version read, audited.
func (a *app) reviewCommands() []*cobra.Command {
	approve := a.overrideCommand(model.ActionApprove, &override{})
	approve.Flags().Lookup("reason").Usage = "an approval note (recorded in the audit trail)"
	rework := a.overrideCommand(model.ActionRework, &override{})
	rework.Flags().Lookup("reason").Usage = "what to change (required; the worker reads it)"
	unblock := a.overrideCommand(model.ActionUnblock, &override{})
	return []*cobra.Command{approve, rework, unblock}
}

// overrideCommand is the command of that action's name that applies it
// through the desk, its help the action's row in humanOps.
func (a *app) overrideCommand(action model.Action, o *override) *cobra.Command {
	cmd := &cobra.Command{
		Use:   string(action),
		Short: humanOpOf(action).short(),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.printOverride(cmd.Context(), action, o)
		},
	}
	a.overrideFlags(cmd, o)
	return cmd
}

// lockTokenGiven reports whether the holder named a lock token in any of
// the three ways checkToken reads.
func (tf *taskFlags) lockTokenGiven() bool {
	return tf.token != "" || tf.tokenFile != "" || os.Getenv(lockTokenEnv) != ""
}

// finishOwn is complete, block and review without a token for a claim the
// configured actor holds as a person: the desk finds the token. It answers
// handled=false when the task is not such a claim, and the holder's rules
// (a token is required) apply.
func (a *app) finishOwn(ctx context.Context, src sources.Source, action model.Action, tf *taskFlags) (t *model.Task, handled bool, err error) {
	if tf.lockTokenGiven() || tf.task == "" {
		return nil, false, nil
	}
	seen, err := src.Get(ctx, tf.task)
	if err != nil || !model.OwnClaim(seen, a.cfg.Actor) {
		return nil, false, nil
	}
	desk, closeDesk, err := a.desk()
	if err != nil {
		return nil, true, err
	}
	defer closeDesk()
	req := sources.Request{Action: action, Seen: seen, Reason: tf.reason, Unblock: tf.unblock, Artifacts: tf.artifacts, By: tf.actor(a.cfg.Actor)}
	// Refused before the person is asked, then asked as Needs says: at a
	// terminal unless --yes; a script without a terminal goes on unasked.
	if err := desk.Precheck(seen, req); err != nil {
		return nil, true, err
	}
	if err := a.confirmed(action, seen, &override{yes: tf.yes}, false); err != nil {
		return nil, true, err
	}
	t, err = desk.Apply(ctx, src, req)
	return t, true, err
}

// releaseOwn gives the configured actor's own claim back to the queue;
// anyone else's needs --force.
func (a *app) releaseOwn(ctx context.Context, o *override) error {
	if o.filter != "" {
		return model.Errorf(model.CodeMisconfigured, "release", "", "releasing the tasks a filter matches needs --force")
	}
	t, err := a.applyOverride(ctx, model.ActionRelease, o)
	if model.CodeOf(err) == model.CodeConflict && model.CurrentOf(err) != nil && !model.OwnClaim(model.CurrentOf(err), a.cfg.Actor) {
		return model.Errorf(model.CodeMisconfigured, "release", o.task, "%v; releasing someone else's claim needs --force", err)
	}
	if err != nil {
		return err
	}
	return a.out().task(t)
}
