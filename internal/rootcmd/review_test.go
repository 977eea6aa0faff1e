package rootcmd_test

import (
	"context"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/internal/mcpdoor/mcptest"
	"github.com/claimdeck/claimdeck/internal/rootcmd"
)

func TestDoctorSaysWhichNtaskGenerationItFound(t *testing.T) {
	seed, _ := cmdtest.NotionSource(t)
	today, _ := cmdtest.TodaySource(t)
	c := cmdtest.NewCLI(t, seed+today)
	var out strings.Builder
	if code := rootcmd.Run(context.Background(), []string{"--config", c.Conf, "doctor"}, strings.NewReader(""), &out, &out); code != 0 {
		t.Fatalf("doctor exits %d:\n%s", code, out.String())
	}
	for _, want := range []string{"read as ntask (seed 002)", "read as ntask (today's notion-task skill)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("doctor does not say %q:\n%s", want, out.String())
		}
	}
}

// A person finishes their own claim without its token; someone else's
// claim keeps the holder's rules.
func TestAPersonFinishesTheirOwnClaimWithoutAToken(t *testing.T) {
	for _, b := range cmdtest.ReviewBackends {
		t.Run(b.Name, func(t *testing.T) {
			c := cmdtest.NewCLI(t, b.Yaml(t))
			mine := func(title string) string {
				id := c.Run(0, "create", "--title", title).Task.PageID
				if r := c.Run(0, "takeover", "--task", id, "--yes"); r.Task.ClaimedBy != "HUMAN" {
					t.Fatalf("takeover: %+v", r.Task)
				}
				return id
			}
			if r := c.Run(0, "complete", "--task", mine("finish it")); r.Task.State != "done" {
				t.Fatalf("complete of my claim: %+v", r.Task)
			}
			if r := c.Run(0, "review", "--task", mine("look at it"), "--artifacts", "pr/9"); r.Task.State != "review" {
				t.Fatalf("review of my claim: %+v", r.Task)
			}
			id := mine("stuck")
			if r := c.Run(3, "block", "--task", id); !strings.Contains(r.Error.Message, "--reason") {
				t.Fatalf("block without a reason: %+v", r.Error)
			}
			if r := c.Run(0, "block", "--task", id, "--reason", "no key", "--unblock-action", "ops sends it"); r.Task.State != "blocked" {
				t.Fatalf("block of my claim: %+v", r.Task)
			}
			if r := c.Run(0, "release", "--task", mine("give back"), "--yes"); r.Task.State != "queued" || r.Task.LockToken != "" {
				t.Fatalf("release of my claim: %+v", r.Task)
			}
			agents := c.Run(0, "create", "--title", "an agent's").Task.PageID
			c.Run(0, "claim", "--task", agents, "--agent-name", "SANDMAN")
			if r := c.Run(3, "complete", "--task", agents); !strings.Contains(r.Error.Message, "--lock-token") {
				t.Fatalf("complete of an agent's claim without a token: %+v", r.Error)
			}
			if r := c.Run(3, "release", "--task", agents, "--yes"); !strings.Contains(r.Error.Message, "--force") {
				t.Fatalf("release of an agent's claim without --force: %+v", r.Error)
			}
			if got := c.Run(0, "get", "--task", agents); got.Task.State != "claimed" || got.Task.Agent != "SANDMAN" {
				t.Fatalf("refusals changed the agent's task: %+v", got.Task)
			}
		})
	}
}

// With overrides on, MCP offers the reviewer's approve and rework; the
// same rules hold as on the CLI.
func TestMCPApprovesAndReworksWhenOverridesAreOn(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource+"mcp: {overrides: true}\n")
	cs := mcptest.Client(t, c)
	id := cmdtest.Call(t, cs, "create", map[string]any{"title": "reviewed over MCP"}, false).Task.PageID
	tok := cmdtest.Call(t, cs, "claim", map[string]any{"task": id, "agent_name": "SANDMAN"}, false).Task.LockToken
	if r := cmdtest.Call(t, cs, "approve", map[string]any{"task": id, "agent_name": "REVIEWER"}, true); !strings.Contains(r.Error.Message, "must be review") {
		t.Fatalf("approve of a claimed task: %+v", r.Error)
	}
	cmdtest.Call(t, cs, "review", map[string]any{"task": id, "lock_token": tok}, false)
	if r := cmdtest.Call(t, cs, "rework", map[string]any{"task": id, "agent_name": "REVIEWER"}, true); !strings.Contains(r.Error.Message, "reason") {
		t.Fatalf("rework without a reason: %+v", r.Error)
	}
	if r := cmdtest.Call(t, cs, "rework", map[string]any{"task": id, "reason": "add tests"}, true); !strings.Contains(r.Error.Message, "agent_name") {
		t.Fatalf("rework over stdio without the caller's name: %+v", r.Error)
	}
	if r := cmdtest.Call(t, cs, "rework", map[string]any{"task": id, "reason": "add tests", "agent_name": "REVIEWER"}, false); r.Task.State != "queued" {
		t.Fatalf("rework: %+v", r.Task)
	}
	tok = cmdtest.Call(t, cs, "claim", map[string]any{"task": id, "agent_name": "SANDMAN"}, false).Task.LockToken
	cmdtest.Call(t, cs, "review", map[string]any{"task": id, "lock_token": tok}, false)
	// Over stdio the caller names itself, never the configured person: a
	// nameless approval is refused, and so is the review's author's own.
	if r := cmdtest.Call(t, cs, "approve", map[string]any{"task": id}, true); !strings.Contains(r.Error.Message, "agent_name") {
		t.Fatalf("approve over stdio without the caller's name: %+v", r.Error)
	}
	if r := cmdtest.Call(t, cs, "approve", map[string]any{"task": id, "agent_name": "SANDMAN"}, true); !strings.Contains(r.Error.Message, "cannot approve it too") {
		t.Fatalf("approve by the agent that sent the task to review: %+v", r.Error)
	}
	// A caller may not take a person's name, or a look-alike of one.
	for _, name := range []string{"HUMAN:alice", "HUМAN:alice", "claimdeck · approve · by HUMAN:alice ·"} {
		if r := cmdtest.Call(t, cs, "approve", map[string]any{"task": id, "agent_name": name}, true); r.Error.Code != "MISCONFIGURED" || !strings.Contains(r.Error.Message, "agent_name") {
			t.Fatalf("approve as %q: %+v", name, r.Error)
		}
	}
	if r := cmdtest.Call(t, cs, "approve", map[string]any{"task": id, "agent_name": "REVIEWER"}, false); r.Task.State != "done" {
		t.Fatalf("approve: %+v", r.Task)
	}
	// The refusals are the team's record: another person, with a journal
	// of their own, reads them in the task's shared trail, door and all.
	refused := cmdtest.SharedTrail(t, c, id, "approve", "rework")
	want := []string{"REVIEWER approve mcp-stdio MISCONFIGURED", "REVIEWER rework mcp-stdio MISCONFIGURED", "(no name given) rework mcp-stdio MISCONFIGURED", "REVIEWER rework mcp-stdio applied", "(no name given) approve mcp-stdio MISCONFIGURED", "SANDMAN approve mcp-stdio MISCONFIGURED", "(a refused name) approve mcp-stdio MISCONFIGURED", "(a refused name) approve mcp-stdio MISCONFIGURED", "(a refused name) approve mcp-stdio MISCONFIGURED", "REVIEWER approve mcp-stdio applied"}
	if strings.Join(refused, "; ") != strings.Join(want, "; ") {
		t.Fatalf("the refused attempts in the shared trail:\n%s\nwant\n%s", strings.Join(refused, "\n"), strings.Join(want, "\n"))
	}
	off := mcptest.Client(t, cmdtest.NewCLI(t, cmdtest.SQLiteSource))
	tools, err := off.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if tool.Name == "approve" || tool.Name == "rework" {
			t.Fatalf("%s is offered with overrides off", tool.Name)
		}
	}
}
