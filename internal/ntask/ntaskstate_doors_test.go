package ntask_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/internal/ntask"
	"github.com/claimdeck/claimdeck/sources/notion/notionemu"
)

// A holder write that landed is answered as landed: when only its note in
// the trail fails (here Notion refuses comments), the answer is ok with a
// warning, never an error an agent would retry the write on.
func TestAWriteThatLandedIsAnsweredLandedWhenItsNoteFails(t *testing.T) {
	c, w := cmdtest.NotionCLI(t)
	id := c.Run(0, "create", "--title", "noted").Task.PageID
	tok := c.Run(0, "claim", "--task", id, "--agent-name", "SANDMAN", "--run-id", "r-1").Task.LockToken
	w.Srv.SetCapabilities(w.Token, notionemu.Capabilities{ReadComments: true})
	var out, errOut bytes.Buffer
	code := cmdtest.Program(t.Context(), []string{"--config", c.Conf, "complete", "--task", id, "--lock-token", tok, "--agent-name", "SANDMAN", "--run-id", "r-2"}, strings.NewReader(""), &out, &errOut)
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

// Two ntask agents in one HOME share its state file: the second's claim
// is refused (40, "one HOME per agent") while the first's claim is live,
// and the first keeps its lock token; once the first sent its task to review, the second goes on.
func TestSecondAgentInAHomeIsRefused(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	home := t.TempDir()
	first := c.Run(0, "create", "--title", "first").Task.PageID
	second := c.Run(0, "create", "--title", "second").Task.PageID
	t.Setenv(ntask.EnvNotionAgent, "A1")
	if out, code := cmdtest.NtaskIn(t, c, home, "claim", first); code != 0 {
		t.Fatalf("A1 claim: exit %d %v", code, out)
	}
	was, err := os.ReadFile(filepath.Join(home, ".openclaw", "state", "current-task.json"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(ntask.EnvNotionAgent, "A2")
	out, code := cmdtest.NtaskIn(t, c, home, "claim", second)
	if msg := fmt.Sprint(out["error"]); code != 40 || !strings.Contains(msg, "one HOME per agent") || !strings.Contains(msg, "A1") {
		t.Fatalf("A2 claim in A1's HOME: exit %d %v, want 40 saying one HOME per agent", code, out)
	}
	if now, _ := os.ReadFile(filepath.Join(home, ".openclaw", "state", "current-task.json")); !bytes.Equal(now, was) {
		t.Fatal("the refused claim changed the state file")
	}
	if got := c.Run(0, "get", "--task", second).Task; got.Agent != "" {
		t.Fatalf("the refused claim took the task: %+v", got)
	}
	t.Setenv(ntask.EnvNotionAgent, "A1")
	if out, code := cmdtest.NtaskIn(t, c, home, "review", first, "--summary", "done"); code != 0 {
		t.Fatalf("A1 review with its state intact: exit %d %v", code, out)
	}
	t.Setenv(ntask.EnvNotionAgent, "A2")
	if out, code := cmdtest.NtaskIn(t, c, home, "claim", second); code != 0 {
		t.Fatalf("A2 claim once A1 sent its task to review: exit %d %v", code, out)
	}
}
