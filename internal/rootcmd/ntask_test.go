package rootcmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/internal/ntask"
	"github.com/claimdeck/claimdeck/model"
)

// agentEnv is the environment of an agent process on c's configuration:
// PATH with ntask first, its own HOME, no Notion variables of the machine.
func agentEnv(t *testing.T, c *cli, home string) []string {
	env := []string{"PATH=" + binaries(t) + ":" + os.Getenv("PATH"), "HOME=" + home, "CLAIMDECK_CONFIG=" + c.conf}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "CLAIMDECK_TEST_PG_DSN=") || strings.HasPrefix(kv, "TMPDIR=") {
			env = append(env, kv)
		}
	}
	return env
}

// TestNtaskWorkflowScript runs an agent script written from workflow.md's
// lifecycle, unchanged, through a binary named ntask, on every backend and
// on a Notion database set up by today's skill.
func TestNtaskWorkflowScript(t *testing.T) {
	script, err := filepath.Abs("testdata/ntask-agent/workflow.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range reviewBackends {
		t.Run(b.name, func(t *testing.T) {
			c := newCLI(t, b.yaml(t))
			cmd := exec.Command("bash", script)
			cmd.Env = append(agentEnv(t, c, t.TempDir()), "HOME_B="+t.TempDir(), "CLAIMDECK="+filepath.Join(binaries(t), "claimdeck"))
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			if err := cmd.Run(); err != nil {
				t.Fatalf("the workflow agent failed: %v\n%s%s", err, out.String(), errOut.String())
			}
			if !strings.Contains(out.String(), "workflow ok") {
				t.Fatalf("the workflow agent did not finish: %s%s", out.String(), errOut.String())
			}
		})
	}
}

// ntaskIn runs one ntask command line in-process with HOME and the
// configuration of c, and returns its JSON and exit status.
func ntaskIn(t *testing.T, c *cli, home string, args ...string) (map[string]any, int) {
	t.Helper()
	t.Setenv("HOME", home)
	t.Setenv("CLAIMDECK_CONFIG", c.conf)
	var out, errOut bytes.Buffer
	code := run(t.Context(), append([]string{ntask.NtaskName}, args...), strings.NewReader(""), &out, &errOut)
	var v map[string]any
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("ntask %v: stdout is not one JSON document: %v\n%s%s", args, err, out.String(), errOut.String())
	}
	return v, code
}

// commandsJSON is the part of commands.json at 75590fd the examples test reads.
type commandsJSON struct {
	Commands []struct {
		Name     string `json:"name"`
		Examples []struct {
			Command  string         `json:"command"`
			Output   map[string]any `json:"example_output"`
			ExitCode int            `json:"exit_code"`
		} `json:"examples"`
	} `json:"commands"`
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

// examplePrep is what each command's example needs TASK-42 to be first.
var examplePrep = map[string][][]string{
	"heartbeat": {{"claim", "TASK-42"}},
	"block":     {{"claim", "TASK-42"}},
	"cancel":    {{"claim", "TASK-42"}},
	"get":       {{"claim", "TASK-42"}},
	"list":      {{"claim", "TASK-42"}},
	"review":    {{"claim", "TASK-42"}},
	"approve":   {{"claim", "TASK-42"}, {"review", "TASK-42", "--summary", "done"}},
	"rework":    {{"claim", "TASK-42"}, {"review", "TASK-42", "--summary", "done"}},
}

// TestNtaskCommandsJSONExamples runs every example of commands.json at
// 75590fd through a binary named ntask, as a shell runs the command line,
// on a lock directory whose queue holds TASK-42, and checks the exit code
// and every field of the example output.
func TestNtaskCommandsJSONExamples(t *testing.T) {
	raw, err := os.ReadFile("testdata/ntask-v1/commands.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc commandsJSON
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range doc.Commands {
		for _, ex := range c.Examples {
			n++
			t.Run(c.Name, func(t *testing.T) {
				cl := newCLI(t, "  - name: local\n    kind: lockdir\n    path: DIR/.locks\n")
				tasks := `[{"id": "TASK-42", "title": "Fix login bug", "priority": 1}]`
				if err := os.WriteFile(filepath.Join(cl.dir, ".locks", "tasks.json"), []byte(tasks), 0o600); err != nil {
					t.Fatal(err)
				}
				home := t.TempDir()
				// The work is somebody else's than the reviewer's, who may
				// not approve a review they sent (review.self_approve).
				t.Setenv(ntask.EnvNotionAgent, "worker-1")
				for _, step := range examplePrep[c.Name] {
					if _, code := ntaskIn(t, cl, home, step...); code != 0 {
						t.Fatalf("preparing %s: ntask %v exited %d", c.Name, step, code)
					}
				}
				cmd := exec.Command("bash", "-c", ex.Command)
				cmd.Env = agentEnv(t, cl, home)
				var out, errOut bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errOut
				err := cmd.Run()
				code := cmd.ProcessState.ExitCode()
				if code != ex.ExitCode {
					t.Fatalf("%s exited %d (%v), want %d: %s%s", ex.Command, code, err, ex.ExitCode, out.String(), errOut.String())
				}
				var got map[string]any
				if err := json.Unmarshal(out.Bytes(), &got); err != nil {
					t.Fatalf("%s: stdout is not JSON: %v\n%s", ex.Command, err, out.String())
				}
				matchV1Example(t, c.Name, ex.Command, "", ex.Output, got)
			})
		}
	}
	if n != 15 {
		t.Fatalf("commands.json has %d examples, want the 15 of 75590fd", n)
	}
}

// matchExample checks that got has every field of want, with want's value
// where exampleValues says so.
func matchV1Example(t *testing.T, name, command, path string, want, got any) {
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
			matchV1Example(t, name, command, path+"."+k, wv, gv)
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) < len(w) {
			t.Fatalf("%s: %s is %v, want at least %d entries", command, path, got, len(w))
		}
		for i := range w {
			matchV1Example(t, name, command, fmt.Sprintf("%s[%d]", path, i), w[i], g[i])
		}
	default:
		if fmt.Sprint(want) != fmt.Sprint(got) {
			t.Fatalf("%s: %s is %v, want %v", command, path, got, want)
		}
	}
}

// TestMixedGenerationDrain: two agents of the older generation (flags,
// exit 2-5) and two on today's skill (positional ids, 10-41), each a real
// process, drain one queue together: every task is claimed exactly once.
func TestMixedGenerationDrain(t *testing.T) {
	const tasks = 40
	for _, b := range contractBackends {
		if b.name == "notion" {
			continue // Notion cannot promise zero double claims (Caps.AtomicClaim); its kit measures them
		}
		t.Run(b.name, func(t *testing.T) {
			c := newCLI(t, b.yaml(t))
			want := map[string]bool{}
			for i := range tasks {
				want[c.run(0, "create", "--title", fmt.Sprintf("task %d", i), "--priority", fmt.Sprint(i%4)).Task.PageID] = true
			}
			type agent struct {
				script, arg string
				out         bytes.Buffer
				errOut      bytes.Buffer
				cmd         *exec.Cmd
			}
			agents := []*agent{{script: "old-agent.sh", arg: "OLD-1"}, {script: "new-agent.sh"}, {script: "old-agent.sh", arg: "OLD-2"}, {script: "new-agent.sh"}}
			for _, a := range agents {
				script, err := filepath.Abs(filepath.Join("testdata/ntask-agent", a.script))
				if err != nil {
					t.Fatal(err)
				}
				a.cmd = exec.Command("bash", script, a.arg)
				a.cmd.Env = agentEnv(t, c, t.TempDir())
				a.cmd.Stdout, a.cmd.Stderr = &a.out, &a.errOut
				if err := a.cmd.Start(); err != nil {
					t.Fatal(err)
				}
			}
			claims := map[string]int{}
			for _, a := range agents {
				if err := a.cmd.Wait(); err != nil {
					t.Errorf("%s %s: %v\n%s", a.script, a.arg, err, a.errOut.String())
				}
				n := 0
				for _, line := range strings.Split(a.out.String(), "\n") {
					if id, ok := strings.CutPrefix(line, "CLAIMED "); ok {
						claims[id]++
						n++
					}
				}
				t.Logf("%s %s claimed %d", a.script, a.arg, n)
			}
			double := 0
			for id, n := range claims {
				if !want[id] {
					t.Errorf("claimed %s, which is not one of the queue's tasks", id)
				}
				if n > 1 {
					double++
					t.Errorf("%s was claimed %d times", id, n)
				}
			}
			t.Logf("double claims: %d", double)
			if len(claims) != tasks {
				t.Fatalf("%d of %d tasks were claimed", len(claims), tasks)
			}
			for _, tk := range c.run(0, "list").Tasks {
				if tk.Status != "DONE" && tk.Status != "REVIEW" {
					t.Errorf("after the drain %s is %s", tk.PageID, tk.Status)
				}
			}
		})
	}
}

// With several sources the skill's grammar, which has no --source, takes
// $NTASK_SOURCE or default_source, and otherwise answers 40 naming them.
func TestNtaskPicksOneSource(t *testing.T) {
	c := newCLI(t, sqliteSource+"  - name: locks\n    kind: lockdir\n    path: DIR/.locks\n")
	home := t.TempDir()
	t.Setenv(ntask.EnvNtaskSource, "")
	out, code := ntaskIn(t, c, home, "list")
	msg := fmt.Sprint(out["error"])
	if code != 40 || !strings.Contains(msg, "local, locks") || !strings.Contains(msg, ntask.EnvNtaskSource) {
		t.Fatalf("list with two sources and none picked: exit %d %v, want 40 naming local, locks and %s", code, out, ntask.EnvNtaskSource)
	}
	t.Setenv(ntask.EnvNtaskSource, "locks")
	if out, code := ntaskIn(t, c, home, "create", "--title", "into the lock directory"); code != 0 {
		t.Fatalf("create with %s=locks: exit %d %v", ntask.EnvNtaskSource, code, out)
	}
	t.Setenv(ntask.EnvNtaskSource, "")
	conf, err := os.ReadFile(c.conf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.conf, append([]byte("default_source: locks\n"), conf...), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code = ntaskIn(t, c, home, "list")
	if code != 0 || out["count"] != float64(1) {
		t.Fatalf("list with default_source locks: exit %d %v, want the one task created there", code, out)
	}
}

// With no claimdeck configuration the binary's environment configures a
// Notion source; the token is named, never copied into the configuration.
func TestNtaskNotionFromEnvironment(t *testing.T) {
	t.Setenv("CLAIMDECK_CONFIG", "")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	t.Setenv(ntask.EnvNotionToken, "ntn_secret_value_1234567890")
	t.Setenv(ntask.EnvNotionDB, "0123456789abcdef0123456789abcdef")
	cfg, err := ntask.LoadNtaskConfig()
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Sources) != 1 {
		t.Fatalf("sources: %+v", cfg.Sources)
	}
	s := cfg.Sources[0]
	if s.Kind != "notion" || s.TokenEnv != ntask.EnvNotionToken || s.Token != "" || s.DatabaseID != "0123456789abcdef0123456789abcdef" || s.Schema != "ntask" {
		t.Fatalf("the source from the environment: %+v", s)
	}
	t.Setenv(ntask.EnvNotionToken, "")
	if cfg, err := ntask.LoadNtaskConfig(); err != nil || cfg.Sources[0].Kind != "sqlite" {
		t.Fatalf("without NOTION_TOKEN: %+v %v, want the embedded queue", cfg, err)
	}
}

// The holder's commands read the lock from the state file: none, or one
// for another task, is 40 as the binary answers; --lock-token still works.
func TestNtaskLockStateAnswers(t *testing.T) {
	c := newCLI(t, sqliteSource)
	home := t.TempDir()
	a, _ := ntaskIn(t, c, home, "create", "--title", "a", "--status", "Ready")
	b, _ := ntaskIn(t, c, home, "create", "--title", "b", "--status", "Ready")
	idA := a["task"].(map[string]any)["task_id"].(string)
	idB := b["task"].(map[string]any)["task_id"].(string)
	out, code := ntaskIn(t, c, home, "heartbeat", idA)
	if code != 40 || !strings.Contains(fmt.Sprint(out["error"]), "No active task claim") {
		t.Fatalf("heartbeat with no claim: exit %d %v", code, out)
	}
	claimed, code := ntaskIn(t, c, home, "claim", idA)
	if code != 0 {
		t.Fatalf("claim: exit %d %v", code, claimed)
	}
	token := claimed["task"].(map[string]any)["lock_token"].(string)
	if _, code := ntaskIn(t, c, t.TempDir(), "claim", idB); code != 0 {
		t.Fatalf("claim of b by another agent: exit %d", code)
	}
	out, code = ntaskIn(t, c, home, "block", idB, "--reason", "x", "--unblock-action", "y")
	if code != 40 || !strings.Contains(fmt.Sprint(out["error"]), "Lock state is for "+idA) {
		t.Fatalf("block of another task than the state's: exit %d %v", code, out)
	}
	if out, code := ntaskIn(t, c, t.TempDir(), "heartbeat", idA, "--lock-token", token); code != 0 {
		t.Fatalf("heartbeat with --lock-token and no state: exit %d %v", code, out)
	}
	if out, code := ntaskIn(t, c, home, "review", idA, "--summary", "done"); code != 0 {
		t.Fatalf("review: exit %d %v", code, out)
	}
	if _, err := ntask.LoadState(); err != ntask.ErrNoState {
		t.Fatalf("review left the lock state: %v", err)
	}
}

// The lifecycle rules as the issue lists them, each answered with the
// binary's code: review is 41 on open sub-tasks; escalate marks the claim
// and ends its lease; update refuses the statuses that belong to commands
// and a task another agent holds; approve and rework refuse a task not in
// Review and a rework without its reason.
func TestNtaskLifecycleRules(t *testing.T) {
	c := newCLI(t, sqliteSource)
	home, other := t.TempDir(), t.TempDir()
	id := func(out map[string]any) string { return out["task"].(map[string]any)["task_id"].(string) }
	code := func(args ...string) (map[string]any, int) { return ntaskIn(t, c, home, args...) }
	want := func(exit int, wantCode string, args ...string) map[string]any {
		t.Helper()
		out, got := code(args...)
		if got != exit || (wantCode != "" && fmt.Sprint(out["error"].(map[string]any)["code"]) != wantCode) {
			t.Fatalf("ntask %v: exit %d %v, want %d %s", args, got, out, exit, wantCode)
		}
		return out
	}
	parent := id(want(0, "", "create", "--title", "parent", "--status", "Ready", "--priority", "3"))
	want(0, "", "create", "--title", "child", "--parent", parent, "--status", "Ready")
	token := want(0, "", "claim", parent)["task"].(map[string]any)["lock_token"].(string)
	out := want(41, "INCOMPLETE_SUBTASKS", "review", parent, "--summary", "done")
	if out["task"].(map[string]any)["status"] != "In Progress" {
		t.Fatalf("the 41 answer does not carry the task as it is: %v", out)
	}
	if _, err := ntask.LoadState(); err != nil {
		t.Fatalf("a refused review dropped the lock state: %v", err)
	}
	want(21, "LOST_LOCK", "update", parent, "--priority", "1", "--lock-token", "1b4e28ba-2fa1-11d2-883f-0016d3cca427")
	if o, got := ntaskIn(t, c, other, "update", parent, "--priority", "1"); got != 20 {
		t.Fatalf("update of a task another agent holds: exit %d %v, want 20", got, o)
	}
	want(0, "", "update", parent, "--priority", "1")
	want(40, "MISCONFIGURED", "update", parent, "--status", "done")
	want(40, "MISCONFIGURED", "create", "--title", "x", "--priority", "4")
	want(40, "MISCONFIGURED", "approve", parent)
	want(40, "MISCONFIGURED", "rework", parent)

	esc := want(0, "", "escalate", parent)
	if esc["task"].(map[string]any)["escalation"] != "escalated" {
		t.Fatalf("escalate: %v, want the escalated mark", esc)
	}
	want(40, "MISCONFIGURED", "heartbeat", parent)
	want(21, "LOST_LOCK", "heartbeat", parent, "--lock-token", token)
}

// TestNtaskHumanCommandsReadTheTable checks ntask's human commands against
// the two places their words come from: the contract's description
// (commands.json at 75590fd) where it names the command, else the action's
// row in model.ActionRows; and their --reason is required exactly when
// model.Action.Needs says a reason is needed.
func TestNtaskHumanCommandsReadTheTable(t *testing.T) {
	raw, err := os.ReadFile("testdata/ntask-v1/commands.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Commands []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"commands"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	contract := map[string]string{}
	for _, c := range doc.Commands {
		contract[c.Name] = c.Description
	}
	root := (&ntask.Ntask{Env: &cmdutil.Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard}}).Root()
	for _, a := range []model.Action{model.ActionApprove, model.ActionRework, model.ActionUnblock, model.ActionCancel} {
		word := a.Row().Word
		cmd, _, err := root.Find([]string{word})
		if err != nil || cmd.Name() != word {
			t.Fatalf("ntask has no %s command: %v", word, err)
		}
		want, named := contract[word]
		if !named {
			want = a.Row().Help
		}
		if cmd.Short != want {
			t.Errorf("ntask %s says %q, want %q", word, cmd.Short, want)
		}
		required := false
		if f := cmd.Flags().Lookup("reason"); f != nil {
			_, required = f.Annotations[cobra.BashCompOneRequiredFlag]
		}
		if required != a.Needs().Reason {
			t.Errorf("ntask %s: --reason required %v, model.Action.Needs says %v", word, required, a.Needs().Reason)
		}
	}
}
