// Command claimdeck is the control room for multi-agent task queues: the
// dashboard, the ntask-compatible agent commands and the operator
// overrides, over every configured source. The program is assembled in
// internal/rootcmd from the door packages; see CONTRIBUTING.md's Layout.
package main

import "github.com/claimdeck/claimdeck/internal/rootcmd"

func main() { rootcmd.Main() }
