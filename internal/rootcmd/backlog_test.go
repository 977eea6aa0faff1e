package rootcmd_test

import (
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

// ntask's create parks a task in Backlog (Create.swift's default) on
// every backend: next never pulls it, and `update --status Ready`
// releases it into the queue, where next finds it.
func TestNtaskCreateParksInBacklogUntilReleased(t *testing.T) {
	for _, b := range cmdtest.ReviewBackends {
		t.Run(b.Name, func(t *testing.T) {
			c := cmdtest.NewCLI(t, b.Yaml(t))
			home := t.TempDir()
			made, code := cmdtest.NtaskIn(t, c, home, "create", "--title", "untriaged idea")
			task, _ := made["task"].(map[string]any)
			if code != 0 || task == nil {
				t.Fatalf("ntask create: exit %d %v", code, made)
			}
			id, _ := task["task_id"].(string)
			want := "Backlog"
			if b.Name == "notion" { // seed 002's database has no Backlog option: parked as Blocked
				want = "Blocked"
			}
			if task["status"] != want {
				t.Fatalf("ntask create: status %v, want %s", task["status"], want)
			}
			if next, code := cmdtest.NtaskIn(t, c, home, "next"); code != 10 || next["task"] != nil {
				t.Fatalf("ntask next offered a task nobody triaged: exit %d %v", code, next)
			}
			if got := c.Run(0, "get", "--task", task["page_id"].(string)).Task; got.State != "blocked" {
				t.Fatalf("claimdeck reads the backlog task as %q, want it with the parked ones", got.State)
			}
			up, code := cmdtest.NtaskIn(t, c, home, "update", id, "--status", "Ready")
			if got, _ := up["task"].(map[string]any); code != 0 || got["status"] != "Ready" {
				t.Fatalf("ntask update --status Ready: exit %d %v", code, up)
			}
			next, code := cmdtest.NtaskIn(t, c, home, "next")
			if got, _ := next["task"].(map[string]any); code != 0 || got["task_id"] != id {
				t.Fatalf("ntask next after the release: exit %d %v", code, next)
			}
			ready, code := cmdtest.NtaskIn(t, c, home, "create", "--title", "triaged", "--status", "Ready")
			if got, _ := ready["task"].(map[string]any); code != 0 || got["status"] != "Ready" {
				t.Fatalf("ntask create --status Ready: exit %d %v", code, ready)
			}
		})
	}
}
