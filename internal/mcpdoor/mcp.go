package mcpdoor

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/webserver"
)

func (a *app) mcpCommand() *cobra.Command {
	var addr, tokenEnv string
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the agent commands as MCP tools on stdio (or streamable HTTP with --http)",
		Long: `mcp serves next, claim, heartbeat, complete, block, review, fail, cancel,
comment, get, list, create and update as MCP tools over stdio, with the
arguments the CLI's flags take in snake_case (task, agent_name, run_id,
lock_token, …) and the CLI's JSON as each result. A contract error is a
tool result with isError and its code. mcp.overrides: true in the
configuration adds takeover, release and handoff, except in read-only mode.
--http ADDR serves streamable HTTP instead, for agents on other hosts.
Each remote client is named in mcp.clients with its own bearer token
(token_env), and may be limited to the agent tools (agent_only: true);
two clients with one token refuse to start. Every action, applied or
refused, is recorded in the source's shared trail under the client's name
as NAME@mcp-http, door mcp-http. A reason is required where the action
needs one at every door (cancel with force, rework) and kept when given
(takeover, release, handoff, approve, unblock); no door requires more.
approve and rework name their caller: the client over HTTP, agent_name on
stdio (required there). With no clients configured, one client named
"default" uses $CLAIMDECK_MCP_TOKEN. Tokens must be random (about 128
bits: openssl rand -hex 32). What the trail proves on each backend:
docs/trail.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if addr == "" {
				return a.mcpServer(true).Run(cmd.Context(), &mcp.StdioTransport{})
			}
			clients, err := a.Cfg.MCP.HTTPClients(tokenEnv)
			if err != nil {
				return err
			}
			ln, err := a.Listen("mcp", addr)
			if err != nil {
				return err
			}
			return a.serveMCP(cmd.Context(), ln, clients)
		},
	}
	cmd.Flags().StringVar(&addr, "http", "", "serve streamable HTTP on ADDR (host:port, host required: 127.0.0.1:8765) instead of stdio")
	cmd.Flags().StringVar(&tokenEnv, "token-env", "CLAIMDECK_MCP_TOKEN", "with no mcp.clients configured: the environment variable holding the bearer token of the client named default")
	return cmd
}

// serveMCP serves streamable HTTP on ln until ctx ends, to requests that
// carry one of the clients' bearer tokens. The client is the session's
// user: its tools are the agent-only set when it is restricted, and its
// actions are recorded under its name.
func (a *app) serveMCP(ctx context.Context, ln net.Listener, clients []cmdutil.MCPClient) error {
	full, agentOnly := a.mcpServer(true), a.mcpServer(false)
	h := byRevision(func(r *http.Request) *mcp.Server {
		if ti := auth.TokenInfoFromContext(r.Context()); ti != nil && ti.Extra["agent_only"] == true {
			return agentOnly
		}
		return full
	})
	verify := func(_ context.Context, presented string, _ *http.Request) (*auth.TokenInfo, error) {
		var found *cmdutil.MCPClient
		for i := range clients { // every token compared: no early exit to time
			if clients[i].Token.Matches(presented) && found == nil {
				found = &clients[i]
			}
		}
		if found == nil {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: found.Name, Extra: map[string]any{"agent_only": found.AgentOnly}}, nil
	}
	authed := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
	// A streamable-HTTP event stream outlives a tool call: answers get
	// five minutes. Every session holds an event stream open, and agents on
	// one host share its address: the default 16 connections per address
	// left the 17th agent's requests closed unanswered (the official MCP
	// conformance runner found it), so one address may hold 256.
	limits := webserver.Limits{Write: 5 * time.Minute, PerClient: 256}
	return model.Wrap(model.CodeAPIError, "mcp", "", webserver.New(authed, limits).Serve(ctx, ln))
}

// mcpCaller is who a tool call comes from, as the trail and the audit name
// it: NAME@mcp-http for an HTTP client, "" on stdio (the local operator).
func mcpCaller(req *mcp.CallToolRequest) string {
	if req.Extra != nil && req.Extra.TokenInfo != nil && req.Extra.TokenInfo.UserID != "" {
		return req.Extra.TokenInfo.UserID + model.ViaHTTP
	}
	return ""
}

// mcpDoor is the door a tool call came through.
func mcpDoor(req *mcp.CallToolRequest) model.Door {
	if mcpCaller(req) != "" {
		return model.DoorMCPHTTP
	}
	return model.DoorMCPStdio
}

// mcpActor is who an operator tool call acts as: the remote client
// (NAME@mcp-http), or on stdio the configured actor.
func (a *app) mcpActor(req *mcp.CallToolRequest) model.Actor {
	return model.Actor{Name: cmp.Or(mcpCaller(req), a.Cfg.Actor), Door: mcpDoor(req)}
}

// mcpServer is the MCP server over the configured source: one tool per
// agent command, and the operator tools when overrides is true and the
// configuration allows.
func (a *app) mcpServer(overrides bool) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "claimdeck", Version: model.Build().String()}, &mcp.ServerOptions{Capabilities: mcpCapabilities()})
	srv.AddReceivingMiddleware(undeclared)
	// The operator tools this server offers, by word: one per humanOps row
	// with mcp, when overrides are on, this client may have them and the
	// configuration is not read-only.
	ops := map[string]cmdutil.HumanOp{}
	if overrides && a.Cfg.MCP.Overrides && !a.Cfg.ReadOnly {
		for _, h := range cmdutil.HumanOps {
			if h.Mcp {
				ops[h.Tool()] = h
			}
		}
	}
	srv.AddReceivingMiddleware(a.unoffered(maps.Clone(ops)))
	for _, op := range a.AgentOps() {
		args, desc := op.Args, cmp.Or(op.Tool, op.Short)
		// One word, one action: where an agent tool has the operator
		// action's word (cancel), the operator's is that tool with
		// force: true, as the command line's cancel --force.
		h, forced := ops[op.Name]
		if forced {
			delete(ops, op.Name)
			args = append(slices.Clone(op.Args), "force")
			desc = fmt.Sprintf("%s, with force: true; without it, the holder's %s (lock_token)", h.Short(), op.Name)
		}
		srv.AddTool(documented(&mcp.Tool{Name: op.Name, Description: desc, InputSchema: inputSchema(args, op.Required)}),
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				tf, err := ToolFlags(args, req.Params.Arguments)
				if err != nil {
					return toolResult(cmdutil.FailPayload(err), true), nil
				}
				if tf.Force {
					return a.overrideTool(ctx, req, h, tf), nil
				}
				tf.Via, tf.Door = mcpCaller(req), mcpDoor(req)
				an, err := a.RunOp(ctx, op, tf)
				if err != nil {
					return toolResult(cmdutil.FailPayload(err), true), nil
				}
				return toolResult(an.Payload(), false), nil
			})
	}
	for _, h := range cmdutil.HumanOps {
		if _, ok := ops[h.Tool()]; !ok {
			continue
		}
		srv.AddTool(documented(&mcp.Tool{Name: h.Tool(), Description: h.Short(), InputSchema: inputSchema(h.Args, h.Required())}),
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				tf, err := ToolFlags(h.Args, req.Params.Arguments)
				if err != nil {
					return toolResult(cmdutil.FailPayload(err), true), nil
				}
				return a.overrideTool(ctx, req, h, tf), nil
			})
	}
	return srv
}

// overrideTool applies an operator tool's call through the desk as the
// caller (mcpActor), its lock_token the token expected: what the action
// needs is model.Action.Needs', enforced by the desk. With force, only the
// operator action's own arguments are taken.
func (a *app) overrideTool(ctx context.Context, req *mcp.CallToolRequest, h cmdutil.HumanOp, tf *cmdutil.TaskFlags) *mcp.CallToolResult {
	for f := range tf.Given {
		if f != "force" && !slices.Contains(h.Args, f) {
			err := model.Errorf(model.CodeMisconfigured, h.Tool(), tf.Task, "%s is not taken with force: true (it takes %s)", cmdutil.ArgName(f), strings.Join(argNames(h.Args), ", "))
			return toolResult(cmdutil.FailPayload(err), true)
		}
	}
	o := &cmdutil.Override{Task: tf.Task, Reason: tf.Reason, To: tf.Agent, Priority: tf.Priority, Expect: tf.Token, Yes: true, By: a.mcpActor(req)}
	if h.Caller {
		// A reviewer's move names its caller: the HTTP client, else the
		// agent_name given, never the configured actor (the desk refuses
		// a nameless one).
		o.To, o.By = "", model.Actor{Name: cmp.Or(mcpCaller(req), strings.TrimSpace(tf.Agent)), Door: mcpDoor(req)}
	}
	t, err := a.ApplyOverride(ctx, h.Action, o)
	if err != nil {
		return toolResult(cmdutil.FailPayload(err), true)
	}
	return toolResult(cmdutil.Answer{Task: t, Holder: h.Action == model.ActionTakeover}.Payload(), false)
}

// argNames are flags' names as tool arguments.
func argNames(flags []string) []string {
	out := make([]string, len(flags))
	for i, f := range flags {
		out[i] = cmdutil.ArgName(f)
	}
	return out
}

// inputSchema is the JSON schema of a tool taking these flags; documented
// describes each.
func inputSchema(flags, required []string) map[string]any {
	props := map[string]any{}
	for _, f := range flags {
		p := map[string]any{"type": "string"}
		switch f {
		case "priority":
			p["type"] = []string{"integer", "string"}
		case "force":
			p["type"] = "boolean"
		}
		props[cmdutil.ArgName(f)] = p
	}
	req := []string{}
	for _, r := range required {
		req = append(req, cmdutil.ArgName(r))
	}
	return map[string]any{"type": "object", "properties": props, "required": req, "additionalProperties": false}
}

// toolFlags reads a tool call's arguments into the flags the CLI would
// have parsed, refusing any argument the tool does not take.
func ToolFlags(flags []string, raw json.RawMessage) (*cmdutil.TaskFlags, error) {
	args := map[string]any{}
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &args); err != nil {
			return nil, model.Errorf(model.CodeMisconfigured, "", "", "the arguments are not a JSON object: %v", err)
		}
	}
	tf := &cmdutil.TaskFlags{Given: map[string]bool{}}
	known := argNames(flags)
	for name, v := range args {
		if !slices.Contains(known, name) {
			msg := "unknown argument " + strconv.Quote(name)
			if near := cmdutil.Nearest(name, known); near != "" {
				msg += " (did you mean " + strconv.Quote(near) + "?)"
			}
			return nil, model.Errorf(model.CodeMisconfigured, "", "", "%s", msg)
		}
		s, err := argText(name, v)
		if err != nil {
			return nil, err
		}
		flag := strings.ReplaceAll(name, "_", "-")
		tf.Given[flag] = true
		if err := tf.Set(flag, s); err != nil {
			return nil, err
		}
	}
	return tf, nil
}

// argText is an argument's value as the CLI would read it from argv.
func argText(name string, v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case float64:
		if name == "priority" && x == float64(int(x)) {
			return strconv.Itoa(int(x)), nil
		}
	case bool:
		if name == "force" {
			return strconv.FormatBool(x), nil
		}
	}
	return "", model.Errorf(model.CodeMisconfigured, "", "", "argument %q must be a string", name)
}

// toolResult is a tool's answer: the CLI's JSON as structured content and
// as text, byte for byte.
func toolResult(payload map[string]any, isErr bool) *mcp.CallToolResult {
	b, err := json.Marshal(payload)
	if err != nil {
		b = []byte(`{"ok":false,"error":{"code":"API_ERROR","message":"the answer could not be encoded"}}`)
		isErr = true
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b), IsError: isErr}
}

// unoffered keeps in the task's shared trail a call of an operator tool
// this server does not offer (an agent_only client's takeover, cancel with
// force where overrides are off): a refused attempt, with the caller and
// the door, for every process to see. The call is still answered as the
// SDK answers an unknown tool or argument.
func (a *app) unoffered(offered map[string]cmdutil.HumanOp) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			call, ok := req.(*mcp.CallToolRequest)
			if method != "tools/call" || !ok || call.Params == nil {
				return res, err
			}
			var args struct {
				Task  string `json:"task"`
				Force bool   `json:"force"`
			}
			_ = json.Unmarshal(call.Params.Arguments, &args)
			action, asked := model.ActionByWord(call.Params.Name)
			if action == model.ActionCancel && !args.Force {
				asked = false // the holder's cancel, an agent tool
			}
			if _, given := offered[call.Params.Name]; !asked || given || !cmdutil.HumanOpOf(action).Mcp || strings.TrimSpace(args.Task) == "" {
				return res, err
			}
			refusal := model.Errorf(model.CodeMisconfigured, string(action), args.Task, "%s is not offered to this client (an agent_only client, or mcp.overrides off): nothing was done", call.Params.Name)
			by := model.Actor{Name: cmp.Or(mcpCaller(call), "(no name given)"), Door: mcpDoor(call)}
			_ = a.WithTaskSource(ctx, args.Task, func(src sources.Source) error {
				return a.Refused(ctx, src, action, args.Task, by, refusal)
			})
			return res, err
		}
	}
}
