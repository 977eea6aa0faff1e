package cli

import (
	"context"
	"errors"
	"io"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

// The helpers of cmdtest run this door's commands alone, in-process.
func init() { cmdtest.Program = run }

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cmdutil.Run(ctx, args, stdin, stdout, stderr, func(env *cmdutil.Env, root *cobra.Command, _ *string) []string {
		// The root runs the dashboard in the program; a runnable root is also
		// what gives an unknown command cobra's "Did you mean" suggestions.
		root.RunE = func(*cobra.Command, []string) error {
			return errors.New("the dashboard is not in the cli door's tests")
		}
		root.AddCommand(Agent(env)...)
		root.AddCommand(Operator(env)...)
		root.AddCommand(Admin(env)...)
		node := &cobra.Command{Use: "node", Short: "Watch the mesh's health"}
		node.AddCommand(NodeWatch(env))
		root.AddCommand(Stats(env), Sweep(env), node)
		return []string{"migrate", "copy", "config show", "config path", "version", "sweep"}
	})
}
