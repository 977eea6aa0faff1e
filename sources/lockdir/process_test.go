package lockdir

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// The test binary doubles as a worker process: with LOCKDIR_WORKER set it
// drains the directory named by LOCKDIR_DIR instead of running tests, and
// with LOCKDIR_WRITER set it writes lock files on request (the benchmark of
// watch latency), and with LOCKDIR_CRASH set it runs one change and is
// killed in the middle (crash_test.go).
func TestMain(m *testing.M) {
	switch {
	case os.Getenv("LOCKDIR_WORKER") != "":
		os.Exit(drain(os.Getenv("LOCKDIR_DIR"), os.Getenv("LOCKDIR_WORKER")))
	case os.Getenv("LOCKDIR_WRITER") != "":
		os.Exit(writeOnRequest(os.Getenv("LOCKDIR_DIR")))
	case os.Getenv("LOCKDIR_CRASH") != "":
		os.Exit(crashChild())
	}
	os.Exit(m.Run())
}

// drain claims and completes until the queue stays empty, printing
// "claim ID", "done ID" and, for each zombie write (a heartbeat with the
// token just used to complete) that was accepted, "zombie ID".
func drain(dir, agent string) int {
	src, err := Open(Config{Name: "shared", Path: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer src.Close()
	ctx := context.Background()
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for idle := 0; idle < 3; {
		task, err := src.ClaimNext(ctx, sources.ClaimRequest{Agent: agent})
		if err != nil {
			fmt.Fprintln(os.Stderr, "claim-next:", err)
			return 1
		}
		if task == nil {
			idle++
			continue
		}
		fmt.Fprintln(out, "claim", task.ID)
		if _, err := src.Finish(ctx, task.ID, task.Claim().Token, sources.Outcome{State: model.StateDone, Artifacts: agent}); err != nil {
			fmt.Fprintln(os.Stderr, "complete:", err)
			return 1
		}
		fmt.Fprintln(out, "done", task.ID)
		if _, err := src.Heartbeat(ctx, task.ID, task.Claim().Token, 0); model.CodeOf(err) != model.CodeLostLock {
			fmt.Fprintln(out, "zombie", task.ID)
		}
	}
	return 0
}

func TestEightProcessesDrainingOneDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns 8 processes")
	}
	const procs, tasks = 8, 400
	dir := t.TempDir()
	src, err := Open(Config{Name: "shared", Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ctx := context.Background()
	for i := 0; i < tasks; i++ {
		if _, err := src.Create(ctx, sources.NewTask{ID: fmt.Sprintf("job-%03d", i), Title: "job", Priority: i % 4}); err != nil {
			t.Fatal(err)
		}
	}
	var (
		mu                     sync.Mutex
		claims, dones, zombies = map[string]int{}, map[string]int{}, 0
		wg                     sync.WaitGroup
	)
	start := time.Now()
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "LOCKDIR_WORKER=proc-"+strconv.Itoa(p), "LOCKDIR_DIR="+dir)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("worker %d: %v\n%s", p, err, stderr.String())
			}
			mu.Lock()
			defer mu.Unlock()
			for _, line := range strings.Split(string(out), "\n") {
				what, id, _ := strings.Cut(line, " ")
				switch what {
				case "claim":
					claims[id]++
				case "done":
					dones[id]++
				case "zombie":
					zombies++
				}
			}
		}(p)
	}
	wg.Wait()
	elapsed := time.Since(start)
	doubleClaims, doubleDones := 0, 0
	for _, n := range claims {
		doubleClaims += n - 1
	}
	for _, n := range dones {
		doubleDones += n - 1
	}
	lost := 0
	for i := 0; i < tasks; i++ {
		id := fmt.Sprintf("job-%03d", i)
		data, err := os.ReadFile(filepath.Join(dir, id+".done"))
		r, problem := parseLock(data)
		if err != nil || problem != "" || r.Status != "completed" {
			lost++
		}
	}
	t.Logf("%d processes, %d tasks: %d claims, %d completions in %v (%.0f cycles/s); double claims %d, double completions %d, accepted zombie writes %d, missing .done %d",
		procs, tasks, len(claims), len(dones), elapsed.Round(time.Millisecond), float64(len(dones))/elapsed.Seconds(), doubleClaims, doubleDones, zombies, lost)
	if doubleClaims != 0 || doubleDones != 0 || zombies != 0 || lost != 0 || len(dones) != tasks {
		t.Fatal("the processes did not share the directory safely")
	}
}

// writeOnRequest writes one lock file for every line read from stdin and
// answers with the wall-clock time taken just before writing.
func writeOnRequest(dir string) int {
	in := bufio.NewScanner(os.Stdin)
	for i := 0; in.Scan(); i++ {
		id := fmt.Sprintf("remote-%d", i)
		body := fmt.Sprintf(`{"task_id": %q, "agent": "remote", "claimed_at": %q}`, id, time.Now().UTC().Format(time.RFC3339))
		stamp := time.Now().UnixNano()
		if err := os.WriteFile(filepath.Join(dir, id+".lock"), []byte(body), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println(stamp)
	}
	return 0
}
