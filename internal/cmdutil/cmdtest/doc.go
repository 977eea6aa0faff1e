// Package cmdtest is what the command line's tests share: CLI runs a
// command tree in-process against one configuration file (NewCLI, Run),
// and the backends, tokens and MCP calls several test packages use.
// Program is the command line the helpers run: each test package sets it
// (in an init of a _test.go file) to the tree it tests — the whole
// program (rootcmd.Run) or one door's commands (cmdutil.Run).
package cmdtest

import (
	"context"
	"errors"
	"io"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
)

// Program runs one command line and returns its exit status.
var Program func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int

// Use makes Program the commands doors add under the shared root
// (cmdutil.Run). Where doors leave the root without a run (the program's
// is the dashboard), it is given one that refuses: a runnable root is what
// gives an unknown command cobra's "Did you mean" suggestions.
func Use(doors cmdutil.Doors) {
	Program = func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
		return cmdutil.Run(ctx, args, stdin, stdout, stderr, func(env *cmdutil.Env, root *cobra.Command, theme *string) []string {
			jsonOnly := doors(env, root, theme)
			if root.RunE == nil {
				root.RunE = func(*cobra.Command, []string) error {
					return errors.New("the dashboard is not in this test's command tree")
				}
			}
			return jsonOnly
		})
	}
}
