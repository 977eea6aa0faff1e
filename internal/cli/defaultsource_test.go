package cli_test

import (
	"os"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

// A second source added to a configuration that names its default breaks
// no caller of the first: claim, heartbeat, complete, list and an
// operator's get act on default_source; $CLAIMDECK_DEFAULT_SOURCE comes
// before it and --source before both.
func TestDefaultSourceServesCallersThatNameNone(t *testing.T) {
	t.Setenv(cmdutil.EnvDefaultSource, "")
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource+"  - name: team\n    kind: sqlite\n    path: DIR/team.db\n")
	id := c.Run(0, "--source", "local", "create", "--title", "index rebuild").Task.PageID
	if r := c.Run(3, "claim", "--agent-name", "A1"); !strings.Contains(r.Error.Message, cmdutil.EnvDefaultSource) || !strings.Contains(r.Error.Message, "local, team") {
		t.Fatalf("two sources and none picked: %+v, want MISCONFIGURED naming both and %s", r.Error, cmdutil.EnvDefaultSource)
	}
	conf, err := os.ReadFile(c.Conf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.Conf, append([]byte("default_source: local\n"), conf...), 0o600); err != nil {
		t.Fatal(err)
	}
	claim := c.Run(0, "claim", "--agent-name", "A1").Task
	if claim.PageID != id {
		t.Fatalf("claim with default_source local got %+v, want %s", claim, id)
	}
	c.Run(0, "heartbeat", "--task", id, "--lock-token", claim.LockToken)
	if got := c.Run(0, "list").Tasks; len(got) != 1 || got[0].Source != "local" {
		t.Fatalf("list with default_source local: %+v, want the one task there", got)
	}
	// An id two sources hold (a copy) is the default's.
	cliCopy(c, 0, "--from", "local", "--to", "team")
	if got := c.Run(0, "get", "--task", id).Task; got.Source != "local" {
		t.Fatalf("get of an id both hold: %+v, want local's", got)
	}
	c.Run(0, "complete", "--task", id, "--lock-token", claim.LockToken)

	t.Setenv(cmdutil.EnvDefaultSource, "team")
	if got := c.Run(0, "get", "--task", id).Task; got.Source != "team" || got.Status != "IN_PROGRESS" {
		t.Fatalf("get with %s=team: %+v, want team's copy, still claimed", cmdutil.EnvDefaultSource, got)
	}
	if got := c.Run(0, "--source", "local", "get", "--task", id).Task; got.Source != "local" || got.Status == "IN_PROGRESS" {
		t.Fatalf("--source local with %s=team: %+v, want local's, finished", cmdutil.EnvDefaultSource, got)
	}
	t.Setenv(cmdutil.EnvDefaultSource, "nowhere")
	if r := c.Run(3, "claim", "--agent-name", "A1"); !strings.Contains(r.Error.Message, "$"+cmdutil.EnvDefaultSource+` "nowhere"`) {
		t.Fatalf("a default naming no source: %+v, want it named", r.Error)
	}
}
