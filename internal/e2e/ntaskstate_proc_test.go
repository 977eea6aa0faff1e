package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

// ntask claim keeps the lock token in its state file alone. With a state
// directory nobody may write (immutable: chattr +i holds for root too)
// nothing is claimed, the error names the file, doctor says so; when the
// file itself cannot be replaced after the claim, the claim is given back.
// Either way the task stays in the queue.
func TestNtaskClaimWithoutASavableStateLeavesTheTaskReady(t *testing.T) {
	r := newDoorRig(t, cmdtest.SQLiteSource, "")
	home := t.TempDir()
	stateDir := filepath.Join(home, ".openclaw", "state")
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	id := r.claimdeck(0, "create", "--title", "needs a home").Task.PageID
	if out, err := exec.Command("chattr", "+i", stateDir).CombinedOutput(); err != nil {
		t.Skipf("chattr +i is not available here: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("chattr", "-i", stateDir).Run() })
	path := filepath.Join(stateDir, "current-task.json")
	v, code := r.ntask(home, "claim", id)
	if msg, _ := v["error"].(map[string]any)["message"].(string); code != 40 || !strings.Contains(msg, path) {
		t.Fatalf("claim with a read-only state directory: exit %d %v, want 40 naming %s", code, v, path)
	}
	if got := r.claimdeck(0, "get", "--task", id).Task; got.State != "queued" || got.Agent != "" {
		t.Fatalf("the task after the refused claim: %+v", got)
	}
	v, code = r.ntask(home, "doctor")
	if checks, _ := v["checks"].(map[string]any); code != 40 || checks["state_writable"] != false {
		t.Fatalf("doctor with a read-only state directory: exit %d %v", code, v)
	}

	// The directory is writable, but the state file's name is taken by a
	// directory: the claim is made, cannot be saved, and is given back.
	if err := exec.Command("chattr", "-i", stateDir).Run(); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	v, code = r.ntask(home, "claim", id)
	if msg, _ := v["error"].(map[string]any)["message"].(string); code != 40 || !strings.Contains(msg, path) || !strings.Contains(msg, "given back") {
		t.Fatalf("claim whose state cannot replace its file: exit %d %v", code, v)
	}
	if got := r.claimdeck(0, "get", "--task", id).Task; got.State != "queued" || got.LockToken != "" {
		t.Fatalf("the task after the claim was given back: %+v", got)
	}
	if v, code := r.ntask(t.TempDir(), "claim", id); code != 0 {
		t.Fatalf("another agent's claim after the give-back: %d %v", code, v)
	}
}
