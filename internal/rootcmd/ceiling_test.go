package rootcmd_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

// Issue 29: a lock file whose expires_at is in 9999 held its task forever
// and never showed on the ladder. Past the lease ceiling (24 h by default)
// after its holder's last sign of life it is on the ladder, named
// suspicious, marked by the sweep, and another agent can rescue the task.
func TestALeasePastTheCeilingIsSuspiciousAndRescued(t *testing.T) {
	c := cmdtest.NewCLI(t, "  - name: locks\n    kind: lockdir\n    path: DIR/locks\n")
	m := &meshCLI{CLI: c}
	conf, _ := os.ReadFile(c.Conf)
	if err := os.WriteFile(c.Conf, append(conf, "grace: 1ms\nmesh:\n  record: "+filepath.Join(c.Dir, "sweep.json")+"\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	seen := time.Now().Add(-30 * time.Hour).UTC().Format(time.RFC3339)
	lock := fmt.Sprintf(`{"task_id": "forever", "agent": "w-1", "claimed_at": %q, "heartbeat": %q, "expires_at": "9999-12-31T00:00:00Z", "lock_token": "5f0c2c1e-3c55-4f1c-9a55-2d1d0c1e2f3a", "title": "held forever"}`, seen, seen)
	if err := os.WriteFile(filepath.Join(c.Dir, "locks", "forever.lock"), []byte(lock), 0o600); err != nil {
		t.Fatal(err)
	}
	got := c.Run(0, "get", "--task", "forever").Task
	if got.Level == "" || !strings.Contains(got.StaleReason, "past the 24h0m0s ceiling") {
		t.Fatalf("a lease to 9999 reads as level %q reason %q, want on the ladder and suspicious", got.Level, got.StaleReason)
	}
	if r, _ := m.sweep(0); len(r.Marks) == 0 || !r.Marks[0].Applied {
		t.Fatalf("the sweep did not mark the suspicious claim: %+v", r.Marks)
	}
	if r := c.Run(0, "claim", "--task", "forever", "--agent-name", "w-2"); r.Task.Agent != "w-2" {
		t.Fatalf("the suspicious claim was not rescued: %+v", r.Task)
	}

	fresh := fmt.Sprintf(`{"task_id": "long", "agent": "w-3", "claimed_at": %q, "expires_at": "9999-12-31T00:00:00Z", "lock_token": "6f0c2c1e-3c55-4f1c-9a55-2d1d0c1e2f3a"}`, time.Now().UTC().Format(time.RFC3339))
	if err := os.WriteFile(filepath.Join(c.Dir, "locks", "long.lock"), []byte(fresh), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := c.Run(0, "get", "--task", "long").Task; got.Level != "" || !strings.Contains(got.StaleReason, "ceiling") {
		t.Fatalf("a fresh claim with a lease to 9999: level %q reason %q, want suspicious but not yet on the ladder", got.Level, got.StaleReason)
	}
	c.Run(2, "claim", "--task", "long", "--agent-name", "w-4")
}
