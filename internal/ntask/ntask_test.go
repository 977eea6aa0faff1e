package ntask_test

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/internal/ntask"
	"github.com/claimdeck/claimdeck/model"
)

// With several sources the skill's grammar, which has no --source, takes
// $NTASK_SOURCE or default_source, and otherwise answers 40 naming them.
func TestNtaskPicksOneSource(t *testing.T) {
	t.Setenv(cmdutil.EnvDefaultSource, "")
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource+"  - name: locks\n    kind: lockdir\n    path: DIR/.locks\n")
	home := t.TempDir()
	t.Setenv(ntask.EnvNtaskSource, "")
	out, code := cmdtest.NtaskIn(t, c, home, "list")
	msg := fmt.Sprint(out["error"])
	if code != 40 || !strings.Contains(msg, "local, locks") || !strings.Contains(msg, ntask.EnvNtaskSource) {
		t.Fatalf("list with two sources and none picked: exit %d %v, want 40 naming local, locks and %s", code, out, ntask.EnvNtaskSource)
	}
	t.Setenv(ntask.EnvNtaskSource, "locks")
	if out, code := cmdtest.NtaskIn(t, c, home, "create", "--title", "into the lock directory"); code != 0 {
		t.Fatalf("create with %s=locks: exit %d %v", ntask.EnvNtaskSource, code, out)
	}
	t.Setenv(ntask.EnvNtaskSource, "")
	conf, err := os.ReadFile(c.Conf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.Conf, append([]byte("default_source: locks\n"), conf...), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code = cmdtest.NtaskIn(t, c, home, "list")
	if code != 0 || out["count"] != float64(1) {
		t.Fatalf("list with default_source locks: exit %d %v, want the one task created there", code, out)
	}
	// $CLAIMDECK_DEFAULT_SOURCE comes before default_source, $NTASK_SOURCE before both.
	t.Setenv(cmdutil.EnvDefaultSource, "local")
	if out, code = cmdtest.NtaskIn(t, c, home, "list"); code != 0 || out["count"] != float64(0) {
		t.Fatalf("list with %s=local: exit %d %v, want local's empty queue", cmdutil.EnvDefaultSource, code, out)
	}
	t.Setenv(ntask.EnvNtaskSource, "locks")
	if out, code = cmdtest.NtaskIn(t, c, home, "list"); code != 0 || out["count"] != float64(1) {
		t.Fatalf("list with %s=locks and %s=local: exit %d %v, want the lock directory's task", ntask.EnvNtaskSource, cmdutil.EnvDefaultSource, code, out)
	}
}

// With no claimdeck configuration the binary's environment configures a
// Notion source; the token is named, never copied into the configuration.
func TestNtaskNotionFromEnvironment(t *testing.T) {
	t.Setenv("CLAIMDECK_CONFIG", "")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	t.Setenv(ntask.EnvNotionToken, "ntn_secret_value_1234567890")
	t.Setenv(ntask.EnvNotionDB, "0123456789abcdef0123456789abcdef")
	cfg, err := ntask.LoadNtaskConfig()
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Sources) != 1 {
		t.Fatalf("sources: %+v", cfg.Sources)
	}
	s := cfg.Sources[0]
	if s.Kind != "notion" || s.TokenEnv != ntask.EnvNotionToken || s.Token != "" || s.DatabaseID != "0123456789abcdef0123456789abcdef" || s.Schema != "ntask" {
		t.Fatalf("the source from the environment: %+v", s)
	}
	t.Setenv(ntask.EnvNotionToken, "")
	if cfg, err := ntask.LoadNtaskConfig(); err != nil || cfg.Sources[0].Kind != "sqlite" {
		t.Fatalf("without NOTION_TOKEN: %+v %v, want the embedded queue", cfg, err)
	}
}

// The holder's commands read the lock from the state file: none, or one
// for another task, is 40 as the binary answers; --lock-token still works.
func TestNtaskLockStateAnswers(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	home := t.TempDir()
	a, _ := cmdtest.NtaskIn(t, c, home, "create", "--title", "a", "--status", "Ready")
	b, _ := cmdtest.NtaskIn(t, c, home, "create", "--title", "b", "--status", "Ready")
	idA := a["task"].(map[string]any)["task_id"].(string)
	idB := b["task"].(map[string]any)["task_id"].(string)
	out, code := cmdtest.NtaskIn(t, c, home, "heartbeat", idA)
	if code != 40 || !strings.Contains(fmt.Sprint(out["error"]), "No active task claim") {
		t.Fatalf("heartbeat with no claim: exit %d %v", code, out)
	}
	claimed, code := cmdtest.NtaskIn(t, c, home, "claim", idA)
	if code != 0 {
		t.Fatalf("claim: exit %d %v", code, claimed)
	}
	token := claimed["task"].(map[string]any)["lock_token"].(string)
	if _, code := cmdtest.NtaskIn(t, c, t.TempDir(), "claim", idB); code != 0 {
		t.Fatalf("claim of b by another agent: exit %d", code)
	}
	out, code = cmdtest.NtaskIn(t, c, home, "block", idB, "--reason", "x", "--unblock-action", "y")
	if code != 40 || !strings.Contains(fmt.Sprint(out["error"]), "Lock state is for "+idA) {
		t.Fatalf("block of another task than the state's: exit %d %v", code, out)
	}
	if out, code := cmdtest.NtaskIn(t, c, t.TempDir(), "heartbeat", idA, "--lock-token", token); code != 0 {
		t.Fatalf("heartbeat with --lock-token and no state: exit %d %v", code, out)
	}
	if out, code := cmdtest.NtaskIn(t, c, home, "review", idA, "--summary", "done"); code != 0 {
		t.Fatalf("review: exit %d %v", code, out)
	}
	if _, err := ntask.LoadState(); err != ntask.ErrNoState {
		t.Fatalf("review left the lock state: %v", err)
	}
}

// The lifecycle rules as the issue lists them, each answered with the
// binary's code: review is 41 on open sub-tasks; escalate marks the claim
// and ends its lease; update refuses the statuses that belong to commands
// and a task another agent holds; approve and rework refuse a task not in
// Review and a rework without its reason.
func TestNtaskLifecycleRules(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	home, other := t.TempDir(), t.TempDir()
	id := func(out map[string]any) string { return out["task"].(map[string]any)["task_id"].(string) }
	code := func(args ...string) (map[string]any, int) { return cmdtest.NtaskIn(t, c, home, args...) }
	want := func(exit int, wantCode string, args ...string) map[string]any {
		t.Helper()
		out, got := code(args...)
		if got != exit || (wantCode != "" && fmt.Sprint(out["error"].(map[string]any)["code"]) != wantCode) {
			t.Fatalf("ntask %v: exit %d %v, want %d %s", args, got, out, exit, wantCode)
		}
		return out
	}
	parent := id(want(0, "", "create", "--title", "parent", "--status", "Ready", "--priority", "3"))
	want(0, "", "create", "--title", "child", "--parent", parent, "--status", "Ready")
	token := want(0, "", "claim", parent)["task"].(map[string]any)["lock_token"].(string)
	out := want(41, "INCOMPLETE_SUBTASKS", "review", parent, "--summary", "done")
	if out["task"].(map[string]any)["status"] != "In Progress" {
		t.Fatalf("the 41 answer does not carry the task as it is: %v", out)
	}
	if _, err := ntask.LoadState(); err != nil {
		t.Fatalf("a refused review dropped the lock state: %v", err)
	}
	want(21, "LOST_LOCK", "update", parent, "--priority", "1", "--lock-token", "1b4e28ba-2fa1-11d2-883f-0016d3cca427")
	if o, got := cmdtest.NtaskIn(t, c, other, "update", parent, "--priority", "1"); got != 20 {
		t.Fatalf("update of a task another agent holds: exit %d %v, want 20", got, o)
	}
	want(0, "", "update", parent, "--priority", "1")
	want(40, "MISCONFIGURED", "update", parent, "--status", "done")
	want(40, "MISCONFIGURED", "create", "--title", "x", "--priority", "4")
	want(40, "MISCONFIGURED", "approve", parent)
	want(40, "MISCONFIGURED", "rework", parent)

	esc := want(0, "", "escalate", parent)
	if esc["task"].(map[string]any)["escalation"] != "escalated" {
		t.Fatalf("escalate: %v, want the escalated mark", esc)
	}
	want(40, "MISCONFIGURED", "heartbeat", parent)
	want(21, "LOST_LOCK", "heartbeat", parent, "--lock-token", token)
}

// TestNtaskHumanCommandsReadTheTable checks ntask's human commands against
// the two places their words come from: the contract's description
// (commands.json at 75590fd) where it names the command, else the action's
// row in model.ActionRows; and their --reason is required exactly when
// model.Action.Needs says a reason is needed.
func TestNtaskHumanCommandsReadTheTable(t *testing.T) {
	raw, err := os.ReadFile("testdata/ntask-v1/commands.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Commands []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"commands"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	contract := map[string]string{}
	for _, c := range doc.Commands {
		contract[c.Name] = c.Description
	}
	root := (&ntask.Ntask{Env: &cmdutil.Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard}}).Root()
	for _, a := range []model.Action{model.ActionApprove, model.ActionRework, model.ActionUnblock, model.ActionCancel} {
		word := a.Row().Word
		cmd, _, err := root.Find([]string{word})
		if err != nil || cmd.Name() != word {
			t.Fatalf("ntask has no %s command: %v", word, err)
		}
		want, named := contract[word]
		if !named {
			want = a.Row().Help
		}
		if cmd.Short != want {
			t.Errorf("ntask %s says %q, want %q", word, cmd.Short, want)
		}
		required := false
		if f := cmd.Flags().Lookup("reason"); f != nil {
			_, required = f.Annotations[cobra.BashCompOneRequiredFlag]
		}
		if required != a.Needs().Reason {
			t.Errorf("ntask %s: --reason required %v, model.Action.Needs says %v", word, required, a.Needs().Reason)
		}
	}
}

// ntask approve and rework are the calling agent's, named by
// NOTION_AGENT_USER_ID and never the configured person: without it they
// are refused; the agent that sent the task to review cannot approve it;
// another agent can. Each refusal is in the task's shared trail, at door
// ntask, where another person reads it.
func TestNtaskApproveNamesTheCallingAgent(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	home := t.TempDir()
	t.Setenv(ntask.EnvNotionAgent, "w1")
	out, _ := cmdtest.NtaskIn(t, c, home, "create", "--title", "reviewed", "--status", "Ready")
	id := out["task"].(map[string]any)["task_id"].(string)
	page := out["task"].(map[string]any)["page_id"].(string)
	if out, code := cmdtest.NtaskIn(t, c, home, "claim", id); code != 0 {
		t.Fatalf("claim: exit %d %v", code, out)
	}
	if out, code := cmdtest.NtaskIn(t, c, home, "review", id, "--summary", "done"); code != 0 {
		t.Fatalf("review: exit %d %v", code, out)
	}
	refused := func(why string, args ...string) {
		t.Helper()
		out, code := cmdtest.NtaskIn(t, c, home, args...)
		if code != 40 || !strings.Contains(fmt.Sprint(out["error"]), why) {
			t.Fatalf("ntask %v: exit %d %v, want 40 saying %q", args, code, out, why)
		}
	}
	t.Setenv(ntask.EnvNotionAgent, "")
	refused("NOTION_AGENT_USER_ID", "approve", id)
	refused("NOTION_AGENT_USER_ID", "rework", id, "--reason", "again")
	t.Setenv(ntask.EnvNotionAgent, "w1")
	refused("cannot approve it too", "approve", id)
	t.Setenv(ntask.EnvNotionAgent, "ＨＵＭＡＮ:alice")
	refused("NOTION_AGENT_USER_ID", "approve", id)
	t.Setenv(ntask.EnvNotionAgent, "w2")
	if out, code := cmdtest.NtaskIn(t, c, home, "approve", id); code != 0 || out["task"].(map[string]any)["status"] != "Done" {
		t.Fatalf("approve by another agent: exit %d %v", code, out)
	}
	seen := cmdtest.SharedTrail(t, c, page, "approve", "rework")
	want := "(no name given) approve ntask MISCONFIGURED; (no name given) rework ntask MISCONFIGURED; w1 approve ntask MISCONFIGURED; (a refused name) approve ntask MISCONFIGURED; w2 approve ntask applied"
	if strings.Join(seen, "; ") != want {
		t.Fatalf("approve and rework in the shared trail:\n%s\nwant\n%s", strings.Join(seen, "; "), want)
	}
}

// ntask update --status Ready of a Blocked task is refused (unblock is a
// person's audited action), and the refusal is in the shared trail at
// door ntask.
func TestNtaskUpdateDoesNotUnblockAndTheRefusalIsShared(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	home := t.TempDir()
	t.Setenv(ntask.EnvNotionAgent, "w1")
	out, _ := cmdtest.NtaskIn(t, c, home, "create", "--title", "needs keys", "--status", "Ready")
	id := out["task"].(map[string]any)["task_id"].(string)
	page := out["task"].(map[string]any)["page_id"].(string)
	for _, step := range [][]string{{"claim", id}, {"block", id, "--reason", "no keys", "--unblock-action", "ops"}} {
		if out, code := cmdtest.NtaskIn(t, c, home, step...); code != 0 {
			t.Fatalf("ntask %v: exit %d %v", step, code, out)
		}
	}
	if out, code := cmdtest.NtaskIn(t, c, home, "update", id, "--status", "Ready"); code != 40 || !strings.Contains(fmt.Sprint(out["error"]), "unblock") {
		t.Fatalf("update --status Ready of a blocked task: exit %d %v", code, out)
	}
	if seen := cmdtest.SharedTrail(t, c, page, "update"); strings.Join(seen, "; ") != "w1 update ntask MISCONFIGURED" {
		t.Fatalf("the refused update in the shared trail: %q", seen)
	}
}
