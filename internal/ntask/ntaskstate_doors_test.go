package ntask_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
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
