package rootcmd_test

import (
	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/internal/rootcmd"
)

// The helpers of cmdtest run the whole program.
func init() { cmdtest.Program = rootcmd.Run }
