package rootcmd

import (
	"strings"
	"testing"
)

// No door lets an agent name itself as a person, as a remote client, or
// with invisible characters, on any backend: lock directories and today's
// Notion skill layout accepted HUMAN:alice before.
func TestAnAgentCannotNameItselfAPersonOnAnyBackend(t *testing.T) {
	for _, b := range reviewBackends {
		t.Run(b.name, func(t *testing.T) {
			c := newCLI(t, b.yaml(t))
			id := c.run(0, "create", "--title", "free").Task.PageID
			for name, want := range map[string]string{"HUMAN:alice": "HUMAN:", "oncall@mcp-http": "@mcp-http", "SAND\u200bMAN": "U+200B"} {
				if r := c.run(3, "claim", "--task", id, "--agent-name", name); !strings.Contains(r.Error.Message, want) {
					t.Fatalf("claim as %q: %+v", name, r.Error)
				}
				if r := c.run(3, "comment", "--task", id, "--agent-name", name, "--body", "hi"); !strings.Contains(r.Error.Message, want) {
					t.Fatalf("comment as %q: %+v", name, r.Error)
				}
			}
			if got := c.run(0, "get", "--task", id).Task; got.State != "queued" || got.Agent != "" {
				t.Fatalf("the refusals changed the task: %+v", got)
			}
		})
	}
}
