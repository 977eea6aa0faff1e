package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

// seedSnippet runs one of seed 004's shell snippets (kept verbatim under
// sources/lockdir/testdata/seed004) from dir, the directory holding
// project/.locks, and returns its output and exit status.
func seedSnippet(t *testing.T, dir, script string, env ...string) (string, int) {
	t.Helper()
	for _, tool := range []string{"bash", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the seed's snippets need %s: %v", tool, err)
		}
	}
	abs, err := filepath.Abs(filepath.Join("..", "..", "sources", "lockdir", "testdata", "seed004", script))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", abs)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	return string(out), 0
}

// Seed 004's agents and claimdeck claim from one directory, with no tasks
// file: any id can be claimed, each side sees the other's locks, and the
// seed's done and expired cases get the contract's answers.
func TestSeed004AgentsAndClaimdeckInterleave(t *testing.T) {
	c := cmdtest.NewCLI(t, "  - name: locks\n    kind: lockdir\n    path: DIR/project/.locks\n")
	locks := filepath.Join(c.Dir, "project", ".locks")
	if err := os.MkdirAll(locks, 0o755); err != nil {
		t.Fatal(err)
	}

	mine := c.Run(0, "claim", "--task", "design-vpc-module", "--agent-name", "terraform-engineer", "--run-id", "run-001").Task
	if mine.Status != "IN_PROGRESS" || mine.LockToken == "" {
		t.Fatalf("claim of an id no tasks file names: %+v", mine)
	}
	if out, code := seedSnippet(t, c.Dir, "claim.sh", "TASK_ID=write-tests", "AGENT_NAME=seed-agent"); code != 0 || !strings.Contains(out, "LOCK_ACQUIRED") {
		t.Fatalf("the seed's claim: %d %s", code, out)
	}
	status, _ := seedSnippet(t, c.Dir, "status_runnable.sh")
	for _, want := range []string{"design-vpc-module: terraform-engineer (since ", "write-tests: seed-agent (since "} {
		if !strings.Contains(status, want) {
			t.Fatalf("the seed's listing lacks %q:\n%s", want, status)
		}
	}
	if r := c.Run(2, "claim", "--task", "write-tests", "--agent-name", "ORACLE"); r.Error.Code != "CONFLICT" {
		t.Fatalf("claim over the seed agent's live lock: %+v", r.Error)
	}
	if g := c.Run(0, "get", "--task", "write-tests").Task; g.Status != "IN_PROGRESS" || g.Agent != "seed-agent" {
		t.Fatalf("the seed's lock as claimdeck reads it: %+v", g)
	}

	// TASK_ALREADY_DONE: the seed skips a done task; claimdeck answers CONFLICT.
	c.Run(0, "complete", "--task", "design-vpc-module", "--lock-token", mine.LockToken, "--run-id", "run-001")
	if out, code := seedSnippet(t, c.Dir, "claim.sh", "TASK_ID=design-vpc-module", "AGENT_NAME=seed-agent"); code != 0 || !strings.Contains(out, "TASK_ALREADY_DONE") {
		t.Fatalf("the seed's claim of a task claimdeck completed: %d %s", code, out)
	}
	seedSnippet(t, c.Dir, "complete.sh", "TASK_ID=write-tests")
	if r := c.Run(2, "claim", "--task", "write-tests", "--agent-name", "ORACLE"); r.Error.Code != "CONFLICT" || !strings.Contains(r.Error.Message, "done") {
		t.Fatalf("claim of a task the seed completed: %+v", r.Error)
	}

	// An expired seed lock is reclaimed, as the seed's own check would.
	claimed := time.Now().UTC().Add(-2 * time.Hour)
	lock := `{"task_id": "plan-subnets", "agent": "gone-agent", "claimed_at": "` + claimed.Format(time.RFC3339) +
		`", "expires_at": "` + claimed.Add(time.Hour).Format(time.RFC3339) + `", "description": "Task description here"}`
	if err := os.WriteFile(filepath.Join(locks, "plan-subnets.lock"), []byte(lock), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := c.Run(0, "claim", "--task", "plan-subnets", "--agent-name", "ORACLE").Task; got.Agent != "ORACLE" {
		t.Fatalf("claim of an expired seed lock: %+v", got)
	}
	if r := c.Run(3, "claim", "--task", "../etc/passwd", "--agent-name", "ORACLE"); r.Error.Code != "MISCONFIGURED" {
		t.Fatalf("an id escaping the directory: %+v", r.Error)
	}
}
