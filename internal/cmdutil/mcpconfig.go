package cmdutil

import (
	"fmt"
	"os"
	"strings"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/mesh"
)

// MCPConfig is the `mcp:` section: what `claimdeck mcp` exposes.
type MCPConfig struct {
	// Overrides adds the operator tools (humanOps with mcp: takeover,
	// release, handoff, approve, rework, unblock, and cancel's force);
	// never in read-only mode, never to an agent_only client.
	Overrides bool `mapstructure:"overrides" json:"overrides"`
	// Clients are the remote clients of `mcp --http`, each with its own
	// bearer token; every action is recorded under the client's name.
	Clients []MCPClient `mapstructure:"clients" json:"clients,omitempty"`
}

// MCPClient is one remote client of `mcp --http`.
type MCPClient struct {
	Name string `mapstructure:"name" json:"name"`
	// TokenEnv names the environment variable holding the client's token;
	// Token holds it inline (prints as [redacted]).
	TokenEnv string     `mapstructure:"token_env" json:"token_env,omitempty"`
	Token    mesh.Token `mapstructure:"token" json:"token,omitempty"`
	// TokenFile names a file holding it, read at each start; only its
	// owner may read it.
	TokenFile string `mapstructure:"token_file" json:"token_file,omitempty"`
	// AgentOnly restricts the client to the agent tools: no overrides.
	AgentOnly bool `mapstructure:"agent_only" json:"agent_only,omitempty"`
}

// httpClients are the clients `mcp --http` serves: the configured ones,
// or, with none configured, one named "default" whose token is in
// $tokenEnv. Every token must pass mesh.Token.CheckStrength.
func (c MCPConfig) HTTPClients(tokenEnv string) ([]MCPClient, error) {
	clients := c.Clients
	if len(clients) == 0 {
		clients = []MCPClient{{Name: "default", TokenEnv: tokenEnv}}
	}
	out := make([]MCPClient, 0, len(clients))
	seen := map[string]bool{}
	for i, cl := range clients {
		cl.Name = strings.TrimSpace(cl.Name)
		where := fmt.Sprintf("mcp.clients[%d]", i)
		if cl.Name == "" {
			return nil, model.Errorf(model.CodeMisconfigured, "mcp", "", "%s has no name: every remote client needs one, its actions are recorded under it", where)
		}
		if seen[strings.ToLower(cl.Name)] {
			return nil, model.Errorf(model.CodeMisconfigured, "mcp", "", "%s: client %q is named twice", where, cl.Name)
		}
		seen[strings.ToLower(cl.Name)] = true
		from := "its token"
		if cl.TokenFile != "" {
			if cl.TokenEnv != "" || cl.Token.Set() {
				return nil, model.Errorf(model.CodeMisconfigured, "mcp", "", "%s: token_file with token or token_env: give client %q's token one way", where, cl.Name)
			}
			from = "token_file " + Expand(cl.TokenFile)
			v, err := sources.ReadSecret(where+".token_file", Expand(cl.TokenFile))
			if err != nil {
				return nil, model.Errorf(model.CodeMisconfigured, "mcp", "", "client %q: %v", cl.Name, err)
			}
			cl.Token = mesh.Token(v)
		}
		if cl.TokenEnv != "" {
			from = "$" + cl.TokenEnv
			if !cl.Token.Set() {
				cl.Token = mesh.Token(os.Getenv(cl.TokenEnv))
			}
		}
		if !cl.Token.Set() {
			return nil, model.Errorf(model.CodeMisconfigured, "mcp", "", "client %q has no bearer token: set %s (or token_env / token in mcp.clients)", cl.Name, from)
		}
		if err := cl.Token.CheckStrength(); err != nil {
			return nil, model.Errorf(model.CodeMisconfigured, "mcp", "", "client %q, %s: %v", cl.Name, from, err)
		}
		// A token is its client: two clients with one token could not be
		// told apart, and the first one's rights would go to both.
		for _, prev := range out {
			if prev.Token.Matches(cl.Token.Reveal()) {
				return nil, model.Errorf(model.CodeMisconfigured, "mcp", "", "clients %q and %q have the same bearer token: give each client a token of its own (openssl rand -hex 32)", prev.Name, cl.Name)
			}
		}
		out = append(out, cl)
	}
	return out, nil
}

// argName is a flag's name as a tool argument: snake_case.
func ArgName(flag string) string { return strings.ReplaceAll(flag, "-", "_") }
