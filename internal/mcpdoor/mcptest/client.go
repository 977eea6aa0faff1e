// Package mcptest connects a test's MCP client to the MCP door in memory.
package mcptest

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/internal/mcpdoor"
)

// Client is an MCP client session of the door over c's configuration,
// overrides on, in memory; it closes when the test ends.
func Client(t *testing.T, c *cmdtest.CLI) *mcp.ClientSession {
	t.Helper()
	cfg, err := cmdutil.LoadConfig(c.Conf)
	if err != nil {
		t.Fatal(err)
	}
	a := &cmdutil.Env{ConfigFile: c.Conf, Cfg: cfg, Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st, ct := mcp.NewInMemoryTransports()
	if _, err := mcpdoor.Server(a, true).Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}
