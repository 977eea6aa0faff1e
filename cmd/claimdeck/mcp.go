package main

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/webserver"
)

// MCPConfig is the `mcp:` section: what `claimdeck mcp` exposes.
type MCPConfig struct {
	// Overrides adds the operator tools (takeover, release, handoff); never
	// in read-only mode.
	Overrides bool `mapstructure:"overrides" json:"overrides"`
}

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
--http ADDR serves streamable HTTP instead, for agents on other hosts; every
request must carry "Authorization: Bearer $CLAIMDECK_MCP_TOKEN".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			srv := a.mcpServer()
			if addr == "" {
				return srv.Run(cmd.Context(), &mcp.StdioTransport{})
			}
			token := os.Getenv(tokenEnv)
			if len(token) < 16 {
				return model.Errorf(model.CodeMisconfigured, "mcp", "", "--http needs a bearer token of at least 16 characters in $%s", tokenEnv)
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return model.Wrap(model.CodeMisconfigured, "mcp", "", err)
			}
			return serveMCP(cmd.Context(), ln, srv, token)
		},
	}
	cmd.Flags().StringVar(&addr, "http", "", "serve streamable HTTP on ADDR (host:port) instead of stdio")
	cmd.Flags().StringVar(&tokenEnv, "token-env", "CLAIMDECK_MCP_TOKEN", "the environment variable holding the HTTP bearer token")
	return cmd
}

// serveMCP serves srv over streamable HTTP on ln until ctx ends, to
// requests that carry the bearer token.
func serveMCP(ctx context.Context, ln net.Listener, srv *mcp.Server, token string) error {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	want := []byte("Bearer " + token)
	auth := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
	// A streamable-HTTP event stream outlives a tool call: answers get
	// five minutes. Every session holds an event stream open, and agents on
	// one host share its address: the default 16 connections per address
	// left the 17th agent's requests closed unanswered (the official MCP
	// conformance runner found it), so one address may hold 256.
	limits := webserver.Limits{Write: 5 * time.Minute, PerClient: 256}
	return model.Wrap(model.CodeAPIError, "mcp", "", webserver.New(auth, limits).Serve(ctx, ln))
}

// mcpServer is the MCP server over the configured source: one tool per
// agent command, and the operator tools when the configuration allows.
func (a *app) mcpServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "claimdeck", Version: version}, nil)
	for _, op := range a.agentOps() {
		srv.AddTool(&mcp.Tool{Name: op.name, Description: op.short, InputSchema: inputSchema(op.args, op.required)},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				tf, err := toolFlags(op.args, req.Params.Arguments)
				if err != nil {
					return toolResult(failPayload(err), true), nil
				}
				an, err := a.runOp(ctx, op, tf)
				if err != nil {
					return toolResult(failPayload(err), true), nil
				}
				return toolResult(an.payload(), false), nil
			})
	}
	if a.cfg.MCP.Overrides && !a.cfg.ReadOnly {
		for _, ov := range overrideTools {
			args := ov.args
			srv.AddTool(&mcp.Tool{Name: string(ov.name), Description: ov.short, InputSchema: inputSchema(args, []string{"task"})},
				func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					tf, err := toolFlags(args, req.Params.Arguments)
					var t *model.Task
					if err == nil {
						t, err = a.applyOverride(ctx, ov.action, &override{task: tf.task, reason: tf.reason, to: tf.agent, priority: tf.priority, expect: tf.token, yes: true})
					}
					if err != nil {
						return toolResult(failPayload(err), true), nil
					}
					return toolResult(answer{task: t}.payload(), false), nil
				})
		}
	}
	return srv
}

// overrideTools are the operator commands MCP may expose. The tool's
// lock_token is the command's --expect-token and agent_name its --to.
var overrideTools = []struct {
	name   string
	action model.Action
	short  string
	args   []string
}{
	{"takeover", model.ActionTakeover, "Claim a task as HUMAN (operator; audited)", []string{"task", "reason", "lock-token"}},
	{"release", model.ActionForceRelease, "Force-release a claimed task back to the queue (operator; audited)", []string{"task", "reason", "lock-token"}},
	{"handoff", model.ActionHandoff, "Release a task and reserve it for one agent or ANY (operator; audited)", []string{"task", "reason", "lock-token", "agent-name", "priority"}},
}

// argName is a flag's name as a tool argument: snake_case.
func argName(flag string) string { return strings.ReplaceAll(flag, "-", "_") }

// inputSchema is the JSON schema of a tool taking these flags.
func inputSchema(flags, required []string) map[string]any {
	props := map[string]any{}
	for _, f := range flags {
		p := map[string]any{"type": "string"}
		switch f {
		case "priority":
			p = map[string]any{"type": []string{"integer", "string"}, "description": "a number (higher = more urgent) or critical, high, medium, low"}
		case "lease":
			p["description"] = "a duration such as 20m"
		case "status":
			p["description"] = "READY, IN_PROGRESS, BLOCKED, REVIEW, DONE, FAILED or CANCELED"
		case "next-check-at":
			p["description"] = "an RFC 3339 time"
		}
		props[argName(f)] = p
	}
	req := []string{}
	for _, r := range required {
		req = append(req, argName(r))
	}
	return map[string]any{"type": "object", "properties": props, "required": req, "additionalProperties": false}
}

// toolFlags reads a tool call's arguments into the flags the CLI would
// have parsed, refusing any argument the tool does not take.
func toolFlags(flags []string, raw json.RawMessage) (*taskFlags, error) {
	args := map[string]any{}
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &args); err != nil {
			return nil, model.Errorf(model.CodeMisconfigured, "", "", "the arguments are not a JSON object: %v", err)
		}
	}
	tf := &taskFlags{given: map[string]bool{}}
	known := make([]string, len(flags))
	for i, f := range flags {
		known[i] = argName(f)
	}
	for name, v := range args {
		if !slices.Contains(known, name) {
			msg := "unknown argument " + strconv.Quote(name)
			if near := nearest(name, known); near != "" {
				msg += " (did you mean " + strconv.Quote(near) + "?)"
			}
			return nil, model.Errorf(model.CodeMisconfigured, "", "", "%s", msg)
		}
		s, err := argText(name, v)
		if err != nil {
			return nil, err
		}
		flag := strings.ReplaceAll(name, "_", "-")
		tf.given[flag] = true
		if err := tf.set(flag, s); err != nil {
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
	}
	return "", model.Errorf(model.CodeMisconfigured, "", "", "argument %q must be a string", name)
}

// set stores one flag's value as cobra would.
func (tf *taskFlags) set(flag, v string) error {
	dst := map[string]*string{
		"task": &tf.task, "run-id": &tf.runID, "agent-name": &tf.agent, "lock-token": &tf.token,
		"reason": &tf.reason, "unblock-action": &tf.unblock, "next-check-at": &tf.nextCheck,
		"artifacts": &tf.artifacts, "status": &tf.status, "title": &tf.title, "priority": &tf.priority,
		"class": &tf.class, "description": &tf.desc, "parent": &tf.parent, "body": &tf.body,
	}
	if p, ok := dst[flag]; ok {
		*p = v
		return nil
	}
	if flag == "lease" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return model.Errorf(model.CodeMisconfigured, "", "", "lease %q: want a duration such as 20m", v)
		}
		tf.lease = d
		return nil
	}
	return model.Errorf(model.CodeMisconfigured, "", "", "unknown argument %q", argName(flag))
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
