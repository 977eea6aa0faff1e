package lockdir

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/sourcetest"
)

// claimdeckBinary is the claimdeck command built as the release is (no
// cgo, -trimpath, -s -w), or CLAIMDECK_NEW_BIN, copied with write calls:
// a binary the linker has just written through a memory map starts a few
// ms slower than a copy of it.
func claimdeckBinary(b *testing.B, dir string) string {
	built := os.Getenv("CLAIMDECK_NEW_BIN")
	if built == "" {
		built = filepath.Join(dir, "built")
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", built, "github.com/claimdeck/claimdeck/cmd/claimdeck")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("go build: %v\n%s", err, out)
		}
	}
	data, err := os.ReadFile(built)
	if err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(dir, "claimdeck")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		b.Fatal(err)
	}
	return bin
}

// BenchmarkAgentProcessesLockDir runs the calls on one task — `claim
// --task`, `heartbeat`, `complete` and `get` — as claimdeck processes, the
// way agents run them, on growthDir queues of 1,000 and 100,000 tasks and
// files, and `claimdeck --version` as the process floor. Each round runs
// every call at every size, starting with another each round. It reports
// each call's median wall time (ms) at each size and its growth. A claimed
// or completed task is put back (unmeasured), so the queues keep their
// size; complete's claim is made in this process, unmeasured.
func BenchmarkAgentProcessesLockDir(b *testing.B) {
	work := b.TempDir()
	bin := claimdeckBinary(b, work)
	sizes := []int{1_000, 100_000}
	if os.Getenv("CLAIMDECK_BENCH_SMALL") != "" {
		sizes = []int{100, 1_000}
	}
	type call struct {
		name string
		k    int                           // size index; -1: the floor
		run  func() (time.Duration, error) // the process's wall time alone
	}
	var calls []*call
	walls := map[string][][]time.Duration{}
	for k, n := range sizes {
		dir := growthDir(b, n)
		cfg := filepath.Join(work, fmt.Sprintf("config-%d.yaml", n))
		yaml := fmt.Sprintf("sources:\n  - name: locks\n    kind: lockdir\n    path: %s\naudit_log: %s\n", dir, filepath.Join(work, fmt.Sprintf("audit-%d.jsonl", n)))
		if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
			b.Fatal(err)
		}
		env := append(os.Environ(), "CLAIMDECK_CONFIG="+cfg, "HOME="+work, "XDG_DATA_HOME="+work)
		run := func(want string, args ...string) (time.Duration, error) {
			cmd := exec.Command(bin, args...)
			cmd.Env = env
			start := time.Now()
			out, err := cmd.CombinedOutput()
			d := time.Since(start)
			if err == nil && !bytes.Contains(out, []byte(want)) {
				err = fmt.Errorf("no %q in the answer", want)
			}
			if err != nil {
				return d, fmt.Errorf("claimdeck %v at %d: %v\n%s", args, n, err, out)
			}
			return d, nil
		}
		claimTask, doneTask, getTask, beatTask := "task-"+strconv.Itoa(n/2), "task-"+strconv.Itoa(n/2+1), "task-"+strconv.Itoa(n/2+2), "task-"+strconv.Itoa(n/2+3)
		src := openCold(b, dir)
		held, err := src.Claim(context.Background(), beatTask, sources.ClaimRequest{Agent: "bench-agent"}) // growthDir's locks carry no UUID token
		src.Close()
		if err != nil {
			b.Fatal(err)
		}
		calls = append(calls,
			&call{"claim-task", k, func() (time.Duration, error) {
				d, err := run("lock_token", "claim", "--task", claimTask, "--agent-name", "bench-agent")
				undo(b, dir, claimTask)
				return d, err
			}},
			&call{"heartbeat", k, func() (time.Duration, error) {
				return run(beatTask, "heartbeat", "--task", beatTask, "--lock-token", held.Claim().Token)
			}},
			&call{"complete", k, func() (time.Duration, error) {
				src := openCold(b, dir)
				t, err := src.Claim(context.Background(), doneTask, sources.ClaimRequest{Agent: "bench-agent"})
				src.Close()
				if err != nil {
					return 0, err
				}
				d, err := run(doneTask, "complete", "--task", doneTask, "--lock-token", t.Claim().Token)
				undo(b, dir, doneTask)
				return d, err
			}},
			&call{"get", k, func() (time.Duration, error) { return run(getTask, "get", "--task", getTask) }},
		)
	}
	calls = append(calls, &call{"version", -1, func() (time.Duration, error) {
		start := time.Now()
		err := exec.Command(bin, "--version").Run()
		return time.Since(start), err
	}})
	for _, c := range calls {
		if walls[c.name] == nil {
			walls[c.name] = make([][]time.Duration, len(sizes))
		}
	}
	timeCall := func(c *call) {
		d, err := c.run()
		if err != nil {
			b.Fatal(err)
		}
		if c.k >= 0 {
			walls[c.name][c.k] = append(walls[c.name][c.k], d)
		} else {
			walls[c.name][0] = append(walls[c.name][0], d)
		}
	}
	for _, c := range calls { // once each, unmeasured: checks the answers, warms the page cache and writes the tasks index
		if _, err := c.run(); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range calls {
			timeCall(calls[(i+j)%len(calls)])
		}
	}
	b.StopTimer()
	for _, name := range []string{"claim-task", "heartbeat", "complete", "get"} {
		sourcetest.ReportGrowth(b, sizes, walls[name], name+"-", "ms", time.Millisecond)
	}
	v := walls["version"][0]
	slices.Sort(v)
	b.ReportMetric(float64(v[len(v)/2])/float64(time.Millisecond), "version-ms")
}

// BenchmarkWriteFloorLockDir is the floor under the writes of the calls on
// one task, on growthDir queues of 1,000 and 100,000 tasks and files, the
// sizes alternated: a lock published in the directory (temp file, link,
// temp removed), renamed to a held name and back, and removed, as a claim,
// a complete and the benchmark's undo do, with no reading or checking.
// What grows here is the directory's, not claimdeck's.
func BenchmarkWriteFloorLockDir(b *testing.B) {
	sizes := []int{1_000, 100_000}
	if os.Getenv("CLAIMDECK_BENCH_SMALL") != "" {
		sizes = []int{100, 1_000}
	}
	srcs := make([]*Source, len(sizes))
	for k, n := range sizes {
		srcs[k] = openCold(b, growthDir(b, n))
		b.Cleanup(func() { srcs[k].Close() })
	}
	body := (&record{TaskID: "floor", Agent: "bench", ClaimedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour), LockToken: "t"}).marshal()
	walls := make([][]time.Duration, len(sizes))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range sizes {
			k := (i + j) % len(sizes)
			src, id := srcs[k], "floor-"+strconv.Itoa(i)
			start := time.Now()
			err := src.publish(body, src.path(id, kindLock))
			if err == nil {
				err = os.Rename(src.path(id, kindLock), src.heldPath(id, kindLock))
			}
			if err == nil {
				err = os.Rename(src.heldPath(id, kindLock), src.path(id, kindLock))
			}
			if err == nil {
				err = os.Remove(src.path(id, kindLock))
			}
			walls[k] = append(walls[k], time.Since(start))
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	sourcetest.ReportGrowth(b, sizes, walls, "", "µs", time.Microsecond)
}
