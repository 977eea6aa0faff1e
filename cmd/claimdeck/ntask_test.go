package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// binaries builds claimdeck once per test run and links it as ntask beside
// it: the directory to put first on PATH.
func binaries(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("built-binary runs skipped in -short mode")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "claimdeck-ntask-bin-")
		if err != nil {
			buildErr = err
			return
		}
		buildDir = dir
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "claimdeck"), ".").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		buildErr = os.Symlink("claimdeck", filepath.Join(dir, ntaskName))
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildDir
}

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
// lifecycle, unchanged, through a binary named ntask, on every backend.
func TestNtaskWorkflowScript(t *testing.T) {
	script, err := filepath.Abs("testdata/ntask-agent/workflow.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range contractBackends {
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
	code := run(t.Context(), append([]string{ntaskName}, args...), strings.NewReader(""), &out, &errOut)
	var v map[string]any
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("ntask %v: stdout is not one JSON document: %v\n%s%s", args, err, out.String(), errOut.String())
	}
	return v, code
}
