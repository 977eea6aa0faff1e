package mcpdoor_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/internal/mcpdoor"
	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/mesh"
)

// serveNamedClients serves `mcp --http` on loopback for c's configuration
// and returns its URL.
func serveNamedClients(t *testing.T, c *cmdtest.CLI) string {
	t.Helper()
	cfg, err := cmdutil.LoadConfig(c.Conf)
	if err != nil {
		t.Fatal(err)
	}
	a := &cmdutil.Env{ConfigFile: c.Conf, Cfg: cfg, Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}
	clients, err := cfg.MCP.HTTPClients("CLAIMDECK_MCP_TOKEN")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mcpdoor.Serve(ctx, a, ln, clients) }()
	t.Cleanup(func() { cancel(); <-done })
	return "http://" + ln.Addr().String()
}

func connectAs(t *testing.T, url, token string) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: cmdtest.Bearer{Token: token}}, MaxRetries: -1, DisableStandaloneSSE: true}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "remote", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// Two remote clients, each with its own token, over real HTTP: the one
// limited to agent tools sees no override, the other's override needs a
// reason, and the audit and the trail name each client with its transport,
// never the server's operator.
func TestMCPOverHTTPNamesEachClient(t *testing.T) {
	t.Setenv("CD_TEST_BOT_TOKEN", cmdtest.BotToken)
	t.Setenv("CD_TEST_ONCALL_TOKEN", cmdtest.OncallToken)
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource+`mcp:
  overrides: true
  clients:
    - {name: ci-bot, token_env: CD_TEST_BOT_TOKEN, agent_only: true}
    - {name: oncall, token_env: CD_TEST_ONCALL_TOKEN}
`)
	url := serveNamedClients(t, c)
	bot, oncall := connectAs(t, url, cmdtest.BotToken), connectAs(t, url, cmdtest.OncallToken)

	tools := func(cs *mcp.ClientSession) []string {
		var names []string
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		return names
	}
	if got := tools(bot); slices.Contains(got, "takeover") || !slices.Contains(got, "claim") {
		t.Fatalf("the agent-only client's tools: %v", got)
	}
	if got := tools(oncall); !slices.Contains(got, "takeover") {
		t.Fatalf("the operator client's tools lack takeover: %v", got)
	}

	id := cmdtest.Call(t, bot, "create", map[string]any{"title": "Rotate keys"}, false).Task.PageID
	claimed := cmdtest.Call(t, bot, "claim", map[string]any{"task": id, "agent_name": "BOT", "run_id": "run-9"}, false).Task
	tok := claimed.LockToken
	if claimed.Agent != "BOT" || len(tok) != 36 {
		t.Fatalf("the claim: holder %q, token %q; want BOT and the whole token", claimed.Agent, tok)
	}
	if listed := cmdtest.Call(t, oncall, "list", map[string]any{}, false).Tasks; len(listed) != 1 || listed[0].LockToken != model.ShownToken(tok) {
		t.Fatalf("list over HTTP shows %+v, want the token's prefix %q", listed, model.ShownToken(tok))
	}
	cmdtest.Call(t, bot, "comment", map[string]any{"task": id, "body": "halfway"}, false)

	if r := cmdtest.Call(t, oncall, "handoff", map[string]any{"task": id, "agent_name": "ORACLE", "priority": "high"}, true); r.Error.Code != "MISCONFIGURED" || !strings.Contains(r.Error.Message, "normal, urgent, critical") || strings.Contains(r.Error.Message, "--") {
		t.Fatalf("a hand-off in the tasks' priority words: %+v", r.Error)
	}
	taken := cmdtest.Call(t, oncall, "takeover", map[string]any{"task": id, "reason": "paged", "lock_token": model.ShownToken(tok)}, false).Task
	if taken.Agent != model.HumanPrefix+"oncall@mcp-http" || len(taken.LockToken) != 36 {
		t.Fatalf("takeover by the oncall client: holder %q, token %q", taken.Agent, taken.LockToken)
	}

	audit, err := os.ReadFile(filepath.Join(c.Dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(audit), `"actor":"oncall@mcp-http"`) || strings.Contains(string(audit), `"actor":"alice"`) {
		t.Fatalf("the audit does not name the client:\n%s", audit)
	}
	// The trail names the client for its create, its claim (the agent
	// stays the holder) and its comment.
	named := map[string]bool{}
	for _, e := range c.Run(0, "get", "--task", id).Task.History {
		if strings.Contains(e.Actor, "ci-bot@mcp-http") {
			for _, what := range []string{"create", "claim", "halfway"} {
				if strings.Contains(e.Action+" "+e.Reason+" "+e.Detail, what) {
					named[what] = true
				}
			}
		}
	}
	if len(named) != 3 {
		t.Fatalf("the trail names ci-bot only for %v:\n%s", named, cmdtest.Dump(c.Run(0, "get", "--task", id).Task.History))
	}
}

// Every bearer token claimdeck serves behind is checked for entropy, and
// the refusal says what to do without quoting the token.
func TestWeakBearerTokensAreRefused(t *testing.T) {
	for _, tok := range []string{"x", "0123456789abcdef", "passwordpassword", strings.Repeat("ab", 40), "gamma-bearer-0x1234"} {
		cfg := cmdutil.MCPConfig{Clients: []cmdutil.MCPClient{{Name: "weak", Token: mesh.Token(tok)}}}
		_, err := cfg.HTTPClients("")
		if err == nil || model.CodeOf(err) != model.CodeMisconfigured || !strings.Contains(err.Error(), "openssl rand") || len(tok) > 3 && strings.Contains(err.Error(), tok) {
			t.Errorf("token %q: %v", tok, err)
		}
	}
	for _, tok := range []string{cmdtest.BotToken, "3669b0a9-7c1d-4f29-9149-c92b531e5c8e", "0123456789abcdef-secret-Xy"} {
		if err := mesh.Token(tok).CheckStrength(); err != nil {
			t.Errorf("a random token %q refused: %v", tok, err)
		}
	}
	if _, err := (cmdutil.MCPConfig{Clients: []cmdutil.MCPClient{{Token: cmdtest.BotToken}}}).HTTPClients(""); err == nil || !strings.Contains(err.Error(), "name") {
		t.Errorf("a client without a name: %v", err)
	}
}

// Two clients with one bearer token could not be told apart (the first
// one's rights would go to both): mcp --http refuses to start, naming
// both clients and never the token.
func TestTwoMCPClientsWithOneTokenAreRefused(t *testing.T) {
	t.Setenv("SHARED_MCP_TOKEN", cmdtest.BotToken)
	for _, clients := range [][]cmdutil.MCPClient{
		{{Name: "ci-bot", Token: cmdtest.BotToken, AgentOnly: true}, {Name: "oncall", Token: cmdtest.BotToken}},
		{{Name: "ci-bot", TokenEnv: "SHARED_MCP_TOKEN", AgentOnly: true}, {Name: "oncall", TokenEnv: "SHARED_MCP_TOKEN"}},
		{{Name: "ci-bot", TokenEnv: "SHARED_MCP_TOKEN", AgentOnly: true}, {Name: "oncall", Token: cmdtest.BotToken}},
	} {
		_, err := cmdutil.MCPConfig{Clients: clients}.HTTPClients("")
		if model.CodeOf(err) != model.CodeMisconfigured || !strings.Contains(err.Error(), `"ci-bot" and "oncall"`) || strings.Contains(err.Error(), cmdtest.BotToken) {
			t.Errorf("clients %v sharing a token: %v", clients, err)
		}
	}
	if _, err := (cmdutil.MCPConfig{Clients: []cmdutil.MCPClient{{Name: "ci-bot", Token: cmdtest.BotToken}, {Name: "oncall", Token: cmdtest.OncallToken}}}).HTTPClients(""); err != nil {
		t.Fatalf("two clients with tokens of their own: %v", err)
	}
}

// An agent_only client asking for an override it is not offered is
// refused, and the attempt is in the task's shared trail under the
// client's name at door mcp-http, for every process to see.
func TestAnAgentOnlyClientsOverrideAttemptIsInTheSharedTrail(t *testing.T) {
	t.Setenv("CD_TEST_BOT_TOKEN", cmdtest.BotToken)
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource+`mcp:
  overrides: true
  clients:
    - {name: ci-bot, token_env: CD_TEST_BOT_TOKEN, agent_only: true}
`)
	bot := connectAs(t, serveNamedClients(t, c), cmdtest.BotToken)
	id := c.Run(0, "create", "--title", "held").Task.PageID
	c.Run(0, "claim", "--task", id, "--agent-name", "SANDMAN")
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"takeover", map[string]any{"task": id}},
		{"cancel", map[string]any{"task": id, "force": true, "reason": "mine now"}},
	} {
		res, err := bot.CallTool(context.Background(), &mcp.CallToolParams{Name: call.tool, Arguments: call.args})
		if err == nil && !res.IsError {
			t.Fatalf("%s by an agent_only client was applied", call.tool)
		}
	}
	if got := c.Run(0, "get", "--task", id).Task; got.State != "claimed" || got.Agent != "SANDMAN" {
		t.Fatalf("after the refused overrides: %+v", got)
	}
	want := "ci-bot@mcp-http takeover mcp-http MISCONFIGURED; ci-bot@mcp-http cancel mcp-http MISCONFIGURED"
	if got := strings.Join(cmdtest.SharedTrail(t, c, id, "takeover", "cancel"), "; "); got != want {
		t.Fatalf("the refused overrides in the shared trail:\n%s\nwant\n%s", got, want)
	}
}
