package rootcmd

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/sources/notion/notionemu"
)

// ntask claim keeps the lock token in its state file alone. With a state
// directory nobody may write (immutable: chattr +i holds for root too)
// nothing is claimed, the error names the file, doctor says so; when the
// file itself cannot be replaced after the claim, the claim is given back.
// Either way the task stays in the queue.
func TestNtaskClaimWithoutASavableStateLeavesTheTaskReady(t *testing.T) {
	r := newDoorRig(t, sqliteSource, "")
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

// A holder write that landed is answered as landed: when only its note in
// the trail fails (here Notion refuses comments), the answer is ok with a
// warning, never an error an agent would retry the write on.
func TestAWriteThatLandedIsAnsweredLandedWhenItsNoteFails(t *testing.T) {
	c, w := notionCLI(t)
	id := c.run(0, "create", "--title", "noted").Task.PageID
	tok := c.run(0, "claim", "--task", id, "--agent-name", "SANDMAN", "--run-id", "r-1").Task.LockToken
	w.Srv.SetCapabilities(w.Token, notionemu.Capabilities{ReadComments: true})
	var out, errOut bytes.Buffer
	code := run(t.Context(), []string{"--config", c.conf, "complete", "--task", id, "--lock-token", tok, "--agent-name", "SANDMAN", "--run-id", "r-2"}, strings.NewReader(""), &out, &errOut)
	var r struct {
		OK      bool              `json:"ok"`
		Task    *cmdutil.TaskJSON `json:"task"`
		Warning string            `json:"warning"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil || code != 0 || !r.OK || r.Task.State != "done" || !strings.Contains(r.Warning, "landed") {
		t.Fatalf("complete whose trail note failed: exit %d %s %s", code, out.String(), errOut.String())
	}
	if !strings.Contains(errOut.String(), "warning:") {
		t.Fatalf("no warning on stderr: %q", errOut.String())
	}
}
