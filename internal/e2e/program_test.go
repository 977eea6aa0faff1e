package e2e

import (
	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/internal/rootcmd"
)

// The helpers of cmdtest run the whole program, in-process.
func init() { cmdtest.Program = rootcmd.Run }
