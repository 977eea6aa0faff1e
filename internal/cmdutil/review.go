package cmdutil

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// overrideCommand is the command of that action's name that applies it
// through the desk, its help the action's row in humanOps.
func (a *Env) OverrideCommand(action model.Action, o *Override) *cobra.Command {
	cmd := &cobra.Command{
		Use:   string(action),
		Short: HumanOpOf(action).Short(),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.PrintOverride(cmd.Context(), action, o)
		},
	}
	a.OverrideFlags(cmd, o)
	return cmd
}

// lockTokenGiven reports whether the holder named a lock token in any of
// the three ways checkToken reads.
func (tf *TaskFlags) lockTokenGiven() bool {
	return tf.Token != "" || tf.tokenFile != "" || os.Getenv(LockTokenEnv) != ""
}

// finishOwn is complete, block and review without a token for a claim the
// configured actor holds as a person: the desk finds the token. It answers
// handled=false when the task is not such a claim, and the holder's rules
// (a token is required) apply.
func (a *Env) finishOwn(ctx context.Context, src sources.Source, action model.Action, tf *TaskFlags) (t *model.Task, handled bool, err error) {
	if tf.lockTokenGiven() || tf.Task == "" {
		return nil, false, nil
	}
	seen, err := src.Get(ctx, tf.Task)
	if err != nil || !model.OwnClaim(seen, a.Cfg.Actor) {
		return nil, false, nil
	}
	desk, closeDesk, err := a.Desk()
	if err != nil {
		return nil, true, err
	}
	defer closeDesk()
	req := sources.Request{Action: action, Seen: seen, Reason: tf.Reason, Unblock: tf.Unblock, Artifacts: tf.Artifacts, By: tf.actor(a.Cfg.Actor)}
	// Refused before the person is asked, then asked as Needs says: at a
	// terminal unless --yes; a script without a terminal goes on unasked.
	if err := desk.Precheck(seen, req); err != nil {
		return nil, true, err
	}
	if err := a.confirmed(action, seen, &Override{Yes: tf.yes}, false); err != nil {
		return nil, true, err
	}
	t, err = desk.Apply(ctx, src, req)
	return t, true, err
}

// releaseOwn gives the configured actor's own claim back to the queue;
// anyone else's needs --force.
func (a *Env) ReleaseOwn(ctx context.Context, o *Override) error {
	if o.filter != "" {
		return model.Errorf(model.CodeMisconfigured, "release", "", "releasing the tasks a filter matches needs --force")
	}
	t, err := a.ApplyOverride(ctx, model.ActionRelease, o)
	if model.CodeOf(err) == model.CodeConflict && model.CurrentOf(err) != nil && !model.OwnClaim(model.CurrentOf(err), a.Cfg.Actor) {
		return model.Errorf(model.CodeMisconfigured, "release", o.Task, "%v; releasing someone else's claim needs --force", err)
	}
	if err != nil {
		return err
	}
	return a.Out().task(t)
}
