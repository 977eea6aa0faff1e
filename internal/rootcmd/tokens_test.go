package rootcmd

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/sqlstore"
)

// rawOut runs claimdeck and returns what it printed, whatever the exit.
func (c *cli) rawOut(args ...string) string {
	var out bytes.Buffer
	run(context.Background(), append([]string{"--config", c.conf}, args...), strings.NewReader(""), &out, &out)
	return out.String()
}

// An agent that reads another's claim from list, get or history sees a
// prefix of its lock token, never the token; an agent that got the token
// anyway and completes the claim is recorded in the trail as itself, not
// as the holder.
func TestALockTokenBelongsToItsHolder(t *testing.T) {
	for _, b := range contractBackends {
		t.Run(b.name, func(t *testing.T) {
			c := newCLI(t, b.yaml(t))
			id := c.run(0, "create", "--title", "Rotate keys").Task.PageID
			tok := c.run(0, "claim", "--task", id, "--agent-name", "AGENT_A", "--run-id", "runA").Task.LockToken
			if len(tok) != 36 {
				t.Fatalf("claim must hand over the full token, gave %q", tok)
			}
			for _, args := range [][]string{
				{"list"}, {"get", "--task", id}, {"history", "--task", id},
				{"list", "--output", "table"}, {"get", "--task", id, "--output", "table"},
			} {
				if out := c.rawOut(args...); strings.Contains(out, tok) {
					t.Errorf("%v prints A's full lock token:\n%s", args, out)
				}
			}
			if g := c.run(0, "get", "--task", id).Task; g.LockToken != model.ShownToken(tok) {
				t.Errorf("get shows lock_token %q, want the prefix %q", g.LockToken, model.ShownToken(tok))
			}
			if hb := c.run(0, "heartbeat", "--task", id, "--lock-token", tok, "--run-id", "runA"); hb.Task.LockToken != tok {
				t.Errorf("the holder's own heartbeat answers lock_token %q, want its token", hb.Task.LockToken)
			}

			c.run(0, "complete", "--task", id, "--lock-token", tok, "--agent-name", "AGENT_B", "--run-id", "runB")
			var byB bool
			for _, e := range c.run(0, "get", "--task", id).Task.History {
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
				t.Errorf("no step of the trail names AGENT_B as the one who completed:\n%s", dump(c.run(0, "get", "--task", id).Task.History))
			}
		})
	}
}

// A seed 003 row whose id is a space is claimed and finished by the same
// id: ids are taken as given on every path, never trimmed on some.
func TestATaskWhoseIDIsASpaceCanBeFinished(t *testing.T) {
	c := newCLI(t, sqliteSource)
	st, err := sqlstore.Open(context.Background(), sqlstore.Config{Name: "local", Driver: "sqlite", Path: filepath.Join(c.dir, "queue.db")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Create(context.Background(), sources.NewTask{ID: " ", Title: "blank id"}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	tok := c.run(0, "claim", "--task", " ", "--agent-name", "a").Task.LockToken
	c.run(0, "heartbeat", "--task", " ", "--lock-token", tok)
	if r := c.run(0, "complete", "--task", " ", "--lock-token", tok); r.Task.State != "done" {
		t.Fatalf("complete of the task ' ': %+v", r.Task)
	}
	if r := c.run(3, "get", "--task", "T\x00"); !strings.Contains(r.Error.Message, "NUL") {
		t.Fatalf("get of an id with a NUL: %+v", r.Error)
	}
}
