package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

type historyResult struct {
	OK      bool                `json:"ok"`
	TaskID  string              `json:"task_id"`
	History []cmdutil.EventJSON `json:"history"`
}

// A task's timeline, read back through `get` and `history` on every
// backend: the agent's claim, its comment, a human's force-release with
// actor and reason, the next claim and its block with the blocker reason.
func TestHistoryOnEveryBackend(t *testing.T) {
	for _, b := range cmdtest.ContractBackends {
		t.Run(b.Name, func(t *testing.T) {
			c := cmdtest.NewCLI(t, b.Yaml(t))
			id := c.Run(0, "create", "--title", "Rotate keys").Task.PageID
			c.Run(0, "claim", "--task", id, "--agent-name", "SANDMAN", "--run-id", "run-1")
			c.Run(0, "comment", "--task", id, "--agent-name", "SANDMAN", "halfway there")
			c.Run(0, "release", "--force", "--yes", "--task", id, "--reason", "agent wedged")
			tok := c.Run(0, "claim", "--task", id, "--agent-name", "ORACLE", "--run-id", "run-2").Task.LockToken
			held := c.Run(0, "get", "--task", id).Task.History
			// A Notion page keeps comments and hand-offs, not plain claims:
			// there only the claim held now is shown.
			keepsClaims := b.Name != "notion"
			claimBy := func(agent string) []step {
				if keepsClaims {
					return []step{{"claim", agent, ""}}
				}
				return nil
			}
			before := append(claimBy("SANDMAN"), step{"comment", "SANDMAN", "halfway there"}, step{"force-release", "alice", "agent wedged"})
			requireSteps(t, held, append(slices.Clone(before), step{"claim", "ORACLE", ""}))

			c.Run(0, "block", "--task", id, "--lock-token", tok, "--reason", "needs credentials", "--unblock-action", "ask ops")
			got := c.Run(0, "get", "--task", id).Task.History
			requireSteps(t, got, append(append(before, claimBy("ORACLE")...), step{"block", "", "needs credentials"}))
			for i := 1; i < len(got); i++ {
				if got[i].At < got[i-1].At {
					t.Fatalf("history is not newest last:\n%s", cmdtest.Dump(got))
				}
			}

			var out bytes.Buffer
			if code := cmdtest.Program(context.Background(), []string{"--config", c.Conf, "history", "--task", id}, strings.NewReader(""), &out, &out); code != 0 {
				t.Fatalf("history exited %d: %s", code, out.String())
			}
			var h historyResult
			if err := json.Unmarshal(out.Bytes(), &h); err != nil || !h.OK || len(h.History) != len(got) {
				t.Fatalf("history --task: %v %s", err, out.String())
			}
			out.Reset()
			if code := cmdtest.Program(context.Background(), []string{"--config", c.Conf, "history", "--task", id, "--output", "table"}, strings.NewReader(""), &out, &out); code != 0 ||
				!strings.Contains(out.String(), "WHEN") || !strings.Contains(out.String(), "agent wedged") {
				t.Fatalf("history --output table exited %d:\n%s", code, out.String())
			}
		})
	}
}

func TestHistoryNeedsATask(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	if r := c.Run(3, "history"); r.Error.Code != "MISCONFIGURED" || !strings.Contains(r.Error.Message, "--task") {
		t.Fatalf("history without --task: %+v", r.Error)
	}
}

type step struct{ action, actor, reason string }

// requireSteps fails unless evs holds want in order, among other events.
func requireSteps(t *testing.T, evs []cmdutil.EventJSON, want []step) {
	t.Helper()
	at := 0
	for _, e := range evs {
		if w := want[at]; strings.HasPrefix(e.Action, w.action) && (w.actor == "" || e.Actor == w.actor) && strings.Contains(e.Reason, w.reason) {
			if at++; at == len(want) {
				return
			}
		}
	}
	t.Fatalf("history misses %+v (in order), has:\n%s", want[at], cmdtest.Dump(evs))
}
