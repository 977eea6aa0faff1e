package ntask_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

// TestNtaskReap runs ntask 0.5's `reap` (openclaw-skills dbc57ff,
// ReapTests.swift's answer) on every backend: only a lock that expired
// past the grace goes back to Ready, a live lease stays, --dry-run writes
// nothing, and the answer is {"ok", "reaped": [{"task_id",
// "lock_expired_at"}], "count"} with exit status 0.
func TestNtaskReap(t *testing.T) {
	for _, b := range cmdtest.ReviewBackends {
		t.Run(b.Name, func(t *testing.T) {
			c := cmdtest.NewCLI(t, b.Yaml(t))
			home := t.TempDir()
			dead := c.Run(0, "create", "--title", "its agent died").Task.TaskID
			live := c.Run(0, "create", "--title", "its agent works").Task.TaskID
			expires := c.Run(0, "claim", "--task", dead, "--agent-name", "SANDMAN", "--lease", "1ms").Task.LockExpires
			c.Run(0, "claim", "--task", live, "--agent-name", "ORACLE")
			at, err := time.Parse(time.RFC3339, expires)
			if err != nil {
				t.Fatalf("lock_expires %q: %v", expires, err)
			}
			time.Sleep(time.Until(at.Add(10 * time.Millisecond))) // let the 1 ms lease end; nothing is timed

			reap := func(args ...string) map[string]any {
				t.Helper()
				v, code := cmdtest.NtaskIn(t, c, home, append([]string{"reap"}, args...)...)
				if code != 0 || v["ok"] != true {
					t.Fatalf("ntask reap %v exited %d: %v", args, code, v)
				}
				reaped, ok := v["reaped"].([]any)
				if !ok || v["count"] != float64(len(reaped)) {
					t.Fatalf("ntask reap %v: not 0.5's shape (reaped list, count): %v", args, v)
				}
				return v
			}
			if v := reap("--grace", "1h"); v["count"] != 0.0 {
				t.Fatalf("within the grace reap took %v", v)
			}
			if v := reap("--grace", "0s", "--dry-run"); v["count"] != 1.0 || v["dry_run"] != true {
				t.Fatalf("a dry run: %v", v)
			}
			if got := c.Run(0, "get", "--task", dead).Task; got.State != "claimed" {
				t.Fatalf("the dry run changed the task: %+v", got)
			}
			v := reap("--grace", "0s")
			entries := v["reaped"].([]any)
			if len(entries) != 1 {
				t.Fatalf("reap past the grace: %v, want the dead task alone", v)
			}
			e := entries[0].(map[string]any)
			keys := make([]string, 0, len(e))
			for k := range e {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			if !slices.Equal(keys, []string{"lock_expired_at", "task_id"}) || e["task_id"] != dead || e["lock_expired_at"] != expires {
				t.Fatalf("reaped entry %v, want task_id %s and lock_expired_at %s alone", e, dead, expires)
			}
			if got := c.Run(0, "get", "--task", dead).Task; got.State != "queued" || got.LockToken != "" {
				t.Fatalf("a reaped task: %+v, want back in the queue, free", got)
			}
			if got := c.Run(0, "get", "--task", live).Task; got.State != "claimed" || got.Agent != "ORACLE" {
				t.Fatalf("reap touched a live lease: %+v", got)
			}
			log, err := os.ReadFile(filepath.Join(c.Dir, "audit.jsonl"))
			if err != nil || !strings.Contains(string(log), `"action":"reap"`) {
				t.Fatalf("the audit log has no reap (%v):\n%s", err, log)
			}
		})
	}
}

// ntask reap without --grace waits the configured grace, no more and no
// less, and is recorded at door ntask.
func TestNtaskReapWaitsTheConfiguredGrace(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	conf, err := os.ReadFile(c.Conf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.Conf, append([]byte("grace: 1h\n"), conf...), 0o600); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	dead := c.Run(0, "create", "--title", "its agent died").Task.TaskID
	expires := c.Run(0, "claim", "--task", dead, "--agent-name", "SANDMAN", "--lease", "1ms").Task.LockExpires
	at, err := time.Parse(time.RFC3339, expires)
	if err != nil {
		t.Fatalf("lock_expires %q: %v", expires, err)
	}
	time.Sleep(time.Until(at.Add(10 * time.Millisecond))) // let the 1 ms lease end; nothing is timed
	if v, code := cmdtest.NtaskIn(t, c, home, "reap"); code != 0 || v["count"] != 0.0 {
		t.Fatalf("reap within the configured grace of 1h: exit %d %v", code, v)
	}
	// A configured grace shorter than the default is the one waited too.
	if err := os.WriteFile(c.Conf, append([]byte("grace: 1ms\n"), conf...), 0o600); err != nil {
		t.Fatal(err)
	}
	if v, code := cmdtest.NtaskIn(t, c, home, "reap"); code != 0 || v["count"] != 1.0 {
		t.Fatalf("reap past a configured grace of 1ms: exit %d %v", code, v)
	}
	log, err := os.ReadFile(filepath.Join(c.Dir, "audit.jsonl"))
	if err != nil || !strings.Contains(string(log), `"door":"ntask"`) || strings.Contains(string(log), `"door":"cli"`) {
		t.Fatalf("the reap is not journaled at door ntask (%v):\n%s", err, log)
	}
}
