package mcpdoor_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

// Twenty agents on one host — one client address — each keep an MCP
// session over HTTP open, with its event stream, against `claimdeck mcp
// --http`, and every one of them is served. They speak 2025-11-25, the
// last revision with sessions (2026-07-28 clients hold no stream open). (The default of 16
// connections per address left the 16th agent's requests closed
// unanswered.)
func TestMCPOverHTTPServesTwentyAgentsOfOneHost(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	token := hex.EncodeToString(b)
	url := mcpProcess(t, c, token)

	ctx := context.Background()
	var sessions []*mcp.ClientSession
	defer func() {
		for _, cs := range sessions {
			cs.Close()
		}
	}()
	for i := range 20 {
		tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: withToken(token)}, MaxRetries: -1}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprintf("agent-%d", i), Version: "1"}, nil).Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatalf("agent %d of one host could not connect: %v", i+1, err)
		}
		if cs.ID() == "" {
			t.Fatalf("agent %d of one host got no session", i+1)
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
