package cmdtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// ntaskIn runs one ntask command line in-process with HOME and the
// configuration of c, and returns its JSON and exit status.
func NtaskIn(t *testing.T, c *CLI, home string, args ...string) (map[string]any, int) {
	t.Helper()
	t.Setenv("HOME", home)
	t.Setenv("CLAIMDECK_CONFIG", c.Conf)
	var out, errOut bytes.Buffer
	code := Program(t.Context(), append([]string{"ntask"}, args...), strings.NewReader(""), &out, &errOut)
	var v map[string]any
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("ntask %v: stdout is not one JSON document: %v\n%s%s", args, err, out.String(), errOut.String())
	}
	return v, code
}

// commandsJSON is the part of commands.json at 75590fd the examples test reads.
type CommandsJSON struct {
	Commands []struct {
		Name     string `json:"name"`
		Examples []struct {
			Command  string         `json:"command"`
			Output   map[string]any `json:"example_output"`
			ExitCode int            `json:"exit_code"`
		} `json:"examples"`
	} `json:"commands"`
}

// examplePrep is what each command's example needs TASK-42 to be first.
var ExamplePrep = map[string][][]string{
	"heartbeat": {{"claim", "TASK-42"}},
	"block":     {{"claim", "TASK-42"}},
	"cancel":    {{"claim", "TASK-42"}},
	"get":       {{"claim", "TASK-42"}},
	"list":      {{"claim", "TASK-42"}},
	"review":    {{"claim", "TASK-42"}},
	"approve":   {{"claim", "TASK-42"}, {"review", "TASK-42", "--summary", "done"}},
	"rework":    {{"claim", "TASK-42"}, {"review", "TASK-42", "--summary", "done"}},
}

// matchExample checks that got has every field of want, with want's value
// where exampleValues says so.
func MatchV1Example(t *testing.T, name, command, path string, want, got any) {
	t.Helper()
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			t.Fatalf("%s: %s is %T, want an object like %v", command, path, got, w)
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				t.Fatalf("%s: %s.%s is missing: %v", command, path, k, got)
			}
			if d, ok := exampleDiffers[name][k]; ok {
				if d != nil && gv != d {
					t.Fatalf("%s: %s.%s is %v, want claimdeck's %v", command, path, k, gv, d)
				}
				continue
			}
			if !exampleValues[k] {
				if _, nested := wv.(map[string]any); !nested {
					if _, list := wv.([]any); !list {
						continue
					}
				}
			}
			MatchV1Example(t, name, command, path+"."+k, wv, gv)
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) < len(w) {
			t.Fatalf("%s: %s is %v, want at least %d entries", command, path, got, len(w))
		}
		for i := range w {
			MatchV1Example(t, name, command, fmt.Sprintf("%s[%d]", path, i), w[i], g[i])
		}
	default:
		if fmt.Sprint(want) != fmt.Sprint(got) {
			t.Fatalf("%s: %s is %v, want %v", command, path, got, want)
		}
	}
}

// exampleValues are the fields whose example value an answer must repeat;
// page ids, versions and times are the backend's own.
var exampleValues = map[string]bool{"ok": true, "status": true, "task_id": true, "priority": true, "found": true, "db_accessible": true}

// exampleDiffers are the values where claimdeck answers otherwise on
// purpose, each with the file it follows (docs/agents.md, "Agents on today's skill").
var exampleDiffers = map[string]map[string]any{
	// The backend names the new task.
	"create": {"task_id": nil},
	// Rework.swift (0.4.1, the commit itself) moves to Ready; commands.json
	// still says In Progress.
	"rework": {"status": "Ready"},
}
