package cli_test

import (
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

// No door lets an agent name itself as a person, as a remote client, or
// with invisible characters, on any backend: lock directories and today's
// Notion skill layout accepted HUMAN:alice before.
func TestAnAgentCannotNameItselfAPersonOnAnyBackend(t *testing.T) {
	for _, b := range cmdtest.ReviewBackends {
		t.Run(b.Name, func(t *testing.T) {
			c := cmdtest.NewCLI(t, b.Yaml(t))
			id := c.Run(0, "create", "--title", "free").Task.PageID
			for name, want := range map[string]string{"HUMAN:alice": "HUMAN:", "oncall@mcp-http": "@mcp-http", "SAND\u200bMAN": "U+200B"} {
				if r := c.Run(3, "claim", "--task", id, "--agent-name", name); !strings.Contains(r.Error.Message, want) {
					t.Fatalf("claim as %q: %+v", name, r.Error)
				}
				if r := c.Run(3, "comment", "--task", id, "--agent-name", name, "--body", "hi"); !strings.Contains(r.Error.Message, want) {
					t.Fatalf("comment as %q: %+v", name, r.Error)
				}
			}
			if got := c.Run(0, "get", "--task", id).Task; got.State != "queued" || got.Agent != "" {
				t.Fatalf("the refusals changed the task: %+v", got)
			}
		})
	}
}
