package mcpdoor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/internal/mcpdoor"
	"github.com/claimdeck/claimdeck/internal/mcpdoor/mcptest"
	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/mesh"
)

func TestMCPLeaseCycle(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource+"mcp: {overrides: true}\n")
	cs := mcptest.Client(t, c)

	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		schema, _ := json.Marshal(tool.InputSchema)
		if tool.Name == "heartbeat" && (!strings.Contains(string(schema), `"lock_token"`) || !strings.Contains(string(schema), `"run_id"`)) {
			t.Errorf("heartbeat's schema lacks lock_token or run_id: %s", schema)
		}
	}
	for _, want := range []string{"next", "claim", "heartbeat", "complete", "block", "review", "cancel", "comment", "get", "list", "create", "update", "release"} {
		if !slices.Contains(names, want) {
			t.Errorf("no %s tool among %v", want, names)
		}
	}

	id := cmdtest.Call(t, cs, "create", map[string]any{"title": "Design VPC module", "priority": 3}, false).Task.PageID
	if next := cmdtest.Call(t, cs, "next", map[string]any{"agent_name": "SANDMAN"}, false); next.Task == nil || next.Task.PageID != id {
		t.Fatalf("next = %+v", next.Task)
	}
	claim := cmdtest.Call(t, cs, "claim", map[string]any{"task": id, "agent_name": "SANDMAN", "run_id": "run-001"}, false)
	tok := claim.Task.LockToken
	if claim.Task.Status != "IN_PROGRESS" || tok == "" {
		t.Fatalf("claim: %+v", claim.Task)
	}
	if r := cmdtest.Call(t, cs, "claim", map[string]any{"task": id, "agent_name": "ORACLE"}, true); r.Error.Code != "CONFLICT" {
		t.Fatalf("a second claim: %+v", r.Error)
	}
	cmdtest.Call(t, cs, "heartbeat", map[string]any{"task": id, "lock_token": tok, "run_id": "run-001"}, false)
	_, viaMCP := cmdtest.CallText(t, cs, "get", map[string]any{"task": id}, false)
	cliOut, _, _ := cmdtest.Raw(c, "", "get", "--task", id)
	if strings.TrimSuffix(cliOut, "\n") != viaMCP {
		t.Fatalf("get over MCP and over the CLI differ:\n%s\n%s", viaMCP, cliOut)
	}
	cmdtest.Call(t, cs, "release", map[string]any{"task": id, "reason": "agent wedged"}, false)
	if r := cmdtest.Call(t, cs, "complete", map[string]any{"task": id, "lock_token": tok}, true); r.Error.Code != "LOST_LOCK" {
		t.Fatalf("complete after a force-release: %+v", r.Error)
	}
	tok = cmdtest.Call(t, cs, "claim", map[string]any{"task": id, "agent_name": "SANDMAN"}, false).Task.LockToken
	if r := cmdtest.Call(t, cs, "complete", map[string]any{"task": id, "lock_token": tok, "artifacts": "pr/17"}, false); r.Task.Status != "DONE" {
		t.Fatalf("complete: %+v", r.Task)
	}
	if r := cmdtest.Call(t, cs, "heartbeat", map[string]any{"task": id, "lock_tokn": "x"}, true); r.Error.Code != "MISCONFIGURED" || !strings.Contains(r.Error.Message, "lock_token") {
		t.Fatalf("a mistyped argument: %+v", r.Error)
	}
	if r := cmdtest.Call(t, cs, "get", map[string]any{"task": "nope"}, true); !strings.Contains(r.Error.Message, "no such task") {
		t.Fatalf("an unknown task: %+v", r.Error)
	}
}

func TestMCPOverridesOnlyWhenEnabledAndNeverReadOnly(t *testing.T) {
	for _, tc := range []struct {
		conf string
		want bool
	}{
		{"", false},
		{"mcp: {overrides: true}\n", true},
		{"mcp: {overrides: true}\nread_only: true\n", false},
	} {
		cs := mcptest.Client(t, cmdtest.NewCLI(t, cmdtest.SQLiteSource+tc.conf))
		tools, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"takeover", "unblock"} {
			got := slices.ContainsFunc(tools.Tools, func(tool *mcp.Tool) bool { return tool.Name == name })
			if got != tc.want {
				t.Errorf("config %q: %s exposed = %v, want %v", tc.conf, name, got, tc.want)
			}
		}
		// The operator's cancel is the agent tool cancel with force.
		i := slices.IndexFunc(tools.Tools, func(tool *mcp.Tool) bool { return tool.Name == "cancel" })
		b, _ := json.Marshal(tools.Tools[i].InputSchema)
		var in struct {
			Properties map[string]any `json:"properties"`
		}
		if err := json.Unmarshal(b, &in); err != nil {
			t.Fatal(err)
		}
		if _, got := in.Properties["force"]; got != tc.want {
			t.Errorf("config %q: cancel takes force = %v, want %v", tc.conf, got, tc.want)
		}
	}
}

// No tool's description names a command-line flag, which an MCP client
// has not: with overrides and without.
func TestMCPDescriptionsNameNoCommandLineFlag(t *testing.T) {
	for _, conf := range []string{"", "mcp: {overrides: true}\n"} {
		tools, err := mcptest.Client(t, cmdtest.NewCLI(t, cmdtest.SQLiteSource+conf)).ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range tools.Tools {
			if cmdtest.CliFlag.MatchString(tool.Description) {
				t.Errorf("config %q: %s says %q", conf, tool.Name, tool.Description)
			}
		}
	}
}

// The operator's cancel over MCP is the agent tool cancel with force:
// true, as the command line's cancel --force: a reason required (named as
// MCP names it), lock_token the token expected, no holder's argument taken;
// applied through the desk under the caller. Without force the holder's
// cancel is unchanged: the lock token is required.
func TestMCPCancelWithForceIsTheOperators(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource+"mcp: {overrides: true}\n")
	cs := mcptest.Client(t, c)
	id := c.Run(0, "create", "--title", "Design VPC module").Task.PageID
	tok := c.Run(0, "claim", "--task", id, "--agent-name", "SANDMAN").Task.LockToken
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"task": id, "reason": "dup"}, "lock_token is required"},
		{map[string]any{"task": id, "force": true}, "a reason is required"},
		{map[string]any{"task": id, "force": true, "reason": "dup", "agent_name": "X"}, "agent_name is not taken with force: true"},
		{map[string]any{"task": id, "force": "yes", "reason": "dup"}, `force "yes": want true or false`},
		{map[string]any{"task": id, "force": true, "reason": "dup", "lock_token": "0000"}, "lock_token no longer matches"},
	} {
		r, text := cmdtest.CallText(t, cs, "cancel", tc.args, true)
		if !strings.Contains(r.Error.Message, tc.want) || strings.Contains(text, "--") {
			t.Errorf("cancel %v: %s, want %q and no command-line flag", tc.args, text, tc.want)
		}
	}
	if got := c.Run(0, "get", "--task", id).Task; got.State != "claimed" {
		t.Fatalf("after the refused cancels the task is %s", got.State)
	}
	got := cmdtest.Call(t, cs, "cancel", map[string]any{"task": id, "force": true, "reason": "dup", "lock_token": tok}, false).Task
	if got.State != "canceled" {
		t.Fatalf("cancel with force: %+v", got)
	}
}

// TestMCPOverStdio drives `claimdeck mcp` as an MCP client would: a
// subprocess speaking JSON-RPC on its stdin and stdout.
func TestMCPOverStdio(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperClaimdeck$")
	cmd.Env = append(os.Environ(), "CLAIMDECK_HELPER_ARGS=--config\x1f"+c.Conf+"\x1fmcp")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	id := cmdtest.Call(t, cs, "create", map[string]any{"title": "over stdio"}, false).Task.PageID
	tok := cmdtest.Call(t, cs, "claim", map[string]any{"task": id, "agent_name": "SANDMAN"}, false).Task.LockToken
	if r := cmdtest.Call(t, cs, "claim", map[string]any{"task": id, "agent_name": "ORACLE"}, true); r.Error.Code != "CONFLICT" {
		t.Fatalf("a second claim: %+v", r.Error)
	}
	if r := cmdtest.Call(t, cs, "complete", map[string]any{"task": id, "lock_token": tok}, false); r.Task.Status != "DONE" {
		t.Fatalf("complete: %+v", r.Task)
	}
	if got := c.Run(0, "get", "--task", id).Task; got.Status != "DONE" {
		t.Fatalf("the CLI reads %+v after the MCP lease cycle", got)
	}
}

// TestHelperClaimdeck is the claimdeck binary for subprocess tests: it runs
// the command line in $CLAIMDECK_HELPER_ARGS and exits.
func TestHelperClaimdeck(t *testing.T) {
	args := os.Getenv("CLAIMDECK_HELPER_ARGS")
	if args == "" {
		t.Skip("runs only as a subprocess")
	}
	os.Exit(cmdtest.Program(context.Background(), strings.Split(args, "\x1f"), os.Stdin, os.Stdout, os.Stderr))
}

func TestMCPOverHTTPNeedsTheBearerToken(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	cfg, err := cmdutil.LoadConfig(c.Conf)
	if err != nil {
		t.Fatal(err)
	}
	a := &cmdutil.Env{Cfg: cfg, Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- mcpdoor.Serve(ctx, a, ln, []cmdutil.MCPClient{{Name: "default", Token: mesh.Token("0123456789abcdef-secret")}})
	}()
	defer func() { cancel(); <-done }()
	url := "http://" + ln.Addr().String()

	resp, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a request without the token got %d", resp.StatusCode)
	}
	for token, ok := range map[string]bool{"0123456789abcdef-secreT": false, "0123456789abcdef-secret": true} {
		tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: cmdtest.Bearer{Token: token}}, MaxRetries: -1, DisableStandaloneSSE: true}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "remote-agent", Version: "1"}, nil).Connect(ctx, tr, nil)
		if (err == nil) != ok {
			t.Fatalf("token %q: connect error %v", token, err)
		}
		if ok {
			if r := cmdtest.Call(t, cs, "create", map[string]any{"title": "from another host"}, false); r.Task.Status != "READY" {
				t.Fatalf("create over HTTP: %+v", r.Task)
			}
			cs.Close()
		}
	}
}

// FuzzToolFlags: a tool call's arguments, whatever they are, become the
// flags or a MISCONFIGURED refusal that names what to fix; never a panic.
func FuzzToolFlags(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"task":"a","lock_token":"b"}`, `{"priority":3}`, `{"priority":2.5}`, `{"lease":"20m"}`,
		`{"lease":"soon"}`, `{"lock_tokn":"x"}`, `[1]`, `null`, `{"task":7}`, ``, `{"task":"a","task":"b"}`, `{"body":"x"}`,
		`{"force":true}`, `{"force":"no"}`, `{"force":1}`, `{"force":"maybe"}`,
	} {
		f.Add([]byte(s))
	}
	flags := []string{"task", "lock-token", "run-id", "agent-name", "priority", "lease", "reason", "force"}
	f.Fuzz(func(t *testing.T, raw []byte) {
		tf, err := mcpdoor.ToolFlags(flags, raw)
		if err != nil {
			if model.CodeOf(err) != model.CodeMisconfigured || err.Error() == "" {
				t.Fatalf("a refusal that is not MISCONFIGURED: %v", err)
			}
			return
		}
		for name := range tf.Given {
			if !slices.Contains(flags, name) {
				t.Fatalf("accepted an argument the tool does not take: %s", name)
			}
		}
	})
}

// TestMCPFromTheSpecification speaks to `claimdeck mcp` as the MCP
// specification describes stdio, without the SDK: newline-delimited
// JSON-RPC 2.0, initialize, the initialized notification, then tools/call.
func TestMCPFromTheSpecification(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource+"mcp: {overrides: true}\n")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperClaimdeck$")
	cmd.Env = append(os.Environ(), "CLAIMDECK_HELPER_ARGS=--config\x1f"+c.Conf+"\x1fmcp")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); _ = cmd.Wait() }()
	dec := json.NewDecoder(outPipe)
	id := 0
	rpc := func(method string, params any) map[string]any {
		t.Helper()
		id++
		msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if _, err := in.Write(append(msg, '\n')); err != nil {
			t.Fatal(err)
		}
		for {
			var resp map[string]any
			if err := dec.Decode(&resp); err != nil {
				t.Fatalf("%s: %v", method, err)
			}
			if resp["id"] == float64(id) {
				if resp["error"] != nil {
					t.Fatalf("%s: a protocol error: %v", method, resp["error"])
				}
				return resp["result"].(map[string]any)
			}
		}
	}
	tool := func(name string, args map[string]any, wantErr bool) map[string]any {
		t.Helper()
		res := rpc("tools/call", map[string]any{"name": name, "arguments": args})
		if isErr, _ := res["isError"].(bool); isErr != wantErr {
			t.Fatalf("%s: isError %v, want %v: %v", name, isErr, wantErr, res)
		}
		structured, _ := res["structuredContent"].(map[string]any)
		text := res["content"].([]any)[0].(map[string]any)["text"].(string)
		var fromText map[string]any
		if err := json.Unmarshal([]byte(text), &fromText); err != nil || fromText["ok"] != structured["ok"] {
			t.Fatalf("%s: text and structured content disagree: %s / %v", name, text, structured)
		}
		return structured
	}
	task := func(r map[string]any) map[string]any { return r["task"].(map[string]any) }
	code := func(r map[string]any) any { return r["error"].(map[string]any)["code"] }

	init := rpc("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "spec-client", "version": "1"}})
	if info := init["serverInfo"].(map[string]any); info["name"] != "claimdeck" || info["version"] != model.Build().String() {
		t.Fatalf("initialize: %v, want version %q", init, model.Build().String())
	}
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	if _, err := in.Write(append(msg, '\n')); err != nil {
		t.Fatal(err)
	}
	if tools := rpc("tools/list", map[string]any{})["tools"].([]any); len(tools) < 12 {
		t.Fatalf("tools/list: %d tools", len(tools))
	}
	id1 := task(tool("create", map[string]any{"title": "from the spec", "priority": 2}, false))["page_id"]
	if task(tool("next", map[string]any{"agent_name": "SANDMAN"}, false))["page_id"] != id1 {
		t.Fatal("next did not offer the new task")
	}
	tok := task(tool("claim", map[string]any{"task": id1, "agent_name": "SANDMAN", "run_id": "run-001"}, false))["lock_token"]
	if c := code(tool("claim", map[string]any{"task": id1, "agent_name": "ORACLE"}, true)); c != "CONFLICT" {
		t.Fatalf("a second claim: %v", c)
	}
	tool("heartbeat", map[string]any{"task": id1, "lock_token": tok, "run_id": "run-001"}, false)
	tool("release", map[string]any{"task": id1, "reason": "wedged"}, false)
	if c := code(tool("complete", map[string]any{"task": id1, "lock_token": tok}, true)); c != "LOST_LOCK" {
		t.Fatalf("complete after a force-release: %v", c)
	}
	tok = task(tool("claim", map[string]any{"task": id1, "agent_name": "SANDMAN"}, false))["lock_token"]
	if s := task(tool("complete", map[string]any{"task": id1, "lock_token": tok}, false))["status"]; s != "DONE" {
		t.Fatalf("complete: %v", s)
	}
}

// MCP has no --source: with two sources its tools act on default_source,
// or $CLAIMDECK_DEFAULT_SOURCE before it.
func TestMCPActsOnTheDefaultSource(t *testing.T) {
	t.Setenv(cmdutil.EnvDefaultSource, "")
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource+"  - name: team\n    kind: sqlite\n    path: DIR/team.db\n")
	local := c.Run(0, "--source", "local", "create", "--title", "in local").Task.PageID
	team := c.Run(0, "--source", "team", "create", "--title", "in team").Task.PageID
	conf, err := os.ReadFile(c.Conf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.Conf, append([]byte("default_source: local\n"), conf...), 0o600); err != nil {
		t.Fatal(err)
	}
	next := func() string {
		t.Helper()
		res, err := mcptest.Client(t, c).CallTool(context.Background(), &mcp.CallToolParams{Name: "next", Arguments: map[string]any{"agent_name": "A"}})
		if err != nil || res.IsError {
			b, _ := json.Marshal(res)
			t.Fatalf("next: %v %s", err, b)
		}
		b, _ := json.Marshal(res.StructuredContent)
		var sc struct {
			Task struct {
				PageID string `json:"page_id"`
			}
		}
		if err := json.Unmarshal(b, &sc); err != nil {
			t.Fatal(err)
		}
		return sc.Task.PageID
	}
	if got := next(); got != local {
		t.Fatalf("next with default_source local: %s, want %s", got, local)
	}
	t.Setenv(cmdutil.EnvDefaultSource, "team")
	if got := next(); got != team {
		t.Fatalf("next with %s=team: %s, want %s", cmdutil.EnvDefaultSource, got, team)
	}
}

// update cannot move a Blocked task back to Ready over MCP (that is
// unblock, a person's audited action): refused, and the refusal is kept
// in the task's shared trail at door mcp-stdio, where another person
// with a journal of their own reads it.
func TestMCPUpdateDoesNotUnblockAndTheRefusalIsShared(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	cs := mcptest.Client(t, c)
	id := c.Run(0, "create", "--title", "needs keys").Task.PageID
	tok := c.Run(0, "claim", "--task", id, "--agent-name", "W1").Task.LockToken
	c.Run(0, "block", "--task", id, "--lock-token", tok, "--reason", "no keys")
	if r := cmdtest.Call(t, cs, "update", map[string]any{"task": id, "status": "READY", "agent_name": "W1"}, true); r.Error.Code != "MISCONFIGURED" || !strings.Contains(r.Error.Message, "unblock") {
		t.Fatalf("update READY of a blocked task over MCP: %+v", r.Error)
	}
	if got := c.Run(0, "get", "--task", id).Task; got.State != "blocked" {
		t.Fatalf("after the refused update the task is %s", got.State)
	}
	if seen := cmdtest.SharedTrail(t, c, id, "update"); strings.Join(seen, "; ") != "W1 update mcp-stdio MISCONFIGURED" {
		t.Fatalf("the refused update in the shared trail: %q", seen)
	}
}
