package cmdutil_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
)

// An MCP client's token in token_file is read while only its owner may
// read the file, and refused otherwise naming the file and chmod 600.
func TestMCPClientTokenFile(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	file := filepath.Join(t.TempDir(), "ci-token")
	if err := os.WriteFile(file, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mcp := cmdutil.MCPConfig{Clients: []cmdutil.MCPClient{{Name: "ci", TokenFile: file}}}
	got, err := mcp.HTTPClients("")
	if err != nil || len(got) != 1 || string(got[0].Token) != token {
		t.Fatalf("token_file 0600: %v, %d clients", err, len(got))
	}
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = mcp.HTTPClients("")
	if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "chmod 600") || strings.Contains(err.Error(), token) {
		t.Fatalf("token_file 0644: %v, want refused naming %s and chmod 600", err, file)
	}
	mcp.Clients[0].TokenEnv = "CI_TOKEN"
	if _, err := mcp.HTTPClients(""); err == nil || !strings.Contains(err.Error(), "one way") {
		t.Fatalf("token_file and token_env: %v, want refused", err)
	}
}
