package dashboard

import (
	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/internal/cli"
	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

// The helpers of cmdtest run the dashboard (the root) and the demo beside
// the command line's admin commands the tests set their queues up with (a
// test may use another door; the door's code never does).
func init() { cmdtest.Use(doors) }

func doors(env *cmdutil.Env, root *cobra.Command, theme *string) []string {
	root.RunE = Run(env, theme)
	demo := Demo(env, theme)
	demo.Flags().StringVar(theme, "theme", "auto", "dashboard colours: auto, light or dark")
	root.AddCommand(demo)
	root.AddCommand(cli.Admin(env)...)
	return []string{"migrate", "copy", "move", "config show", "config path", "version"}
}
