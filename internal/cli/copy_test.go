package cli_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

type copyResult struct {
	OK     bool             `json:"ok"`
	DryRun bool             `json:"dry_run"`
	Copied int              `json:"copied"`
	Tasks  []map[string]any `json:"tasks"`
	Error  struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// The embedded queue moves into a team's first PostgreSQL.
func TestCopySQLiteIntoPostgres(t *testing.T) {
	team, _ := freshPGDatabase(t, "copy")
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource+"  - name: team\n    kind: postgres\n    dsn: "+team+"\n")
	c.Run(0, "--source", "team", "--create", "migrate")
	copyQueue(t, c, "team")
}

// The embedded queue moves into a seed 004 lock directory.
func TestCopySQLiteIntoLockDirectory(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource+"  - name: locks\n    kind: lockdir\n    path: DIR/.locks\n")
	copyQueue(t, c, "locks")
}

// copyQueue copies source local, holding a live claim, a finished task and
// a queued one and one a person took over, into target: tasks, the live claim its holder keeps
// heartbeating with the same token, history; a second copy is refused and
// changes nothing.
func copyQueue(t *testing.T, c *cmdtest.CLI, target string) {
	live := c.Run(0, "--source", "local", "create", "--title", "index rebuild").Task.PageID
	done := c.Run(0, "--source", "local", "create", "--title", "vpc module").Task.PageID
	queued := c.Run(0, "--source", "local", "create", "--title", "docs", "--priority", "high").Task.PageID
	claim := c.Run(0, "--source", "local", "claim", "--task", live, "--agent-name", "SANDMAN", "--run-id", "run-1", "--lease", "1h")
	tok := c.Run(0, "--source", "local", "claim", "--task", done, "--agent-name", "ORACLE").Task.LockToken
	c.Run(0, "--source", "local", "complete", "--task", done, "--lock-token", tok)
	human := c.Run(0, "--source", "local", "create", "--title", "held by a person").Task.PageID
	c.Run(0, "--source", "local", "takeover", "--yes", "--task", human)

	preview := cliCopy(c, 0, "--from", "local", "--to", target, "--dry-run")
	if len(preview.Tasks) != 4 || !preview.DryRun {
		t.Fatalf("dry run lists %+v, want the 4 tasks", preview)
	}
	if got := cliVersions(c, target); got != "" {
		t.Fatalf("--dry-run wrote %s", got)
	}
	if got := cliCopy(c, 0, "--from", "local", "--to", target); got.Copied != 4 {
		t.Fatalf("copy: %+v, want 4 copied", got)
	}

	moved := c.Run(0, "--source", target, "get", "--task", live).Task
	was := claim.Task
	if moved.Status != "IN_PROGRESS" || moved.Agent != "SANDMAN" || moved.AgentRun != "run-1" || moved.LockExpires != was.LockExpires {
		t.Fatalf("the live claim arrived as %+v, want %+v", moved, was)
	}
	if q := c.Run(0, "--source", target, "get", "--task", queued).Task; q.Status != "READY" || q.Priority != model.PriorityHigh || q.Title != "docs" {
		t.Fatalf("the queued task arrived as %+v", q)
	}
	from, to := cliOpen(c, "local"), cliOpen(c, target)
	for _, id := range []string{live, done, queued, human} {
		a, err := from.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		b, err := to.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if b.Claim().Token != a.Claim().Token || b.Claim().Name != a.Claim().Name || b.Claim().RunID != a.Claim().RunID ||
			b.Claim().Holder != a.Claim().Holder || !b.Claim().Expires.Time().Equal(a.Claim().Expires.Time()) {
			t.Fatalf("%s: claim %+v arrived as %+v", id, a.Claim(), b.Claim())
		}
		if b.State != a.State || b.Title != a.Title || len(a.More().History) == 0 && id != queued {
			t.Fatalf("%s: %s %q from %s %q, history %d", id, b.State, b.Title, a.State, a.Title, len(a.More().History))
		}
		if len(b.More().History) < len(a.More().History) {
			t.Fatalf("%s: history %+v arrived as %+v", id, a.More().History, b.More().History)
		}
		for i, e := range a.More().History {
			g := b.More().History[i]
			if g.Actor != e.Actor || g.Action != e.Action || g.Reason != e.Reason || g.Detail != e.Detail || !g.At.Truncate(time.Millisecond).Equal(e.At.Truncate(time.Millisecond)) {
				t.Fatalf("%s: event %d %+v arrived as %+v", id, i, e, g)
			}
		}
	}
	hb := c.Run(0, "--source", target, "heartbeat", "--task", live, "--lock-token", was.LockToken)
	if hb.Task.LockToken != was.LockToken {
		t.Fatalf("heartbeat with the copied token: %+v", hb.Task)
	}
	c.Run(4, "--source", target, "heartbeat", "--task", live, "--lock-token", "00000000-0000-4000-8000-000000000000")

	before := cliVersions(c, target)
	again := cliCopy(c, 2, "--from", "local", "--to", target)
	if again.Error.Code != "CONFLICT" || !strings.Contains(again.Error.Message, "already holds 4 task(s)") || !strings.Contains(again.Error.Message, live) {
		t.Fatalf("a second copy: %+v", again.Error)
	}
	if after := cliVersions(c, target); after != before {
		t.Fatalf("a refused copy changed the target: %s, was %s", after, before)
	}
}

// versions lists a source's tasks as id:version, in id order.
func cliVersions(c *cmdtest.CLI, name string) string {
	c.T.Helper()
	d, err := cliOpen(c, name).Poll(context.Background(), "")
	if err != nil {
		c.T.Fatal(err)
	}
	var out []string
	for _, t := range d.Tasks {
		out = append(out, t.ID+":"+t.Version)
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// A target that cannot take a copy says so and why, and nothing moves.
func TestCopyRefusesATargetThatCannotImport(t *testing.T) {
	yaml, _ := cmdtest.NotionSource(t)
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource+yaml)
	c.Run(0, "--source", "local", "create", "--title", "one")
	r := cliCopy(c, 3, "--from", "local", "--to", "team-notion")
	if r.Error.Code != "MISCONFIGURED" || !strings.Contains(r.Error.Message, "cannot take a copied queue: it has no conditional writes") {
		t.Fatalf("copy into Notion: %+v", r.Error)
	}
	r = cliCopy(c, 3, "--from", "local", "--to", "local")
	if !strings.Contains(r.Error.Message, "two different sources") {
		t.Fatalf("copy onto itself: %+v", r.Error)
	}
}

func cliCopy(c *cmdtest.CLI, wantExit int, args ...string) copyResult {
	c.T.Helper()
	var out, errOut strings.Builder
	code := cmdtest.Program(context.Background(), append([]string{"--config", c.Conf, "copy"}, args...), strings.NewReader(""), &out, &errOut)
	var r copyResult
	if err := json.Unmarshal([]byte(out.String()), &r); err != nil || code != wantExit {
		c.T.Fatalf("claimdeck copy %v exited %d (want %d): %v\n%s%s", args, code, wantExit, err, out.String(), errOut.String())
	}
	return r
}

// open opens a configured source as the commands do, closed with the test.
func cliOpen(c *cmdtest.CLI, name string) sources.Source {
	c.T.Helper()
	cfg, err := cmdutil.LoadConfig(c.Conf)
	if err != nil {
		c.T.Fatal(err)
	}
	sc, err := cmdutil.PickSource(cfg, name)
	if err != nil {
		c.T.Fatal(err)
	}
	src, err := cmdutil.OpenSource(context.Background(), cfg, sc, false)
	if err != nil {
		c.T.Fatal(err)
	}
	c.T.Cleanup(func() { src.Close() })
	return src
}
