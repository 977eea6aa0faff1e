// Package mcpdoor is claimdeck's MCP door: the agent operations and the
// overrides as MCP tools, over stdio or streamable HTTP.
package mcpdoor

import (
	"context"
	"net"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
)

type app struct{ *cmdutil.Env }

// Command is `claimdeck mcp`.
func Command(env *cmdutil.Env) *cobra.Command { return (&app{env}).mcpCommand() }

// Server is the MCP server over env's sources; overrides adds the
// operator's tools.
func Server(env *cmdutil.Env, overrides bool) *mcp.Server { return (&app{env}).mcpServer(overrides) }

// Serve serves MCP over streamable HTTP on ln to the clients named.
func Serve(ctx context.Context, env *cmdutil.Env, ln net.Listener, clients []cmdutil.MCPClient) error {
	return (&app{env}).serveMCP(ctx, ln, clients)
}
