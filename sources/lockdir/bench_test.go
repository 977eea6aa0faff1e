package lockdir

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// queuedDir writes a tasks file of n tasks straight to disk (Create would
// dominate the setup) and opens a source on it, warmed.
func queuedDir(b *testing.B, n int) (*Source, []string) {
	b.Helper()
	dir := b.TempDir()
	ids := make([]string, n)
	entries := make([]wireEntry, n)
	for i := range ids {
		ids[i] = "job-" + strconv.Itoa(i)
		entries[i] = wireEntry{ID: ids[i], Title: "job"}
	}
	data, _ := json.Marshal(entries)
	if err := os.WriteFile(filepath.Join(dir, "tasks.json"), data, 0o644); err != nil {
		b.Fatal(err)
	}
	src, err := Open(Config{Name: "bench", Path: dir})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { src.Close() })
	return src, ids
}

// BenchmarkClaim is one Claim of a queued task (target: ≤ 200 µs).
func BenchmarkClaim(b *testing.B) {
	src, ids := queuedDir(b, b.N)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := src.Claim(ctx, ids[i], sources.ClaimRequest{Agent: "bench", RunID: "r"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClaimBaselineLink is the floor under a claim: write a temp file,
// link it to the lock name, remove the temp. No reading, no checking.
func BenchmarkClaimBaselineLink(b *testing.B) {
	dir := b.TempDir()
	body := (&record{TaskID: "x", Agent: "bench", ClaimedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour), LockToken: "t"}).marshal()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tmp, err := (&Source{fileMode: 0o644}).writeTemp(dir, body)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.Link(tmp, filepath.Join(dir, "job-"+strconv.Itoa(i)+".lock")); err != nil {
			b.Fatal(err)
		}
		os.Remove(tmp)
	}
}

// BenchmarkClaimSeedSnippet is the seed's own claim snippet (bash and
// python3), the way a seed 004 agent claims today.
func BenchmarkClaimSeedSnippet(b *testing.B) {
	root := b.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "project", ".locks"), 0o755); err != nil {
		b.Fatal(err)
	}
	script, _ := filepath.Abs(filepath.Join("testdata", "seed004", "claim.sh"))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command("bash", script)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "TASK_ID=job-"+strconv.Itoa(i), "AGENT_NAME=bench")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
}

// lockDirOf is a directory of n claimdeck lock files.
func lockDirOf(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	now := time.Now()
	for i := 0; i < n; i++ {
		id := "job-" + strconv.Itoa(i)
		r := &record{TaskID: id, Agent: "agent-" + strconv.Itoa(i%64), ClaimedAt: now, ExpiresAt: now.Add(time.Hour),
			Description: "Design and implement VPC Terraform module", LockToken: "0b7c6f1e-4f43-4d7a-9a52-" + strconv.Itoa(100000+i), HolderKind: "AGENT", RunID: "run-1"}
		if err := os.WriteFile(filepath.Join(dir, id+".lock"), r.marshal(), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// BenchmarkScan10k scans a directory of 10,000 lock files (target:
// ≤ 100 ms): cold (every file read and parsed), idle (nothing changed: a
// readdir and an lstat per file), and with one file rewritten.
func BenchmarkScan10k(b *testing.B) {
	dir := lockDirOf(b, 10_000)
	ctx := context.Background()
	b.Run("cold", func(b *testing.B) {
		defer reportCPU(b)()
		for i := 0; i < b.N; i++ {
			src, err := Open(Config{Name: "bench", Path: dir})
			if err != nil {
				b.Fatal(err)
			}
			d, err := src.Poll(ctx, "")
			if err != nil || len(d.Tasks) != 10000 {
				b.Fatalf("%d tasks, %v", len(d.Tasks), err)
			}
			src.Close()
		}
	})
	benchIncrementalPolls(b, ctx, dir)
	b.Run("baseline-readdir-lstat", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			n := 0
			if err := eachName(dir, false, func(name string) {
				if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
					n++
				}
			}); err != nil || n < 10000 {
				b.Fatalf("%d files, %v", n, err)
			}
		}
	})
}

// BenchmarkWatchLatency measures how long a lock file written by another
// process takes to be in a Poll result, through Watch (target: ≤ 100 ms).
func BenchmarkWatchLatency(b *testing.B) {
	dir := b.TempDir()
	src, err := Open(Config{Name: "bench", Path: dir})
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hints, err := src.Watch(ctx)
	if err != nil {
		b.Fatal(err)
	}
	d, err := src.Poll(ctx, "")
	if err != nil {
		b.Fatal(err)
	}
	cursor := d.Cursor
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LOCKDIR_WRITER=1", "LOCKDIR_DIR="+dir)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	answers := bufio.NewScanner(stdout)
	var total, worst time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		fmt.Fprintln(stdin, "write")
		if !answers.Scan() {
			b.Fatal("the writer process ended")
		}
		stamp, _ := strconv.ParseInt(answers.Text(), 10, 64)
		want := "remote-" + strconv.Itoa(i)
		for seen := false; !seen; {
			select {
			case <-hints:
			case <-time.After(5 * time.Second):
				b.Fatalf("no hint for %s", want)
			}
			d, err := src.Poll(ctx, cursor)
			if err != nil {
				b.Fatal(err)
			}
			cursor = d.Cursor
			for _, t := range d.Tasks {
				seen = seen || t.ID == want
			}
		}
		lat := time.Since(time.Unix(0, stamp))
		total += lat
		worst = max(worst, lat)
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "ms/visible")
	b.ReportMetric(float64(worst.Microseconds())/1000, "ms-worst")
}

// reportCPU reports the processor time the process spent per operation
// (user and system, every thread), which a loaded machine disturbs less
// than the wall clock; call the returned function when the loop ends.
func reportCPU(b *testing.B) func() {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	return func() {
		b.ReportMetric(float64((cpu()-start).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	}
}

// benchIncrementalPolls runs, over an open source on dir, a poll that
// reads a batch of unread history (when the first poll left some), then,
// with all of it read, an idle poll and a poll after one lock file (job-42)
// is rewritten, every poll with opt.
func benchIncrementalPolls(b *testing.B, ctx context.Context, dir string, opt ...sources.PollOption) {
	src, err := Open(Config{Name: "bench", Path: dir})
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	d, err := src.Poll(ctx, "", opt...)
	if err != nil {
		b.Fatal(err)
	}
	cursor := d.Cursor
	if len(src.view.unclassified) > 0 {
		b.Run("history-batch", func(b *testing.B) {
			defer reportCPU(b)()
			for i := 0; i < b.N; i++ {
				d, err := src.Poll(ctx, cursor, opt...)
				if err != nil || len(d.Tasks) != 0 {
					b.Fatalf("%d tasks, %v", len(d.Tasks), err)
				}
				cursor = d.Cursor
			}
		})
		for len(src.view.unclassified) > 0 {
			if d, err = src.Poll(ctx, cursor, opt...); err != nil {
				b.Fatal(err)
			}
			cursor = d.Cursor
		}
	}
	b.Run("idle", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			d, err := src.Poll(ctx, cursor, opt...)
			if err != nil || len(d.Tasks) != 0 {
				b.Fatalf("%d tasks, %v", len(d.Tasks), err)
			}
			cursor = d.Cursor
		}
	})
	b.Run("one-changed", func(b *testing.B) {
		p := filepath.Join(dir, "job-42.lock")
		for i := 0; i < b.N; i++ {
			body := fmt.Sprintf(`{"task_id": "job-42", "agent": "a", "claimed_at": "2026-02-06T10:30:00Z", "n": %d}`, i)
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				b.Fatal(err)
			}
			d, err := src.Poll(ctx, cursor, opt...)
			if err != nil || len(d.Tasks) != 1 {
				b.Fatalf("%d tasks, %v", len(d.Tasks), err)
			}
			cursor = d.Cursor
		}
	})
}

// BenchmarkClaimAgainstFloor alternates one Claim with one floor operation:
// publish (a temp file written, linked to a lock name, the temp removed)
// of a lock of the same size into the same directory, under a hidden name
// that is no task's. The same directory, not a sibling: on ext4 a file is
// created in its directory's block group, and on one kept without a
// journal that creation walks past the inodes the group freed in the
// last half minute, so two directories can differ several-fold in what
// the same create costs. It also times, alternated with both, a lookup of
// each name a task's state can live in (its held, live and archived
// files) for an id nobody uses. It reports the median of each and the
// claim's ratio to the floor.
func BenchmarkClaimAgainstFloor(b *testing.B) {
	src, ids := queuedDir(b, b.N)
	ctx := context.Background()
	claims := make([]time.Duration, 0, b.N)
	floors := make([]time.Duration, 0, b.N)
	lookups := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		t, err := src.Claim(ctx, ids[i], sources.ClaimRequest{Agent: "bench", RunID: "r"})
		if err != nil {
			b.Fatal(err)
		}
		claims = append(claims, time.Since(start))
		body, err := os.ReadFile(src.path(ids[i], kindLock))
		if err != nil || t.State != model.StateClaimed {
			b.Fatalf("%s after its claim: %v, %v", ids[i], t.State, err)
		}
		floorLock := filepath.Join(src.dir, ".cd-floor-"+ids[i]+".lock")
		start = time.Now()
		if err := src.publish(body, floorLock); err != nil {
			b.Fatal(err)
		}
		floors = append(floors, time.Since(start))
		unused := "unused-" + strconv.Itoa(i)
		start = time.Now()
		for k := kindLock; k < numKinds; k++ {
			if _, err := os.Lstat(src.path(unused, k)); err == nil {
				b.Fatalf("%s exists", src.path(unused, k))
			}
			if k <= kindQueued {
				if _, err := os.Lstat(src.heldPath(unused, k)); err == nil {
					b.Fatalf("%s exists", src.heldPath(unused, k))
				}
			}
		}
		lookups = append(lookups, time.Since(start))
	}
	b.StopTimer()
	median := func(d []time.Duration) time.Duration {
		slices.Sort(d)
		return d[len(d)/2]
	}
	claim, floor := median(claims), median(floors)
	b.ReportMetric(float64(claim.Microseconds()), "claim-µs")
	b.ReportMetric(float64(floor.Microseconds()), "floor-µs")
	b.ReportMetric(float64(median(lookups).Microseconds()), "lookups-µs")
	b.ReportMetric(float64(claim)/float64(floor), "claim/floor")
}
