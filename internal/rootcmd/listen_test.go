package rootcmd_test

import (
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

// `mcp --http :8765` would bind every interface without anyone choosing
// to: it is refused, naming the explicit address to give.
func TestMCPOverHTTPNeedsAnExplicitHost(t *testing.T) {
	t.Setenv("CLAIMDECK_MCP_TOKEN", cmdtest.BotToken)
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	for _, args := range [][]string{{"mcp", "--http", ":8765"}, {"node", "serve", "--name", "N", "--token-env", "CLAIMDECK_MCP_TOKEN", "--listen", ":18789"}, {"metrics", "--listen", ":9464"}} {
		if r := c.Run(3, args...); !strings.Contains(r.Error.Message, "127.0.0.1:") || !strings.Contains(r.Error.Message, "every interface") {
			t.Errorf("%v: %+v", args, r.Error)
		}
	}
}
