package cli

import (
	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

// The helpers of cmdtest run this door's commands alone, in-process.
func init() { cmdtest.Use(doors) }

func doors(env *cmdutil.Env, root *cobra.Command, _ *string) []string {
	root.AddCommand(Agent(env)...)
	root.AddCommand(Operator(env)...)
	root.AddCommand(Admin(env)...)
	node := &cobra.Command{Use: "node", Short: "Watch the mesh's health"}
	node.AddCommand(NodeWatch(env))
	root.AddCommand(Stats(env), Sweep(env), node)
	return []string{"migrate", "copy", "move", "config show", "config path", "version", "sweep"}
}
