package mcpdoor

import (
	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/internal/cli"
	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

// The helpers of cmdtest run this door's command, mcp, beside the
// command line's agent and admin commands the tests set their queues up
// with (a test may use another door; the door's code never does).
func init() { cmdtest.Use(doors) }

func doors(env *cmdutil.Env, root *cobra.Command, _ *string) []string {
	root.AddCommand(Command(env))
	root.AddCommand(cli.Agent(env)...)
	root.AddCommand(cli.Operator(env)...)
	root.AddCommand(cli.Admin(env)...)
	return []string{"migrate", "copy", "move", "config show", "config path", "version"}
}
