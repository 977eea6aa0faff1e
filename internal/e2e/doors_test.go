package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/internal/ntask"
)

// doorRig is one queue behind every door, each a real process of the
// built binary: the claimdeck command line, ntask, `claimdeck mcp` on
// stdio, and `claimdeck mcp --http` on loopback with an agent_only client
// (ci-bot) and a full one (oncall).
type doorRig struct {
	t   *testing.T
	c   *cmdtest.CLI
	bin string
	env []string
	url string
}

func newDoorRig(t *testing.T, sourcesYAML, extra string) *doorRig {
	t.Helper()
	c := cmdtest.NewCLI(t, sourcesYAML+`mcp:
  overrides: true
  clients:
    - {name: ci-bot, token_env: CD_TEST_BOT_TOKEN, agent_only: true}
    - {name: oncall, token_env: CD_TEST_ONCALL_TOKEN}
`+extra)
	bin := filepath.Join(binaries(t), "claimdeck")
	env := append(agentEnv(t, c, t.TempDir()), "CD_TEST_BOT_TOKEN="+cmdtest.BotToken, "CD_TEST_ONCALL_TOKEN="+cmdtest.OncallToken)
	return &doorRig{t: t, c: c, bin: bin, env: env}
}

// claimdeck runs the binary and decodes its JSON.
func (r *doorRig) claimdeck(wantExit int, args ...string) cmdtest.Result {
	r.t.Helper()
	cmd := exec.Command(r.bin, append([]string{"--config", r.c.Conf}, args...)...)
	cmd.Env = r.env
	out, code := r.exit(cmd)
	var res cmdtest.Result
	if jerr := json.Unmarshal(out, &res); jerr != nil || code != wantExit {
		r.t.Fatalf("claimdeck %v exited %d (want %d): %s", args, code, wantExit, out)
	}
	return res
}

// exit runs cmd and returns its stdout (with stderr after it when it is
// not JSON) and exit status.
func (r *doorRig) exit(cmd *exec.Cmd) ([]byte, int) {
	r.t.Helper()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		r.t.Fatal(err)
	}
	if !json.Valid(out.Bytes()) {
		out.Write(errOut.Bytes())
	}
	return out.Bytes(), code
}

// claimdeckAny is claimdeck with the exit status written to *code, any
// exit allowed.
func (r *doorRig) claimdeckAny(code *int, args ...string) cmdtest.Result {
	r.t.Helper()
	cmd := exec.Command(r.bin, append([]string{"--config", r.c.Conf}, args...)...)
	cmd.Env = r.env
	out, c := r.exit(cmd)
	*code = c
	var res cmdtest.Result
	if err := json.Unmarshal(out, &res); err != nil {
		r.t.Fatalf("claimdeck %v: not JSON: %s", args, out)
	}
	return res
}

// ntaskAs runs ntask as the agent named agent (NOTION_AGENT_USER_ID).
func (r *doorRig) ntaskAs(agent, home string, args ...string) (map[string]any, int) {
	saved := r.env
	r.env = append(slicesWithout(r.env, ntask.EnvNotionAgent+"="), ntask.EnvNotionAgent+"="+agent)
	defer func() { r.env = saved }()
	return r.ntask(home, args...)
}

// ntask runs the binary as ntask with home as HOME.
func (r *doorRig) ntask(home string, args ...string) (map[string]any, int) {
	r.t.Helper()
	cmd := exec.Command(filepath.Join(filepath.Dir(r.bin), ntask.Name), args...)
	cmd.Env = append(slicesWithout(r.env, "HOME="), "HOME="+home)
	out, code := r.exit(cmd)
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		r.t.Fatalf("ntask %v: not JSON: %s", args, out)
	}
	return v, code
}

func slicesWithout(env []string, prefix string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, prefix) {
			out = append(out, kv)
		}
	}
	return out
}

// stdio connects to `claimdeck mcp` as a subprocess on its stdin and stdout.
func (r *doorRig) stdio() *mcp.ClientSession {
	r.t.Helper()
	cmd := exec.Command(r.bin, "--config", r.c.Conf, "mcp")
	cmd.Env = r.env
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-agent", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { cs.Close() })
	return cs
}

// http connects with token to `claimdeck mcp --http`, started once.
func (r *doorRig) http(token string) *mcp.ClientSession {
	r.t.Helper()
	if r.url == "" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			r.t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		cmd := exec.Command(r.bin, "--config", r.c.Conf, "mcp", "--http", addr)
		cmd.Env = r.env
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		if err := cmd.Start(); err != nil {
			r.t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		r.t.Cleanup(func() { _ = cmd.Process.Signal(os.Interrupt); <-exited })
		// Ready when it accepts a connection, or failed when it exits.
		for {
			select {
			case <-exited:
				r.t.Fatalf("mcp --http %s exited: %s", addr, errOut.String())
			default:
			}
			if conn, err := net.Dial("tcp", addr); err == nil {
				conn.Close()
				break
			}
		}
		r.url = "http://" + addr
	}
	tr := &mcp.StreamableClientTransport{Endpoint: r.url, HTTPClient: &http.Client{Transport: cmdtest.Bearer{Token: token}}, MaxRetries: -1, DisableStandaloneSSE: true}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "remote", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { cs.Close() })
	return cs
}

func jsonUnmarshal(text string, v any) error { return json.Unmarshal([]byte(text), v) }

// audit is the audit log's records.
func (r *doorRig) audit() []map[string]any {
	r.t.Helper()
	b, err := os.ReadFile(filepath.Join(r.c.Dir, "audit.jsonl"))
	if err != nil && !os.IsNotExist(err) {
		r.t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			r.t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// After alice takes a task over at the command line, no MCP client — on
// stdio, agent-only or full over HTTP — finishes her claim without its
// token: each complete, block and review is refused, the task is still
// hers, and the audit log records no finish. Alice herself still can.
func TestAnMCPCallerCannotFinishAPersonsTakeover(t *testing.T) {
	r := newDoorRig(t, cmdtest.SQLiteSource, "")
	id := r.claimdeck(0, "create", "--title", "alice's now").Task.PageID
	r.claimdeck(0, "takeover", "--task", id, "--yes")
	doors := map[string]*mcp.ClientSession{"stdio": r.stdio(), "http agent_only": r.http(cmdtest.BotToken), "http full": r.http(cmdtest.OncallToken)}
	for door, cs := range doors {
		for _, tool := range []string{"complete", "review", "block"} {
			args := map[string]any{"task": id}
			if tool == "block" {
				args["reason"] = "waiting"
			}
			res := cmdtest.Call(t, cs, tool, args, true)
			if res.Error.Code != "MISCONFIGURED" || !strings.Contains(res.Error.Message, "lock_token") || strings.Contains(res.Error.Message, "--") {
				t.Errorf("%s %s of alice's takeover without a token: %+v", door, tool, res.Error)
			}
		}
	}
	if got := r.claimdeck(0, "get", "--task", id).Task; got.State != "claimed" || got.Agent != "HUMAN:alice" {
		t.Fatalf("the refusals changed alice's task: %+v", got)
	}
	for _, rec := range r.audit() {
		if rec["action"] != "takeover" {
			t.Fatalf("the audit log records %v after the refusals", rec)
		}
	}
	if got := r.claimdeck(0, "complete", "--task", id).Task; got.State != "done" {
		t.Fatalf("alice's own complete: %+v", got)
	}
}
