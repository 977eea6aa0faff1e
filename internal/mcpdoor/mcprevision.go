package mcpdoor

import (
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// statelessRevision is the first MCP revision without sessions (SEP-2575):
// no initialize, no Mcp-Session-Id, server/discover, and each request's
// protocol version and client capabilities in its _meta, mirrored by the
// MCP-Protocol-Version header, which the transport requires.
const statelessRevision = "2026-07-28"

// byRevision serves each request of `mcp --http` by the revision its
// MCP-Protocol-Version header names: 2026-07-28 and later statelessly (the
// Go SDK accepts them only so), earlier ones and a header-less initialize
// with the sessions those clients expect. Revisions are dates and compare
// as strings, as the SDK compares them.
func byRevision(server func(*http.Request) *mcp.Server) http.Handler {
	sessions := mcp.NewStreamableHTTPHandler(server, nil)
	stateless := mcp.NewStreamableHTTPHandler(server, &mcp.StreamableHTTPOptions{Stateless: true})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("MCP-Protocol-Version") >= statelessRevision {
			stateless.ServeHTTP(w, r)
			return
		}
		sessions.ServeHTTP(w, r)
	})
}

// mcpCapabilities is what claimdeck declares: tools, whose list never
// changes while a server runs (so no listChanged), and logging, which the
// SDK declares by default.
func mcpCapabilities() *mcp.ServerCapabilities {
	return &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Logging: &mcp.LoggingCapabilities{}}
}

// undeclared answers the methods of the capabilities claimdeck does not
// declare (prompts, resources, completions) with -32601, as the
// specification asks; the SDK would answer prompts/list and resources/list
// with empty lists. Over HTTP at 2026-07-28 the SDK sends it with 404.
func undeclared(next mcp.MethodHandler) mcp.MethodHandler {
	refused := map[string]bool{
		"prompts/list": true, "prompts/get": true,
		"resources/list": true, "resources/templates/list": true, "resources/read": true,
		"resources/subscribe": true, "resources/unsubscribe": true,
		"completion/complete": true,
	}
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if refused[method] {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: claimdeck serves tools only, " + method + " is not declared"}
		}
		return next(ctx, method, req)
	}
}
