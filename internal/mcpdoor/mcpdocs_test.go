package mcpdoor_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/internal/mcpdoor/mcptest"
)

// Every tool, the operator tools included, as a client lists it: every
// argument described, annotations given, an output schema; and the
// structured content of every answer of a lease cycle — a CONFLICT and a
// LOST_LOCK among them — valid against its tool's listed schema.
func TestMCPToolsAreDocumentedAndAnswerAsTheirSchemas(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource+"mcp: {overrides: true}\n")
	cs := mcptest.Client(t, c)
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*jsonschema.Resolved{}
	args := 0
	for _, tool := range list.Tools {
		var in struct {
			Properties map[string]struct {
				Description string `json:"description"`
			} `json:"properties"`
		}
		b, _ := json.Marshal(tool.InputSchema)
		if err := json.Unmarshal(b, &in); err != nil {
			t.Fatal(err)
		}
		for name, p := range in.Properties {
			args++
			if p.Description == "" {
				t.Errorf("%s: argument %s has no description", tool.Name, name)
			}
		}
		if a := tool.Annotations; a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil {
			t.Errorf("%s: annotations %+v, want readOnlyHint, destructiveHint, idempotentHint and openWorldHint", tool.Name, a)
		} else if a.ReadOnlyHint && *a.DestructiveHint {
			t.Errorf("%s: read-only and destructive", tool.Name)
		}
		var s jsonschema.Schema
		b, _ = json.Marshal(tool.OutputSchema)
		if err := json.Unmarshal(b, &s); err != nil || tool.OutputSchema == nil {
			t.Fatalf("%s: output schema %s: %v", tool.Name, b, err)
		}
		r, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: output schema: %v", tool.Name, err)
		}
		schemas[tool.Name] = r
	}
	if len(list.Tools) < 18 || args < 56+15 {
		t.Errorf("%d tools with %d arguments read, want 18 with 71 (56 of the agent tools) at least", len(list.Tools), args)
	}

	answer := func(tool string, in map[string]any, wantErr bool) map[string]any {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: in})
		if err != nil || res.IsError != wantErr {
			t.Fatalf("%s %v: %v, isError %v", tool, in, err, res != nil && res.IsError)
		}
		var sc map[string]any
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &sc); err != nil {
			t.Fatal(err)
		}
		if err := schemas[tool].Validate(sc); err != nil {
			t.Errorf("%s: the answer does not match the tool's output schema: %v\n%s", tool, err, b)
		}
		return sc
	}
	task := func(sc map[string]any) map[string]any { m, _ := sc["task"].(map[string]any); return m }
	answer("next", map[string]any{"agent_name": "A"}, false)
	id := task(answer("create", map[string]any{"title": "Rotate keys", "priority": "high", "class": "EXPEDITE"}, false))["page_id"]
	answer("list", map[string]any{}, false)
	tok := task(answer("claim", map[string]any{"task": id, "agent_name": "A", "run_id": "r1"}, false))["lock_token"]
	answer("claim", map[string]any{"task": id, "agent_name": "B"}, true)
	answer("heartbeat", map[string]any{"task": id, "lock_token": tok}, false)
	answer("comment", map[string]any{"task": id, "body": "halfway"}, false)
	answer("get", map[string]any{"task": id}, false)
	answer("review", map[string]any{"task": id, "lock_token": tok, "artifacts": "PR #3"}, false)
	answer("complete", map[string]any{"task": id, "lock_token": tok}, true)
	answer("approve", map[string]any{"task": id, "agent_name": "R"}, false)
	answer("list", map[string]any{"status": "DONE"}, false)
}
