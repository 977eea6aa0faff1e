package serve

import (
	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/internal/cli"
	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

// The helpers of cmdtest run this door's servers beside the command
// line's commands the tests set their queues up with and read them back
// by (a test may use another door; the door's code never does).
func init() { cmdtest.Use(doors) }

func doors(env *cmdutil.Env, root *cobra.Command, _ *string) []string {
	node := &cobra.Command{Use: "node", Short: "Run this host as a mesh node"}
	node.AddCommand(NodeServe(env))
	root.AddCommand(Relay(env), Metrics(env), node, cli.Stats(env))
	root.AddCommand(cli.Agent(env)...)
	root.AddCommand(cli.Operator(env)...)
	root.AddCommand(cli.Admin(env)...)
	return []string{"migrate", "copy", "move", "config show", "config path", "version", "node serve", "relay"}
}
