package mesh

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/claimdeck/claimdeck/model"
)

// seedRegistry is seed 001's own example, plus the token fields claimdeck adds.
const seedRegistry = `{
  "nodes": {
    "SANDMAN": {
      "webhook": "http://100.112.130.22:18789/hooks/agent",
      "health": "http://100.112.130.22:18789/hooks/health",
      "last_seen": "2026-02-01T02:18:00Z",
      "status": "healthy",
      "token": "sandman-SECRET-1"
    },
    "ORACLE": {
      "webhook": "http://100.113.222.30:18789/hooks/agent",
      "health": "http://100.113.222.30:18789/hooks/health",
      "last_seen": "2026-02-01T02:17:00Z",
      "status": "healthy",
      "token_env": "ORACLE_HOOK_TOKEN",
      "owner": "Alex"
    }
  },
  "updated_by": "node-registry.js"
}
`

func writeRegistry(t *testing.T, body string, mode os.FileMode) string {
	path := filepath.Join(t.TempDir(), "mesh-nodes.json")
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // umask may have narrowed it
		t.Fatal(err)
	}
	return path
}

func TestLoadSeedRegistry(t *testing.T) {
	t.Setenv("ORACLE_HOOK_TOKEN", "oracle-SECRET-2")
	reg, warns, err := LoadRegistry(writeRegistry(t, seedRegistry, 0o600))
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 0 {
		t.Errorf("warnings on a private file: %v", warns)
	}
	if len(reg.Nodes) != 2 || reg.Nodes[0].Name != "ORACLE" || reg.Nodes[1].Name != "SANDMAN" {
		t.Fatalf("nodes = %+v", reg.Nodes)
	}
	o, ok := reg.Node("oracle")
	if !ok || o.Token.Reveal() != "oracle-SECRET-2" || o.TokenEnv != "ORACLE_HOOK_TOKEN" {
		t.Errorf("ORACLE's token was not read from its env var")
	}
	s, _ := reg.Node("SANDMAN")
	if s.Token.Reveal() != "sandman-SECRET-1" || s.Status != model.NodeHealthy ||
		!s.LastSeen.Equal(time.Date(2026, 2, 1, 2, 18, 0, 0, time.UTC)) || s.Webhook != "http://100.112.130.22:18789/hooks/agent" {
		t.Errorf("SANDMAN = %+v", s)
	}

	// Every way of printing the registry keeps the tokens out.
	js, _ := json.Marshal(reg)
	out := strings.Join([]string{
		fmt.Sprint(reg.Nodes), fmt.Sprintf("%+v", reg.Nodes), fmt.Sprintf("%#v", reg.Nodes),
		fmt.Sprintf("%s %q %x %d %10.3s", s.Token, s.Token, s.Token, s.Token, s.Token), string(js),
	}, "\n")
	if strings.Contains(out, "SECRET") {
		t.Errorf("a token leaked:\n%s", out)
	}
	if !strings.Contains(out, "[redacted]") {
		t.Errorf("tokens not shown as redacted:\n%s", out)
	}
}

func TestRegistryWarnings(t *testing.T) {
	t.Setenv("ORACLE_HOOK_TOKEN", "")
	_, warns, err := LoadRegistry(writeRegistry(t, seedRegistry, 0o644))
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(warns)
	for _, want := range []string{"readable by group or others (mode 0644)", "node ORACLE: token_env ORACLE_HOOK_TOKEN is unset"} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings %s lack %q", got, want)
		}
	}
	// Tokens only by reference: nothing secret in the file, no mode warning.
	envOnly := `{"nodes": {"A": {"health": "http://127.0.0.1:1/hooks/health", "token_env": "A_TOKEN"}}}`
	t.Setenv("A_TOKEN", "x")
	if _, warns, _ := LoadRegistry(writeRegistry(t, envOnly, 0o644)); len(warns) != 0 {
		t.Errorf("warnings for a file without tokens: %v", warns)
	}
}

func TestMalformedRegistry(t *testing.T) {
	cases := []struct{ body, want string }{
		{"", "r.json:1:1: invalid JSON: unexpected end of JSON input"},
		{"[]", "r.json:1:1: the registry must be a JSON object"},
		{`{"version": 1}`, `r.json:1:1: nodes: missing: the registry needs a "nodes" object`},
		{"{\n \"nodes\": []\n}", "r.json:2:11: nodes: must be an object of node name → node"},
		{"{\"nodes\": {\n \"A\": {\n  \"health\": \"http://h/hooks/health\",\n  \"token\": 42\n }}}", "r.json:4:3: nodes.A.token: want a string, got number"},
		{"{\"nodes\": {\n \"A\": {\n  \"health\": \"ftp://h/x\"\n }}}", "r.json:3:3: nodes.A.health: want an absolute http or https URL"},
		{"{\"nodes\": {\n \"A\": {\n  \"health\": \"http://u:pw@h/x\"\n }}}", "r.json:3:3: nodes.A.health: credentials in a URL are not allowed"},
		{"{\"nodes\": {\n \"A\": {\"webhook\": \"http://h/a\"}\n}}", "r.json:2:2: nodes.A.health: missing"},
		{"{\"nodes\": {\n \"A\": {\n  \"health\": \"http://h/h\",\n  \"last_seen\": \"yesterday\"\n }}}", "r.json:4:3: nodes.A.last_seen: not an RFC 3339 time"},
		{"{\"nodes\": {\n \"A\": {\"health\": \"http://h/h\"},\n \"a\": {\"health\": \"http://h/h\"}\n}}", "r.json:3:2: nodes.a: duplicate node"},
		{"{\"nodes\": {\n \"A\": {\"health\": \"http://h/h\", \"token\": \"T0P\", \"token_env\": \"X\"}\n}}", "r.json:2:2: nodes.A: token and token_env are both set"},
		{"{\"nodes\": {\n \"A\": {\n  \"health\": \"http://h/h\",\n  \"token\": \"T0P-SECRET\n }}}", "r.json:4:23: nodes.A.token: invalid JSON"},
		{"{\"nodes\": {\n \"A\": {\n  \"health\": \"http://h/h\",\n  \"x\": [1,\n }}}", "r.json:5:2: nodes.A.x: invalid JSON"},
		{"{\"nodes\": {\"A\\u001b[2J\": {\"health\": \"http://h/h\"}}}", "r.json:1:12: nodes: a node name holds control characters"},
		{`{"nodes": {"A\"B\\": {"webhook": "http://h/a"}}}`, `r.json:1:12: nodes.A"B\.health: missing`},
		{"{\"nodes\": {},\n \"nodes\": {}}", `r.json:2:2: nodes: duplicate`},
		{`{"nodes": {}} {}`, "r.json:1:15: data after the registry object"},
	}
	for _, c := range cases {
		_, err := ParseRegistry("r.json", []byte(c.body))
		var re *RegistryError
		if !errors.As(err, &re) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %s", c.body, err, c.want)
			continue
		}
		if strings.Contains(err.Error(), "T0P") {
			t.Errorf("error leaks a token: %v", err)
		}
	}
}

func FuzzParseRegistry(f *testing.F) {
	f.Add([]byte(seedRegistry))
	f.Add([]byte(`{"nodes": {"A": {"health": "http://h/h", "status": null, "last_seen": null}}}`))
	f.Add([]byte(`{"nodes": {"A\u0000": {"health": "https://[::1]:1/h", "x": {"y": [1, "2", null]}}}}`))
	f.Add([]byte("{\"nodes\": {\"A\": {\"health\": 1}}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		reg, err := ParseRegistry("f.json", data)
		if err != nil {
			var re *RegistryError
			if !errors.As(err, &re) || re.Line < 1 || re.Col < 1 {
				t.Fatalf("error without a position: %v", err)
			}
			return
		}
		for _, n := range reg.Nodes {
			if n.Health == "" || strings.TrimSpace(n.Name) == "" || strings.ContainsFunc(n.Name, unicode.IsControl) {
				t.Fatalf("accepted node %+v", n)
			}
		}
	})
}
