package cmdtest

import (
	"net/http"
)

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// call calls a tool and returns its result decoded as the CLI's JSON.
func Call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, wantErr bool) Result {
	t.Helper()
	r, _ := CallText(t, cs, tool, args, wantErr)
	return r
}

// bearer adds an Authorization header to every request.
type Bearer struct{ Token string }

const (
	BotToken    = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	OncallToken = "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752"
)

// callText is call with the result's text as well.
func CallText(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, wantErr bool) (Result, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: a protocol error where a tool result was due: %v", tool, err)
	}
	if res.IsError != wantErr {
		t.Fatalf("%s %v: isError %v, want %v: %+v", tool, args, res.IsError, wantErr, res.Content)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	structured, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var r, s Result
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		t.Fatalf("%s: the text is not the CLI's JSON: %v\n%s", tool, err, text)
	}
	if err := json.Unmarshal(structured, &s); err != nil || !jsonEqual(t, text, string(structured)) {
		t.Fatalf("%s: structured content and text differ:\n%s\n%s", tool, structured, text)
	}
	return r, text
}

func jsonEqual(t *testing.T, a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

func (b Bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.Token)
	return http.DefaultTransport.RoundTrip(r)
}
