package ntask

import (
	"context"

	"io"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/internal/cli"
	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

// The helpers of cmdtest run ntask (a command line whose first word is
// ntask), and otherwise the command line's agent and admin commands the
// tests set their queues up with and read them back by (a test may use
// another door; the door's code never does).
func init() {
	cmdtest.Use(doors)
	tree := cmdtest.Program
	cmdtest.Program = func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
		if len(args) > 0 && args[0] == Name {
			return Run(ctx, args[1:], stdin, stdout, stderr)
		}
		return tree(ctx, args, stdin, stdout, stderr)
	}
}

func doors(env *cmdutil.Env, root *cobra.Command, _ *string) []string {
	root.AddCommand(cli.Agent(env)...)
	root.AddCommand(cli.Operator(env)...)
	root.AddCommand(cli.Admin(env)...)
	return []string{"migrate", "copy", "move", "config show", "config path", "version"}
}
