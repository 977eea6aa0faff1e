package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Twenty agents on one host — one client address — each keep an MCP
// session over HTTP open, with its event stream, and every one of them is
// served. (The default of 16 connections per address left the 17th
// agent's requests closed unanswered.)
func TestMCPOverHTTPServesTwentyAgentsOfOneHost(t *testing.T) {
	c := newCLI(t, sqliteSource)
	cfg, err := loadConfig(c.conf)
	if err != nil {
		t.Fatal(err)
	}
	a := &app{cfg: cfg, stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveMCP(ctx, ln, a.mcpServer(), "0123456789abcdef-secret") }()
	defer func() { cancel(); <-done }()
	url := "http://" + ln.Addr().String()

	var sessions []*mcp.ClientSession
	defer func() {
		for _, cs := range sessions {
			cs.Close()
		}
	}()
	for i := range 20 {
		// Each agent its own HTTP client: its own connections, as separate processes have.
		hc := &http.Client{Transport: bearer{"0123456789abcdef-secret"}}
		tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}
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
