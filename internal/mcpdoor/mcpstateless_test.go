package mcpdoor_test

import (
	"bufio"
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
	"time"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

// mcpProcess starts `claimdeck mcp --http` as its own process on c's
// configuration, the token in $CLAIMDECK_MCP_TOKEN, and returns its URL
// once it answers.
func mcpProcess(t *testing.T, c *cmdtest.CLI, token string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperClaimdeck$")
	cmd.Env = append(os.Environ(), "CLAIMDECK_MCP_TOKEN="+token, "CLAIMDECK_HELPER_ARGS=--config\x1f"+c.Conf+"\x1fmcp\x1f--http\x1f"+addr)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	exited := make(chan struct{})
	go func() { _, _ = cmd.Process.Wait(); close(exited) }()
	for { // until it listens; the test's deadline bounds the wait
		if conn, err := net.Dial("tcp", addr); err == nil {
			conn.Close()
			return "http://" + addr + "/mcp"
		}
		select {
		case <-exited:
			t.Fatalf("mcp --http ended before it listened:\n%s", stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// rawMCP is a client written from the 2026-07-28 specification, not the
// SDK: every request a POST of its own, the protocol version in the
// MCP-Protocol-Version header and in _meta with the client's
// capabilities, the method (and a call's tool) mirrored in headers.
type rawMCP struct {
	t           *testing.T
	url, token  string
	revision    string
	id          int
	sessionSeen []string
	status      []int
}

// rpc sends one request and returns its response message.
func (c *rawMCP) rpc(method string, params map[string]any) map[string]any {
	c.t.Helper()
	c.id++
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    c.revision,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw-stateless", "version": "1"},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("MCP-Protocol-Version", c.revision)
	req.Header.Set("Mcp-Method", method)
	if name, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	c.status = append(c.status, resp.StatusCode)
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		c.sessionSeen = append(c.sessionSeen, sid)
	}
	return readMessage(c.t, resp, c.id)
}

// readMessage is the JSON-RPC response with that id, from a JSON body or
// an event stream.
func readMessage(t *testing.T, resp *http.Response, id int) map[string]any {
	t.Helper()
	var lines []string
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				lines = append(lines, strings.TrimSpace(data))
			}
		}
	} else {
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		lines = []string{b.String()}
	}
	for _, l := range lines {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["id"] == float64(id) {
			return m
		}
	}
	t.Fatalf("HTTP %d: no response to request %d in %q", resp.StatusCode, id, lines)
	return nil
}

// tool calls one tool and returns its structured content and isError.
func (c *rawMCP) tool(name string, args map[string]any) (map[string]any, bool) {
	c.t.Helper()
	m := c.rpc("tools/call", map[string]any{"name": name, "arguments": args})
	res, ok := m["result"].(map[string]any)
	if !ok {
		c.t.Fatalf("%s: no result: %v", name, m)
	}
	sc, _ := res["structuredContent"].(map[string]any)
	isErr, _ := res["isError"].(bool)
	return sc, isErr
}

func taskOf(t *testing.T, sc map[string]any) map[string]any {
	t.Helper()
	task, ok := sc["task"].(map[string]any)
	if !ok {
		t.Fatalf("no task in %v", sc)
	}
	return task
}

// A 2026-07-28 client, stateless (no initialize, no session), completes
// a lease cycle against `claimdeck mcp --http` running as its own process:
// discover, create, claim, heartbeat, complete; the holder's second
// complete is refused as LOST_LOCK. No answer carries a session id. On the
// same server a 2025-11-25 and a 2025-06-18 client still initialize and
// get a session.
func TestMCPStatelessClientLeaseCycle(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	url := mcpProcess(t, c, cmdtest.BotToken)
	cl := &rawMCP{t: t, url: url, token: cmdtest.BotToken, revision: "2026-07-28"}

	disc, ok := cl.rpc("server/discover", nil)["result"].(map[string]any)
	if !ok {
		t.Fatalf("server/discover: no result")
	}
	versions, _ := disc["supportedVersions"].([]any)
	for _, want := range []string{"2026-07-28", "2025-11-25", "2025-06-18"} {
		if !slices.Contains(versions, any(want)) {
			t.Errorf("server/discover lists %v, without %s", versions, want)
		}
	}
	if meta, _ := disc["_meta"].(map[string]any); meta == nil || meta["io.modelcontextprotocol/serverInfo"] == nil {
		t.Errorf("server/discover does not name the server in _meta: %v", disc)
	}
	if caps, _ := disc["capabilities"].(map[string]any); caps["tools"] == nil || caps["prompts"] != nil || caps["resources"] != nil {
		t.Errorf("declared capabilities %v, want tools only", caps)
	}
	if m := cl.rpc("prompts/list", nil); m["error"] == nil || m["error"].(map[string]any)["code"] != float64(-32601) || cl.status[len(cl.status)-1] != http.StatusNotFound {
		t.Errorf("prompts/list, undeclared, answered HTTP %d %v; want 404 and -32601", cl.status[len(cl.status)-1], m)
	}

	sc, isErr := cl.tool("create", map[string]any{"title": "Rotate keys"})
	id, _ := taskOf(t, sc)["page_id"].(string)
	if isErr || id == "" {
		t.Fatalf("create: %v", sc)
	}
	sc, isErr = cl.tool("claim", map[string]any{"task": id, "agent_name": "BOT", "run_id": "run-1", "lease": "1m"})
	claimed := taskOf(t, sc)
	tok, _ := claimed["lock_token"].(string)
	if isErr || len(tok) != 36 || claimed["status"] != "IN_PROGRESS" {
		t.Fatalf("claim: %v", sc)
	}
	sc, isErr = cl.tool("heartbeat", map[string]any{"task": id, "lock_token": tok, "lease": "30m"})
	beat := taskOf(t, sc)
	if isErr || beat["lock_token"] != tok || !(beat["lock_expires"].(string) > claimed["lock_expires"].(string)) {
		t.Fatalf("heartbeat for 30m after a 1m claim: %v (claimed %v)", beat, claimed)
	}
	sc, isErr = cl.tool("complete", map[string]any{"task": id, "lock_token": tok, "run_id": "run-1", "artifacts": "PR #9"})
	if done := taskOf(t, sc); isErr || done["status"] != "DONE" {
		t.Fatalf("complete: %v", sc)
	}
	sc, isErr = cl.tool("complete", map[string]any{"task": id, "lock_token": tok})
	if e, _ := sc["error"].(map[string]any); !isErr || e["code"] != "LOST_LOCK" {
		t.Fatalf("a second complete with the spent token: isError %v, %v", isErr, sc)
	}
	if len(cl.sessionSeen) > 0 {
		t.Errorf("a stateless client was handed session ids %v", cl.sessionSeen)
	}
	if got := c.Run(0, "get", "--task", id).Task; got.Status != "DONE" || got.Artifacts != "PR #9" {
		t.Fatalf("the store after the cycle: %+v", got)
	}

	for _, rev := range []string{"2025-11-25", "2025-06-18"} {
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + rev + `","capabilities":{},"clientInfo":{"name":"legacy","version":"1"}}}`
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+cmdtest.BotToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		m := readMessage(t, resp, 1)
		resp.Body.Close()
		res, _ := m["result"].(map[string]any)
		if resp.Header.Get("Mcp-Session-Id") == "" || res["protocolVersion"] != rev {
			t.Errorf("a %s client's initialize: session %q, answer %v", rev, resp.Header.Get("Mcp-Session-Id"), m)
		}
	}
}
