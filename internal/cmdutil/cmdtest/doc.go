// Package cmdtest is what the command line's tests share: CLI runs a
// command tree in-process against one configuration file (NewCLI, Run),
// and the backends, tokens and MCP calls several test packages use.
// Program is the command line the helpers run: each test package sets it
// (in an init of a _test.go file) to the tree it tests — the whole
// program (rootcmd.Run) or one door's commands (cmdutil.Run).
package cmdtest

import (
	"context"
	"io"
)

// Program runs one command line and returns its exit status.
var Program func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int
