package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/sources"
)

// move through the command line: refused without a terminal unless --yes,
// the dry run writes nothing, and afterwards a call naming the origin —
// the heartbeat of a claim made before the move, a new claim — is served
// by the target with no change of configuration; a second move is refused.
func TestMoveServesTheOriginsCallersFromTheTarget(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource+"  - name: team\n    kind: sqlite\n    path: DIR/team.db\n")
	held := c.Run(0, "--source", "local", "create", "--title", "index rebuild").Task.PageID
	queued := c.Run(0, "--source", "local", "create", "--title", "docs").Task.PageID
	tok := c.Run(0, "--source", "local", "claim", "--task", held, "--agent-name", "SANDMAN", "--lease", "1h").Task.LockToken

	if r := cliMove(c, 3, "--from", "local", "--to", "team"); r.Error.Code != "MISCONFIGURED" {
		t.Fatalf("move without --yes and no terminal: %+v", r)
	}
	if preview := cliMove(c, 0, "--from", "local", "--to", "team", "--dry-run"); !preview.DryRun || len(preview.Tasks) != 2 {
		t.Fatalf("dry run: %+v, want the 2 tasks", preview)
	}
	if got := cliVersions(c, "team"); got != "" {
		t.Fatalf("--dry-run wrote %s", got)
	}
	cliMove(c, 0, "--from", "local", "--to", "team", "--yes")

	c.Run(0, "--source", "local", "heartbeat", "--task", held, "--lock-token", tok)
	if got := c.Run(0, "--source", "local", "claim", "--agent-name", "ORACLE").Task; got.PageID != queued {
		t.Fatalf("a claim naming the moved source got %+v, want %s", got, queued)
	}
	if got := c.Run(0, "--source", "team", "get", "--task", queued).Task; got.Agent != "ORACLE" {
		t.Fatalf("the claim did not land in the target: %+v", got)
	}
	origin := sources.Origin(cliOpen(c, "local"))
	defer origin.Close()
	if task, err := origin.Get(sources.PastMark(context.Background()), queued); err != nil || task.Held() {
		t.Fatalf("the origin was written after the move: %+v %v", task, err)
	}
	if r := cliMove(c, 2, "--from", "local", "--to", "team", "--yes"); r.Error.Code != "CONFLICT" {
		t.Fatalf("a second move: %+v", r)
	}
}

// cliMove runs claimdeck move with args and reads its answer as copy's.
func cliMove(c *cmdtest.CLI, wantExit int, args ...string) copyResult {
	c.T.Helper()
	var out bytes.Buffer
	code := cmdtest.Program(context.Background(), append([]string{"--config", c.Conf, "move"}, args...), strings.NewReader(""), &out, io.Discard)
	var r copyResult
	if err := json.Unmarshal(out.Bytes(), &r); err != nil || code != wantExit || r.OK != (wantExit == 0) {
		c.T.Fatalf("claimdeck move %v: exit %d, want %d (%v): %s", args, code, wantExit, err, out.String())
	}
	return r
}
