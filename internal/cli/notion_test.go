package cli_test

import (
	"os"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

func TestNotionAgentContract(t *testing.T) {
	c, _ := cmdtest.NotionCLI(t)
	id := c.Run(0, "create", "--title", "Design VPC module", "--priority", "3", "--class", "EXPEDITE").Task.PageID
	claim := c.Run(0, "claim", "--task", id, "--agent-name", "SANDMAN", "--run-id", "run-1")
	tok := claim.Task.LockToken
	if claim.Task.ClaimedBy != "AGENT" || claim.Task.Agent != "SANDMAN" || tok == "" {
		t.Fatalf("claim: %+v", claim.Task)
	}
	if r := c.Run(2, "claim", "--task", id, "--agent-name", "ORACLE"); r.Error.Code != "CONFLICT" {
		t.Fatalf("claim of a held task: %+v", r.Error)
	}
	if r := c.Run(0, "next", "--agent-name", "ORACLE"); r.Task != nil {
		t.Fatalf("next with nothing eligible must print task null, got %+v", r.Task)
	}
	c.Run(0, "heartbeat", "--task", id, "--lock-token", tok)
	released := c.Run(0, "release", "--force", "--yes", "--task", id, "--reason", "agent wedged")
	if released.Task.Status != "READY" || released.Task.LockToken != "" {
		t.Fatalf("after release --force: %+v", released.Task)
	}
	if r := c.Run(4, "heartbeat", "--task", id, "--lock-token", tok); r.Error.Code != "LOST_LOCK" {
		t.Fatalf("heartbeat after force-release: %+v", r.Error)
	}
	if next := c.Run(0, "next", "--agent-name", "ORACLE"); next.Task == nil || next.Task.PageID != id {
		t.Fatalf("next after the release = %+v", next.Task)
	}
}

func TestNotionTokenRejectedIsMisconfiguredWithoutTheToken(t *testing.T) {
	c, w := cmdtest.NotionCLI(t)
	bad := "secret_wrong_" + strings.Repeat("x", 20)
	conf := strings.ReplaceAll(notionReadConf(t, c.Conf), w.Token, bad)
	notionWriteConf(t, c.Conf, conf)
	r := c.Run(3, "next", "--agent-name", "SANDMAN")
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
	c, _ := cmdtest.NotionCLI(t)
	conf := notionReadConf(t, c.Conf)
	notionWriteConf(t, c.Conf, strings.Replace(conf, "    schema: ntask\n",
		"    schema: ntask\n    properties:\n      holder: Owner\n    statuses:\n      queued: READY\n", 1))
	if r := c.Run(3, "next", "--agent-name", "SANDMAN"); !strings.Contains(r.Error.Message, "Owner") {
		t.Fatalf("a mapping naming a missing property: %+v", r.Error)
	}
	notionWriteConf(t, c.Conf, strings.Replace(conf, "    schema: ntask\n",
		"    schema: ntask\n    properties:\n      holdr: Agent\n", 1))
	if r := c.Run(3, "next", "--agent-name", "SANDMAN"); !strings.Contains(r.Error.Message, `unknown role "holdr"`) {
		t.Fatalf("a mistyped role: %+v", r.Error)
	}
	notionWriteConf(t, c.Conf, strings.Replace(conf, "    schema: ntask\n",
		"    schema: custom\n    properties:\n      holder: Agent\n", 1))
	if r := c.Run(0, "next", "--agent-name", "SANDMAN"); !r.OK {
		t.Fatalf("a custom mapping equal to the database: %+v", r.Error)
	}
}

// The task_id list and get print (TASK-3) is accepted by get and claim,
// as the page id is.
func TestNotionTaskKeyIsAcceptedByGetAndClaim(t *testing.T) {
	yaml, _ := cmdtest.NotionSource(t)
	c := cmdtest.NewCLI(t, yaml)
	c.Run(0, "create", "--title", "first")
	made := c.Run(0, "create", "--title", "second").Task
	if !strings.HasPrefix(made.TaskID, "TASK-") {
		t.Fatalf("the emulator's ntask database prints keys as TASK-n, got %q", made.TaskID)
	}
	if got := c.Run(0, "get", "--task", made.TaskID).Task; got.PageID != made.PageID {
		t.Fatalf("get --task %s found %+v", made.TaskID, got)
	}
	if got := c.Run(0, "claim", "--task", strings.ToLower(made.TaskID), "--agent-name", "SANDMAN").Task; got.PageID != made.PageID || got.State != "claimed" {
		t.Fatalf("claim --task %s: %+v", made.TaskID, got)
	}
	if r := c.Run(3, "get", "--task", "TASK-999"); !strings.Contains(r.Error.Message, "no such task") {
		t.Fatalf("get of a key nobody has: %+v", r.Error)
	}
}

// A Notion source's trail key comes from the variable trail_key_env
// names: the notes a process signs with the team's key are read back as
// claimdeck's events by another with the same key, and as comments (never
// as events) by one with another key; a trail_key_env whose variable is
// empty is refused, naming it.
func TestNotionTrailKeyFromTheEnvironment(t *testing.T) {
	yaml, _ := cmdtest.NotionSource(t)
	keyed := func(env string) *cmdtest.CLI {
		return cmdtest.NewCLI(t, yaml+"    trail_key_env: "+env+"\n")
	}
	t.Setenv("TEAM_TRAIL_KEY", "9c1d0e7a4b2f43d8a61e5f0b7c3d2e19")
	t.Setenv("OTHER_TRAIL_KEY", "0f3b8e2d6a1c47e9b5d4c2a1f0e9d8c7")
	t.Setenv("EMPTY_TRAIL_KEY", "")
	team := keyed("TEAM_TRAIL_KEY")
	id := team.Run(0, "create", "--title", "Rotate keys").Task.PageID
	team.Run(0, "claim", "--task", id, "--agent-name", "SANDMAN")
	team.Run(0, "release", "--force", "--yes", "--task", id, "--reason", "agent wedged")
	released := func(c *cmdtest.CLI) bool {
		for _, e := range cmdtest.History(t, c, id) {
			if e.Action == "force-release" && e.Actor == "alice" {
				return true
			}
		}
		return false
	}
	if !released(keyed("TEAM_TRAIL_KEY")) {
		t.Fatalf("another process with the team's key does not read the force-release:\n%+v", cmdtest.History(t, keyed("TEAM_TRAIL_KEY"), id))
	}
	if released(keyed("OTHER_TRAIL_KEY")) {
		t.Fatalf("a note signed with another key was read as claimdeck's event")
	}
	if r := keyed("EMPTY_TRAIL_KEY").Run(3, "get", "--task", id); !strings.Contains(r.Error.Message, "EMPTY_TRAIL_KEY") {
		t.Fatalf("an empty trail key: %+v", r.Error)
	}
}
