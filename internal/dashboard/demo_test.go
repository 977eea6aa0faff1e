package dashboard_test

import (
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

func TestDemoRefusesBadFlagValues(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	for _, args := range [][]string{{"--agents", "0"}, {"--tasks", "-1"}, {"--speed", "0"}, {"--speed", "NaN"}, {"--speed", "1e9"}} {
		r := c.Run(3, append([]string{"demo"}, args...)...)
		if r.Error.Code != "MISCONFIGURED" || !strings.Contains(r.Error.Message, args[0]) {
			t.Errorf("demo %v: %+v, want MISCONFIGURED naming %s", args, r.Error, args[0])
		}
	}
}
