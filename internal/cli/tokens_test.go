package cli_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/sqlstore"
)

func cliRawOut(c *cmdtest.CLI, args ...string) string {
	var out bytes.Buffer
	cmdtest.Program(context.Background(), append([]string{"--config", c.Conf}, args...), strings.NewReader(""), &out, &out)
	return out.String()
}

// An agent that reads another's claim from list, get or history sees a
// prefix of its lock token, never the token; an agent that got the token
// anyway and completes the claim is recorded in the trail as itself, not
// as the holder.
func TestALockTokenBelongsToItsHolder(t *testing.T) {
	for _, b := range cmdtest.ContractBackends {
		t.Run(b.Name, func(t *testing.T) {
			c := cmdtest.NewCLI(t, b.Yaml(t))
			id := c.Run(0, "create", "--title", "Rotate keys").Task.PageID
			tok := c.Run(0, "claim", "--task", id, "--agent-name", "AGENT_A", "--run-id", "runA").Task.LockToken
			if len(tok) != 36 {
				t.Fatalf("claim must hand over the full token, gave %q", tok)
			}
			for _, args := range [][]string{
				{"list"}, {"get", "--task", id}, {"history", "--task", id},
				{"list", "--output", "table"}, {"get", "--task", id, "--output", "table"},
			} {
				if out := cliRawOut(c, args...); strings.Contains(out, tok) {
					t.Errorf("%v prints A's full lock token:\n%s", args, out)
				}
			}
			if g := c.Run(0, "get", "--task", id).Task; g.LockToken != model.ShownToken(tok) {
				t.Errorf("get shows lock_token %q, want the prefix %q", g.LockToken, model.ShownToken(tok))
			}
			if hb := c.Run(0, "heartbeat", "--task", id, "--lock-token", tok, "--run-id", "runA"); hb.Task.LockToken != tok {
				t.Errorf("the holder's own heartbeat answers lock_token %q, want its token", hb.Task.LockToken)
			}

			c.Run(0, "complete", "--task", id, "--lock-token", tok, "--agent-name", "AGENT_B", "--run-id", "runB")
			var byB bool
			for _, e := range c.Run(0, "get", "--task", id).Task.History {
				if e.Action == "complete" || strings.Contains(e.Reason+e.Detail, "complete by run") {
					// Notion's comments are the integration's: the author leads the text.
					who := e.Actor + " " + e.Reason
					if strings.Contains(who, "AGENT_A") {
						t.Errorf("B's completion is recorded as the holder's: %+v", e)
					}
					byB = byB || strings.Contains(who, "AGENT_B")
				}
			}
			if !byB {
				t.Errorf("no step of the trail names AGENT_B as the one who completed:\n%s", cmdtest.Dump(c.Run(0, "get", "--task", id).Task.History))
			}
		})
	}
}

// A seed 003 row whose id is a space is claimed and finished by the same
// id: ids are taken as given on every path, never trimmed on some.
func TestATaskWhoseIDIsASpaceCanBeFinished(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	st, err := sqlstore.Open(context.Background(), sqlstore.Config{Name: "local", Driver: "sqlite", Path: filepath.Join(c.Dir, "queue.db")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Create(context.Background(), sources.NewTask{ID: " ", Title: "blank id"}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	tok := c.Run(0, "claim", "--task", " ", "--agent-name", "a").Task.LockToken
	c.Run(0, "heartbeat", "--task", " ", "--lock-token", tok)
	if r := c.Run(0, "complete", "--task", " ", "--lock-token", tok); r.Task.State != "done" {
		t.Fatalf("complete of the task ' ': %+v", r.Task)
	}
	if r := c.Run(3, "get", "--task", "T\x00"); !strings.Contains(r.Error.Message, "NUL") {
		t.Fatalf("get of an id with a NUL: %+v", r.Error)
	}
}
