// Package dashboard starts claimdeck's dashboard (the tui) over the
// configured sources, and the demo over simulated agents.
package dashboard

import (
	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
)

type app struct{ *cmdutil.Env }

// Run is the root command's run: the dashboard in the colours *themeName names.
func Run(env *cmdutil.Env, themeName *string) func(*cobra.Command, []string) error {
	return (&app{env}).dashboardRun(themeName)
}

// Demo is `claimdeck demo`.
func Demo(env *cmdutil.Env, themeName *string) *cobra.Command {
	return (&app{env}).demoCommand(themeName)
}
