package cmdtest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
)

func Raw(c *CLI, stdin string, args ...string) (string, string, int) {
	c.T.Helper()
	var out, errOut bytes.Buffer
	code := Program(context.Background(), append([]string{"--config", c.Conf}, args...), strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), code
}

func Dump(evs []cmdutil.EventJSON) string {
	var b strings.Builder
	for _, e := range evs {
		b.WriteString(e.At + " " + e.Action + " by " + e.Actor + " (" + e.Reason + ") [" + e.Detail + "]\n")
	}
	return b.String()
}

// PGTestDSN is the throwaway cluster's DSN; outside CI its absence skips.
func PGTestDSN(t *testing.T) string {
	dsn := os.Getenv("CLAIMDECK_TEST_PG_DSN")
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but CLAIMDECK_TEST_PG_DSN is not set")
		}
		t.Skip("set CLAIMDECK_TEST_PG_DSN")
	}
	return dsn
}

// NotionCLI serves an emulator on 127.0.0.1 and configures one notion
// source on its ntask database.
func NotionCLI(t *testing.T) (*CLI, *cmdutil.EmulatorWorkspace) {
	t.Helper()
	yaml, w := NotionSource(t)
	return NewCLI(t, yaml), w
}

// History is the task's timeline as `claimdeck history` prints it in
// JSON: the backend's shared trail, whoever reads it.
func History(t *testing.T, c *CLI, id string) []cmdutil.EventJSON {
	t.Helper()
	out, errOut, code := Raw(c, "", "history", "--task", id)
	var r struct {
		History []cmdutil.EventJSON `json:"history"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("history --task %s exited %d:\n%s%s", id, code, out, errOut)
	}
	return r.History
}

// SharedTrail is what another person — another configuration and journal,
// the same SQLite queue as c — reads in the task's trail for these
// actions (every action when none is named): "actor action door result",
// oldest first.
func SharedTrail(t *testing.T, c *CLI, id string, actions ...string) []string {
	t.Helper()
	other := NewCLI(t, strings.ReplaceAll(SQLiteSource, "DIR", c.Dir))
	var out []string
	for _, e := range History(t, other, id) {
		if len(actions) == 0 || slices.Contains(actions, e.Action) {
			out = append(out, e.Actor+" "+e.Action+" "+e.Door+" "+e.Result)
		}
	}
	return out
}
