package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Twenty agents on one host — one client address — each keep an MCP
// session over HTTP open, with its event stream, against `claimdeck mcp
// --http`, and every one of them is served. (The default of 16
// connections per address left the 16th agent's requests closed
// unanswered.)
func TestMCPOverHTTPServesTwentyAgentsOfOneHost(t *testing.T) {
	c := newCLI(t, sqliteSource)
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	token := hex.EncodeToString(b)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperClaimdeck$")
	cmd.Env = append(os.Environ(), "CLAIMDECK_MCP_TOKEN="+token, "CLAIMDECK_HELPER_ARGS=--config\x1f"+c.conf+"\x1fmcp\x1f--http\x1f"+addr)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	url := "http://" + addr
	for i := 0; ; i++ { // until the server answers (401: no token)
		res, err := http.Post(url, "application/json", strings.NewReader("{}"))
		if err == nil {
			res.Body.Close()
			break
		}
		if i == 300 {
			t.Fatalf("claimdeck mcp --http %s never answered: %v; stderr: %s", addr, err, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	ctx := context.Background()
	var sessions []*mcp.ClientSession
	defer func() {
		for _, cs := range sessions {
			cs.Close()
		}
	}()
	for i := range 20 {
		tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: withToken(token)}, MaxRetries: -1}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprintf("agent-%d", i), Version: "1"}, nil).Connect(ctx, tr, nil)
		if err != nil {
			t.Fatalf("agent %d of one host could not connect: %v", i+1, err)
		}
		sessions = append(sessions, cs)
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatalf("agent %d of one host could not list the tools: %v", i+1, err)
		}
	}
}

// withToken sends every request with the bearer token.
type withToken string

func (w withToken) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(w))
	return http.DefaultTransport.RoundTrip(r)
}
