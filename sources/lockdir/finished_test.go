package lockdir

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// writeMarker writes the seed's {id}.done or {id}.failed with status.
func writeMarker(t *testing.T, dir, id, suffix, status string) {
	t.Helper()
	now := time.Now().UTC()
	body := fmt.Sprintf(`{"task_id": %q, "agent": "seed-agent", "claimed_at": %q, "completed_at": %q, "status": %q}`,
		id, now.Add(-time.Hour).Format(time.RFC3339), now.Format(time.RFC3339), status)
	if err := os.WriteFile(filepath.Join(dir, id+suffix), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// next, claim-next and list --status READY --limit N open the lock and
// queued files only: a done or
// failed file decides a task that no content makes claimable. The tasks
// they leave unread are read by the next scan that wants them, a poll with
// or without a window, in the same source.
func TestNextAndClaimNextLeaveFinishedFilesUnopened(t *testing.T) {
	for _, window := range []bool{false, true} {
		dir := t.TempDir()
		writeTasksFile(t, dir, []string{"q-0", "q-1", "q-2"})
		seedLocks(t, dir, "live-", 3)
		for i := 0; i < 50; i++ {
			writeMarker(t, dir, fmt.Sprintf("done-%d", i), ".done", "completed")
		}
		writeMarker(t, dir, "in-review", ".done", "review")
		writeMarker(t, dir, "parked", ".failed", "blocked")
		writeMarker(t, dir, "q-2", ".done", "completed") // listed, and done
		ctx := context.Background()
		src := openDir(t, dir)
		disk := countDisk(t)
		next, err := src.Next(ctx, "agent")
		if err != nil || next == nil || next.ID != "q-0" {
			t.Fatalf("next: %v, %v", next, err)
		}
		if n := disk.count("open", dir); n != 3 {
			t.Errorf("next opened %d files, want the 3 locks: %v", n, disk.first(60))
		}
		disk.reset()
		got, err := src.ClaimNext(ctx, sources.ClaimRequest{Agent: "agent"})
		if err != nil || got == nil || got.ID != "q-0" {
			t.Fatalf("claim-next: %v, %v", got, err)
		}
		if n := disk.count("open", dir); n > 3+1 {
			t.Errorf("claim-next opened %d files, want the locks and its own: %v", n, disk.first(60))
		}
		disk.reset()
		first, more, err := sources.List(ctx, openDir(t, dir), model.StateQueued, 1)
		if err != nil || len(first) != 1 || first[0].ID != "q-1" || more != 0 {
			t.Errorf("list --status READY --limit 1: %v, %d more, %v", first, more, err)
		}
		// the source is opened here, and Open reads the tasks index's header
		if n := disk.count("open", dir) - disk.count("open", filepath.Join(dir, indexName)); n > 4 {
			t.Errorf("list --status READY opened %d task files, want the 4 locks: %v", n, disk.first(60))
		}
		var opt []sources.PollOption
		if window {
			opt = append(opt, sources.PollOption{FinishedAfter: time.Now().Add(-24 * time.Hour)})
		}
		d, err := src.Poll(ctx, "", opt...)
		if err != nil {
			t.Fatal(err)
		}
		tasks := byID(d.Tasks)
		for id, want := range map[string]model.State{"done-7": model.StateDone, "in-review": model.StateReview,
			"parked": model.StateBlocked, "q-2": model.StateDone, "q-0": model.StateClaimed, "q-1": model.StateQueued} {
			if tasks[id] == nil || tasks[id].State != want {
				t.Errorf("window %v: the poll after next has %s as %v, want %s", window, id, tasks[id], want)
			}
		}
		if len(d.Tasks) != 3+3+50+2 {
			t.Errorf("window %v: the poll has %d tasks, want 58", window, len(d.Tasks))
		}
	}
}
