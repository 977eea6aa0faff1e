package rootcmd

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/sources/notion"
	"github.com/claimdeck/claimdeck/sources/notion/notionemu"
)

// notionCLI serves an emulator on 127.0.0.1 and configures one notion
// source on its ntask database.
func notionCLI(t *testing.T) (*cli, *cmdutil.EmulatorWorkspace) {
	t.Helper()
	yaml, w := notionSource(t)
	return newCLI(t, yaml), w
}

// notionSource serves an emulator for the length of the test and returns
// the `sources:` entry of a notion source on its empty ntask database.
func notionSource(t *testing.T) (string, *cmdutil.EmulatorWorkspace) {
	t.Helper()
	w, err := cmdutil.NewEmulatorWorkspace(notionemu.RateLimit{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addr, done, err := w.Serve(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); <-done })
	yaml := fmt.Sprintf("  - name: team-notion\n    kind: notion\n    token: %s\n    database_id: %s\n    schema: ntask\n    base_url: http://%s\n    rate: 200\n    settle: 10ms\n",
		w.Token, w.Dbs[notion.PresetNtask], addr)
	return yaml, w
}

func TestNotionAgentContract(t *testing.T) {
	c, _ := notionCLI(t)
	id := c.run(0, "create", "--title", "Design VPC module", "--priority", "3", "--class", "EXPEDITE").Task.PageID
	claim := c.run(0, "claim", "--task", id, "--agent-name", "SANDMAN", "--run-id", "run-1")
	tok := claim.Task.LockToken
	if claim.Task.ClaimedBy != "AGENT" || claim.Task.Agent != "SANDMAN" || tok == "" {
		t.Fatalf("claim: %+v", claim.Task)
	}
	if r := c.run(2, "claim", "--task", id, "--agent-name", "ORACLE"); r.Error.Code != "CONFLICT" {
		t.Fatalf("claim of a held task: %+v", r.Error)
	}
	if r := c.run(0, "next", "--agent-name", "ORACLE"); r.Task != nil {
		t.Fatalf("next with nothing eligible must print task null, got %+v", r.Task)
	}
	c.run(0, "heartbeat", "--task", id, "--lock-token", tok)
	released := c.run(0, "release", "--force", "--yes", "--task", id, "--reason", "agent wedged")
	if released.Task.Status != "READY" || released.Task.LockToken != "" {
		t.Fatalf("after release --force: %+v", released.Task)
	}
	if r := c.run(4, "heartbeat", "--task", id, "--lock-token", tok); r.Error.Code != "LOST_LOCK" {
		t.Fatalf("heartbeat after force-release: %+v", r.Error)
	}
	if next := c.run(0, "next", "--agent-name", "ORACLE"); next.Task == nil || next.Task.PageID != id {
		t.Fatalf("next after the release = %+v", next.Task)
	}
}

func TestNotionTokenRejectedIsMisconfiguredWithoutTheToken(t *testing.T) {
	c, w := notionCLI(t)
	bad := "secret_wrong_" + strings.Repeat("x", 20)
	conf := strings.ReplaceAll(notionReadConf(t, c.conf), w.Token, bad)
	notionWriteConf(t, c.conf, conf)
	r := c.run(3, "next", "--agent-name", "SANDMAN")
	if r.Error.Code != "MISCONFIGURED" || !strings.Contains(r.Error.Message, "token") || strings.Contains(r.Error.Message, bad) {
		t.Fatalf("wrong token: %+v", r.Error)
	}
}

func notionReadConf(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func notionWriteConf(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// A custom mapping in the configuration file: renamed roles on the seed
// 002 database are reported by name when the database lacks them, and a
// mistyped role is refused before anything is sent.
func TestNotionCustomMappingFromConfig(t *testing.T) {
	c, _ := notionCLI(t)
	conf := notionReadConf(t, c.conf)
	notionWriteConf(t, c.conf, strings.Replace(conf, "    schema: ntask\n",
		"    schema: ntask\n    properties:\n      holder: Owner\n    statuses:\n      queued: READY\n", 1))
	if r := c.run(3, "next", "--agent-name", "SANDMAN"); !strings.Contains(r.Error.Message, "Owner") {
		t.Fatalf("a mapping naming a missing property: %+v", r.Error)
	}
	notionWriteConf(t, c.conf, strings.Replace(conf, "    schema: ntask\n",
		"    schema: ntask\n    properties:\n      holdr: Agent\n", 1))
	if r := c.run(3, "next", "--agent-name", "SANDMAN"); !strings.Contains(r.Error.Message, `unknown role "holdr"`) {
		t.Fatalf("a mistyped role: %+v", r.Error)
	}
	notionWriteConf(t, c.conf, strings.Replace(conf, "    schema: ntask\n",
		"    schema: custom\n    properties:\n      holder: Agent\n", 1))
	if r := c.run(0, "next", "--agent-name", "SANDMAN"); !r.OK {
		t.Fatalf("a custom mapping equal to the database: %+v", r.Error)
	}
}

// The task_id list and get print (TASK-3) is accepted by get and claim,
// as the page id is.
func TestNotionTaskKeyIsAcceptedByGetAndClaim(t *testing.T) {
	yaml, _ := notionSource(t)
	c := newCLI(t, yaml)
	c.run(0, "create", "--title", "first")
	made := c.run(0, "create", "--title", "second").Task
	if !strings.HasPrefix(made.TaskID, "TASK-") {
		t.Fatalf("the emulator's ntask database prints keys as TASK-n, got %q", made.TaskID)
	}
	if got := c.run(0, "get", "--task", made.TaskID).Task; got.PageID != made.PageID {
		t.Fatalf("get --task %s found %+v", made.TaskID, got)
	}
	if got := c.run(0, "claim", "--task", strings.ToLower(made.TaskID), "--agent-name", "SANDMAN").Task; got.PageID != made.PageID || got.State != "claimed" {
		t.Fatalf("claim --task %s: %+v", made.TaskID, got)
	}
	if r := c.run(3, "get", "--task", "TASK-999"); !strings.Contains(r.Error.Message, "no such task") {
		t.Fatalf("get of a key nobody has: %+v", r.Error)
	}
}
