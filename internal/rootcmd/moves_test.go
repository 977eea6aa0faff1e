package rootcmd_test

import (
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/internal/mcpdoor/mcptest"
)

// update edits fields: a move into or out of Done, Review, Failed or
// Canceled is refused at every door, naming the command that owns it, and
// changes nothing.
func TestUpdateDoesNotMoveTasksPastTheirCommands(t *testing.T) {
	for _, b := range cmdtest.ReviewBackends {
		t.Run(b.Name, func(t *testing.T) {
			c := cmdtest.NewCLI(t, b.Yaml(t))
			ready := c.Run(0, "create", "--title", "never claimed").Task.PageID
			for status, want := range map[string]string{"DONE": "complete", "REVIEW": "review", "FAILED": "fail", "CANCELED": "cancel"} {
				if r := c.Run(3, "update", "--task", ready, "--status", status); !strings.Contains(r.Error.Message, want) {
					t.Fatalf("update of a READY task to %s: %+v", status, r.Error)
				}
			}
			inReview := c.Run(0, "create", "--title", "in review").Task.PageID
			tok := c.Run(0, "claim", "--task", inReview, "--agent-name", "SANDMAN").Task.LockToken
			c.Run(0, "review", "--task", inReview, "--lock-token", tok, "--agent-name", "SANDMAN")
			if r := c.Run(3, "update", "--task", inReview, "--status", "DONE"); !strings.Contains(r.Error.Message, "approve") {
				t.Fatalf("update of a Review task to DONE: %+v", r.Error)
			}
			if r := c.Run(3, "update", "--task", inReview, "--status", "READY"); !strings.Contains(r.Error.Message, "rework") {
				t.Fatalf("update of a Review task to READY: %+v", r.Error)
			}
			cs := mcptest.Client(t, c)
			if r := cmdtest.Call(t, cs, "update", map[string]any{"task": inReview, "status": "DONE"}, true); r.Error.Code != "MISCONFIGURED" {
				t.Fatalf("MCP update of a Review task to DONE: %+v", r.Error)
			}
			home := t.TempDir()
			if v, code := cmdtest.NtaskIn(t, c, home, "update", ready, "--status", "Canceled"); code != 40 || !strings.Contains(v["error"].(map[string]any)["message"].(string), "cancel") {
				t.Fatalf("ntask update to Canceled: %d %v", code, v)
			}
			if got := c.Run(0, "get", "--task", ready).Task; got.State != "queued" {
				t.Fatalf("the refused updates moved the ready task: %+v", got)
			}
			if got := c.Run(0, "get", "--task", inReview).Task; got.State != "review" {
				t.Fatalf("the refused updates moved the task in review: %+v", got)
			}
		})
	}
}

// Whoever sent a task to review does not approve it too, unless the
// configuration says review: {self_approve: true}.
func TestSelfApprovalIsRefusedUnlessConfigured(t *testing.T) {
	for _, conf := range []string{"", "review: {self_approve: true}\n"} {
		c := cmdtest.NewCLI(t, cmdtest.SQLiteSource+conf)
		id := c.Run(0, "create", "--title", "alice's own").Task.PageID
		c.Run(0, "takeover", "--task", id, "--yes")
		c.Run(0, "review", "--task", id)
		if conf == "" {
			if r := c.Run(3, "approve", "--task", id, "--yes"); !strings.Contains(r.Error.Message, "self_approve") {
				t.Fatalf("alice approves her own review: %+v", r.Error)
			}
			if got := c.Run(0, "get", "--task", id).Task; got.State != "review" {
				t.Fatalf("the refused approval moved the task: %+v", got)
			}
			continue
		}
		if got := c.Run(0, "approve", "--task", id, "--yes").Task; got.State != "done" {
			t.Fatalf("self_approve: true, approve: %+v", got)
		}
	}
}
