package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/internal/ntask"
	"github.com/claimdeck/claimdeck/model"
)

// agentEnv is the environment of an agent process on c's configuration:
// PATH with ntask first, its own HOME, no Notion variables of the machine.
func agentEnv(t *testing.T, c *cmdtest.CLI, home string) []string {
	env := []string{"PATH=" + binaries(t) + ":" + os.Getenv("PATH"), "HOME=" + home, "CLAIMDECK_CONFIG=" + c.Conf}
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
	for _, b := range cmdtest.ReviewBackends {
		t.Run(b.Name, func(t *testing.T) {
			c := cmdtest.NewCLI(t, b.Yaml(t))
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

// TestNtaskCommandsJSONExamples runs every example of commands.json at
// 75590fd through a binary named ntask, as a shell runs the command line,
// on a lock directory whose queue holds TASK-42, and checks the exit code
// and every field of the example output.
func TestNtaskCommandsJSONExamples(t *testing.T) {
	raw, err := os.ReadFile("../ntask/testdata/ntask-v1/commands.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc cmdtest.CommandsJSON
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range doc.Commands {
		for _, ex := range c.Examples {
			n++
			t.Run(c.Name, func(t *testing.T) {
				cl := cmdtest.NewCLI(t, "  - name: local\n    kind: lockdir\n    path: DIR/.locks\n")
				tasks := `[{"id": "TASK-42", "title": "Fix login bug", "priority": 1}]`
				if err := os.WriteFile(filepath.Join(cl.Dir, ".locks", "tasks.json"), []byte(tasks), 0o600); err != nil {
					t.Fatal(err)
				}
				home := t.TempDir()
				// The work is somebody else's than the reviewer's, who may
				// not approve a review they sent (review.self_approve).
				t.Setenv(ntask.EnvNotionAgent, "worker-1")
				for _, step := range cmdtest.ExamplePrep[c.Name] {
					if _, code := cmdtest.NtaskIn(t, cl, home, step...); code != 0 {
						t.Fatalf("preparing %s: ntask %v exited %d", c.Name, step, code)
					}
				}
				cmd := exec.Command("bash", "-c", ex.Command)
				cmd.Env = agentEnv(t, cl, home)
				if c.Name == string(model.ActionApprove) || c.Name == string(model.ActionRework) {
					// A reviewer's move names the reviewer (never the
					// configured person): somebody else than the worker.
					cmd.Env = append(cmd.Env, ntask.EnvNotionAgent+"=reviewer-1")
				}
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
				cmdtest.MatchV1Example(t, c.Name, ex.Command, "", ex.Output, got)
			})
		}
	}
	if n != 15 {
		t.Fatalf("commands.json has %d examples, want the 15 of 75590fd", n)
	}
}

// TestMixedGenerationDrain: two agents of the older generation (flags,
// exit 2-5) and two on today's skill (positional ids, 10-41), each a real
// process, drain one queue together: every task is claimed exactly once.
func TestMixedGenerationDrain(t *testing.T) {
	const tasks = 40
	for _, b := range cmdtest.ContractBackends {
		if b.Name == "notion" {
			continue // Notion cannot promise zero double claims (Caps.AtomicClaim); its kit measures them
		}
		t.Run(b.Name, func(t *testing.T) {
			c := cmdtest.NewCLI(t, b.Yaml(t))
			want := map[string]bool{}
			for i := range tasks {
				want[c.Run(0, "create", "--title", fmt.Sprintf("task %d", i), "--priority", fmt.Sprint(i%4)).Task.PageID] = true
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
			for _, tk := range c.Run(0, "list").Tasks {
				if tk.Status != "DONE" && tk.Status != "REVIEW" {
					t.Errorf("after the drain %s is %s", tk.PageID, tk.Status)
				}
			}
		})
	}
}
