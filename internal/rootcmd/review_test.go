package rootcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/notion"
)

// todaySource is the `sources:` entry of a notion source on the
// emulator's database set up as today's notion-task skill does.
func todaySource(t *testing.T) (string, *cmdutil.EmulatorWorkspace) {
	t.Helper()
	yaml, w := notionSource(t)
	yaml = strings.Replace(yaml, "name: team-notion", "name: skill-notion", 1)
	return strings.Replace(yaml, w.Dbs[notion.PresetNtask], w.Dbs[cmdutil.TodayDB], 1), w
}

func TestDoctorSaysWhichNtaskGenerationItFound(t *testing.T) {
	seed, _ := notionSource(t)
	today, _ := todaySource(t)
	c := newCLI(t, seed+today)
	var out strings.Builder
	if code := run(context.Background(), []string{"--config", c.conf, "doctor"}, strings.NewReader(""), &out, &out); code != 0 {
		t.Fatalf("doctor exits %d:\n%s", code, out.String())
	}
	for _, want := range []string{"read as ntask (seed 002)", "read as ntask (today's notion-task skill)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("doctor does not say %q:\n%s", want, out.String())
		}
	}
}

// reviewBackends are the contract's backends and a Notion database set up
// by today's notion-task skill.
var reviewBackends = append(contractBackends[:len(contractBackends):len(contractBackends)],
	backend{"notion-today", func(t *testing.T) string { yaml, _ := todaySource(t); return yaml }})

// The reviewer's loop from the CLI: an agent's review, rework with a
// reason, the agent's second review, approve; each refused with a clear
// message where it does not apply, and each in the audit log.
func TestTheReviewersLoopFromTheCLI(t *testing.T) {
	for _, b := range reviewBackends {
		t.Run(b.name, func(t *testing.T) {
			c := newCLI(t, b.yaml(t))
			id := c.run(0, "create", "--title", "Design VPC module").Task.PageID
			tok := c.run(0, "claim", "--task", id, "--agent-name", "SANDMAN").Task.LockToken
			// Refused before anyone is asked to confirm.
			if r := c.run(3, "approve", "--task", id); r.Error.Code != "MISCONFIGURED" || !strings.Contains(r.Error.Message, "must be review to approve (it is claimed)") {
				t.Fatalf("approve of a claimed task: %+v", r.Error)
			}
			c.run(0, "review", "--task", id, "--lock-token", tok, "--artifacts", "pr/1")
			if r := c.run(3, "rework", "--task", id, "--yes"); !strings.Contains(r.Error.Message, "a reason is required") {
				t.Fatalf("rework without a reason: %+v", r.Error)
			}
			if r := c.run(3, "rework", "--task", id, "--reason", "keep comments"); !strings.Contains(r.Error.Message, "--yes") {
				t.Fatalf("rework with no terminal to confirm on: %+v", r.Error)
			}
			back := c.run(0, "rework", "--task", id, "--reason", "keep comments", "--yes")
			if back.Task.State != "queued" || back.Task.LockToken != "" {
				t.Fatalf("after rework: %+v", back.Task)
			}
			if next := c.run(0, "next", "--agent-name", "ORACLE"); next.Task == nil || next.Task.PageID != id {
				t.Fatalf("next after rework: %+v", next.Task)
			}
			tok = c.run(0, "claim", "--task", id, "--agent-name", "ORACLE").Task.LockToken
			c.run(0, "review", "--task", id, "--lock-token", tok)
			preview := c.run(0, "approve", "--filter", "state:review", "--dry-run")
			if !preview.OK {
				t.Fatalf("approve --dry-run: %+v", preview)
			}
			if got := c.run(0, "get", "--task", id); got.Task.State != "review" {
				t.Fatalf("--dry-run changed the task: %+v", got.Task)
			}
			done := c.run(0, "approve", "--task", id, "--yes")
			if done.Task.State != "done" {
				t.Fatalf("after approve: %+v", done.Task)
			}
			log, err := os.ReadFile(filepath.Join(c.dir, "audit.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{`"action":"rework","reason":"keep comments"`, `"action":"approve"`} {
				if !strings.Contains(string(log), want) {
					t.Errorf("the audit log lacks %s:\n%s", want, log)
				}
			}
		})
	}
}

// A person finishes their own claim without its token; someone else's
// claim keeps the holder's rules.
func TestAPersonFinishesTheirOwnClaimWithoutAToken(t *testing.T) {
	for _, b := range reviewBackends {
		t.Run(b.name, func(t *testing.T) {
			c := newCLI(t, b.yaml(t))
			mine := func(title string) string {
				id := c.run(0, "create", "--title", title).Task.PageID
				if r := c.run(0, "takeover", "--task", id, "--yes"); r.Task.ClaimedBy != "HUMAN" {
					t.Fatalf("takeover: %+v", r.Task)
				}
				return id
			}
			if r := c.run(0, "complete", "--task", mine("finish it")); r.Task.State != "done" {
				t.Fatalf("complete of my claim: %+v", r.Task)
			}
			if r := c.run(0, "review", "--task", mine("look at it"), "--artifacts", "pr/9"); r.Task.State != "review" {
				t.Fatalf("review of my claim: %+v", r.Task)
			}
			id := mine("stuck")
			if r := c.run(3, "block", "--task", id); !strings.Contains(r.Error.Message, "--reason") {
				t.Fatalf("block without a reason: %+v", r.Error)
			}
			if r := c.run(0, "block", "--task", id, "--reason", "no key", "--unblock-action", "ops sends it"); r.Task.State != "blocked" {
				t.Fatalf("block of my claim: %+v", r.Task)
			}
			if r := c.run(0, "release", "--task", mine("give back"), "--yes"); r.Task.State != "queued" || r.Task.LockToken != "" {
				t.Fatalf("release of my claim: %+v", r.Task)
			}
			agents := c.run(0, "create", "--title", "an agent's").Task.PageID
			c.run(0, "claim", "--task", agents, "--agent-name", "SANDMAN")
			if r := c.run(3, "complete", "--task", agents); !strings.Contains(r.Error.Message, "--lock-token") {
				t.Fatalf("complete of an agent's claim without a token: %+v", r.Error)
			}
			if r := c.run(3, "release", "--task", agents, "--yes"); !strings.Contains(r.Error.Message, "--force") {
				t.Fatalf("release of an agent's claim without --force: %+v", r.Error)
			}
			if got := c.run(0, "get", "--task", agents); got.Task.State != "claimed" || got.Task.Agent != "SANDMAN" {
				t.Fatalf("refusals changed the agent's task: %+v", got.Task)
			}
		})
	}
}

// With overrides on, MCP offers the reviewer's approve and rework; the
// same rules hold as on the CLI.
func TestMCPApprovesAndReworksWhenOverridesAreOn(t *testing.T) {
	cs := mcpClient(t, newCLI(t, sqliteSource+"mcp: {overrides: true}\n"))
	id := call(t, cs, "create", map[string]any{"title": "reviewed over MCP"}, false).Task.PageID
	tok := call(t, cs, "claim", map[string]any{"task": id, "agent_name": "SANDMAN"}, false).Task.LockToken
	if r := call(t, cs, "approve", map[string]any{"task": id}, true); !strings.Contains(r.Error.Message, "must be review") {
		t.Fatalf("approve of a claimed task: %+v", r.Error)
	}
	call(t, cs, "review", map[string]any{"task": id, "lock_token": tok}, false)
	if r := call(t, cs, "rework", map[string]any{"task": id}, true); !strings.Contains(r.Error.Message, "reason") {
		t.Fatalf("rework without a reason: %+v", r.Error)
	}
	if r := call(t, cs, "rework", map[string]any{"task": id, "reason": "add tests"}, false); r.Task.State != "queued" {
		t.Fatalf("rework: %+v", r.Task)
	}
	tok = call(t, cs, "claim", map[string]any{"task": id, "agent_name": "SANDMAN"}, false).Task.LockToken
	call(t, cs, "review", map[string]any{"task": id, "lock_token": tok}, false)
	if r := call(t, cs, "approve", map[string]any{"task": id}, false); r.Task.State != "done" {
		t.Fatalf("approve: %+v", r.Task)
	}
	off := mcpClient(t, newCLI(t, sqliteSource))
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

// A person finishing their own claim without its token is asked as
// model.Action.Needs says: y/N at a terminal (here a tmux pane), where No
// changes nothing; a script with no terminal, like an agent's, is never
// asked and goes on as it always has.
func TestTmuxOwnFinishAsksAtATerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("tmux screens skipped in -short mode")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	if !model.ActionComplete.Needs().Confirm {
		t.Fatal("model.Action.Needs no longer asks to confirm complete: this test asks the wrong question")
	}
	bin := binary(t)
	conf, _ := lockdirConfig(t)
	run := func(want int, args ...string) result {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--config", conf}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		out, _ := cmd.Output()
		var r result
		if code := cmd.ProcessState.ExitCode(); code != want || json.Unmarshal(out, &r) != nil {
			t.Fatalf("%v: exit %d, want %d: %s", args, code, want, out)
		}
		return r
	}
	id := run(0, "create", "--title", "Design the VPC module").Task.PageID
	run(0, "takeover", "--task", id, "--yes")

	session := fmt.Sprintf("claimdeck-ownfinish-%d", os.Getpid())
	script := fmt.Sprintf("%q --config %q complete --task %q; echo EXIT=$?; sleep 60", bin, conf, id)
	if out, err := exec.Command("tmux", "new", "-d", "-s", session, "-x", "160", "-y", "20", "env", "HOME="+t.TempDir(), "sh", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("tmux new: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "kill-session", "-t", session).Run() })
	p := &tmuxPane{t: t, session: session}
	p.await("the y/N question", func(s string) bool { return strings.Contains(s, "Proceed? [y/N]") })
	p.keys("n", "Enter")
	p.await("the refusal", func(s string) bool { return strings.Contains(s, "not confirmed") && strings.Contains(s, "EXIT=3") })
	if got := run(0, "get", "--task", id).Task; got.State != "claimed" {
		t.Fatalf("after No at the terminal the task is %s, want still claimed", got.State)
	}
	if done := run(0, "complete", "--task", id).Task; done.State != "done" {
		t.Fatalf("complete with no terminal: the task is %s, want done", done.State)
	}
}
