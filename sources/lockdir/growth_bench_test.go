package lockdir

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/sourcetest"
)

// growthDir is a seed 004 queue of n tasks: a tasks file listing them,
// none claimed yet, beside n files of finished work (the seed's .done
// markers of other tasks, not yet archived by its cleanup) and 10 live
// locks. n tasks and n files: what the queue's size costs a call shows in
// both.
func growthDir(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	now := time.Now().UTC()
	entries := make([]wireEntry, n)
	for i := range entries {
		entries[i] = wireEntry{ID: "task-" + strconv.Itoa(i), Title: "queued task " + strconv.Itoa(i), Priority: 2}
	}
	data, err := json.Marshal(entries)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tasks.json"), data, 0o644); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		id := "done-" + strconv.Itoa(i)
		r := &record{TaskID: id, Agent: "agent-" + strconv.Itoa(i%64), ClaimedAt: now.Add(-time.Hour), CompletedAt: now, Status: "completed",
			Description: "Design and implement VPC Terraform module"}
		if err := os.WriteFile(filepath.Join(dir, id+".done"), r.marshal(), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < 10; i++ {
		id := "held-" + strconv.Itoa(i)
		r := &record{TaskID: id, Agent: "agent-" + strconv.Itoa(i), ClaimedAt: now, ExpiresAt: now.Add(time.Hour), HolderKind: "AGENT",
			LockToken: "tok-" + id, Description: "Design and implement VPC Terraform module"}
		if err := os.WriteFile(filepath.Join(dir, id+".lock"), r.marshal(), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// lockCall is one agent call as a process makes it: a source opened cold
// on dir, then the call. It returns the call's wall time, open included,
// and leaves the queue as it found it (unmeasured).
type lockCall struct {
	name string
	step func(tb testing.TB, dir string, n int) time.Duration
}

func openCold(tb testing.TB, dir string) *Source {
	src, err := Open(Config{Name: "bench", Path: dir})
	if err != nil {
		tb.Fatal(err)
	}
	return src
}

// undo removes what a call wrote for id, so that the task is queued again.
func undo(tb testing.TB, dir, id string) {
	for _, k := range []string{".lock", ".done", ".failed", ".queued"} {
		if err := os.Remove(filepath.Join(dir, id+k)); err != nil && !os.IsNotExist(err) {
			tb.Fatal(err)
		}
	}
}

var lockCalls = []lockCall{
	{"next", func(tb testing.TB, dir string, n int) time.Duration {
		return sourcetest.Timed(tb, "next", func() error {
			src := openCold(tb, dir)
			defer src.Close()
			t, err := src.Next(context.Background(), "bench-agent")
			if err == nil && t == nil {
				err = fmt.Errorf("no task")
			}
			return err
		})
	}},
	{"claim", func(tb testing.TB, dir string, n int) time.Duration {
		var t *model.Task
		d := sourcetest.Timed(tb, "claim", func() (err error) {
			src := openCold(tb, dir)
			defer src.Close()
			t, err = src.ClaimNext(context.Background(), sources.ClaimRequest{Agent: "bench-agent"})
			if err == nil && t == nil {
				err = fmt.Errorf("no task")
			}
			return err
		})
		undo(tb, dir, t.ID)
		return d
	}},
	{"claim-task", func(tb testing.TB, dir string, n int) time.Duration {
		id := "task-" + strconv.Itoa(n/2)
		d := sourcetest.Timed(tb, "claim --task", func() error {
			src := openCold(tb, dir)
			defer src.Close()
			_, err := src.Claim(context.Background(), id, sources.ClaimRequest{Agent: "bench-agent"})
			return err
		})
		undo(tb, dir, id)
		return d
	}},
	{"heartbeat", func(tb testing.TB, dir string, n int) time.Duration {
		return sourcetest.Timed(tb, "heartbeat", func() error {
			src := openCold(tb, dir)
			defer src.Close()
			_, err := src.Heartbeat(context.Background(), "held-3", "tok-held-3", 0)
			return err
		})
	}},
	{"complete", func(tb testing.TB, dir string, n int) time.Duration {
		id := "task-" + strconv.Itoa(n/2+1)
		src := openCold(tb, dir)
		t, err := src.Claim(context.Background(), id, sources.ClaimRequest{Agent: "bench-agent"})
		src.Close()
		if err != nil {
			tb.Fatal(err)
		}
		d := sourcetest.Timed(tb, "complete", func() error {
			src := openCold(tb, dir)
			defer src.Close()
			_, err := src.Finish(context.Background(), id, t.Claim().Token, sources.Outcome{State: model.StateDone})
			return err
		})
		undo(tb, dir, id)
		return d
	}},
	{"get", func(tb testing.TB, dir string, n int) time.Duration {
		return sourcetest.Timed(tb, "get", func() error {
			src := openCold(tb, dir)
			defer src.Close()
			_, err := src.Get(context.Background(), "task-"+strconv.Itoa(n/2+2))
			return err
		})
	}},
	{"list-ready-20", func(tb testing.TB, dir string, n int) time.Duration {
		return sourcetest.Timed(tb, "list", func() error {
			src := openCold(tb, dir)
			defer src.Close()
			tasks, _, err := sources.List(context.Background(), src, model.StateQueued, 20)
			if err == nil && len(tasks) != 20 {
				err = fmt.Errorf("%d tasks, want 20", len(tasks))
			}
			return err
		})
	}},
}

// BenchmarkAgentCallsLockDir makes each agent call as a process makes it
// (a source opened cold, then the call) on growthDir queues of 1,000 and
// 100,000 tasks and files, the sizes alternated in each round, and reports
// each size's median (µs), the growth from the smaller to the larger, and
// what one call does on disk at each size: directory listings, lstats and
// opens (onDisk; the tasks file's read is one more).
func BenchmarkAgentCallsLockDir(b *testing.B) {
	sizes := []int{1_000, 100_000}
	if os.Getenv("CLAIMDECK_BENCH_SMALL") != "" {
		sizes = []int{100, 1_000}
	}
	dirs := make([]string, len(sizes))
	for k, n := range sizes {
		dirs[k] = growthDir(b, n)
	}
	for _, call := range lockCalls {
		b.Run(call.name, func(b *testing.B) {
			walls := make([][]time.Duration, len(sizes))
			ops := make([]map[string]*atomic.Int64, len(sizes))
			for k, n := range sizes { // once each, unmeasured, counting what it does on disk
				ops[k] = map[string]*atomic.Int64{"list": {}, "lstat": {}, "open": {}}
				prev := onDisk
				onDisk = func(op, _ string) { ops[k][op].Add(1) }
				call.step(b, dirs[k], n)
				onDisk = prev
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for k := range sizes {
					j := (i + k) % len(sizes)
					walls[j] = append(walls[j], call.step(b, dirs[j], sizes[j]))
				}
			}
			b.StopTimer()
			sourcetest.ReportGrowth(b, sizes, walls, "", "µs", time.Microsecond)
			for k, n := range sizes {
				for _, op := range []string{"list", "lstat", "open"} {
					b.ReportMetric(float64(ops[k][op].Load()), sourcetest.SizeLabel(n)+"-"+op+"s")
				}
			}
		})
	}
}
