package lockdir

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// crashCase is one change of a lock directory, run in a child process that
// is killed after its step N, for every N.
type crashCase struct {
	op string
	// dead makes the task's claim one whose holder died a grace ago.
	dead bool
	// after is the state the change leaves the task in.
	after model.State
	// holder is who holds the task after the change ("" when nobody).
	holder string
}

var crashCases = []crashCase{
	{op: "claim", after: model.StateClaimed, holder: "CRASHER"},
	{op: "rescue", dead: true, after: model.StateClaimed, holder: "CRASHER"},
	{op: "heartbeat", after: model.StateClaimed, holder: "SANDMAN"},
	{op: "complete", after: model.StateDone},
	{op: "fail", after: model.StateFailed},
	{op: "block", after: model.StateBlocked},
	{op: "release", after: model.StateQueued},
	{op: "handoff", after: model.StateQueued},
	{op: "agent-handoff", after: model.StateQueued},
	{op: "takeover", after: model.StateClaimed, holder: "HUMAN:alice"},
	{op: "cancel", after: model.StateCanceled},
	{op: "mark", after: model.StateClaimed, holder: "SANDMAN"},
}

// crashChild is the child process: it runs one change on the task, and
// afterStep kills it with SIGKILL after step LOCKDIR_CRASH_AT. It prints
// "finished" when the change had fewer steps than that.
func crashChild() int {
	at, _ := strconv.Atoi(os.Getenv("LOCKDIR_CRASH_AT"))
	n := 0
	afterStep = func(step string) {
		if n++; n == at {
			fmt.Fprintln(os.Stderr, "killed after:", step)
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way
		}
	}
	src, err := Open(Config{Name: "crash", Path: os.Getenv("LOCKDIR_DIR"), Lease: 20 * time.Minute})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := runChange(src, os.Getenv("LOCKDIR_CRASH"), os.Getenv("LOCKDIR_TOKEN"), os.Getenv("LOCKDIR_VERSION")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("finished")
	return 0
}

const crashTask = "deploy-vpc"

// runChange applies op to crashTask as its holder (token) or as a human who
// saw version.
func runChange(src *Source, op, token, version string) error {
	ctx := context.Background()
	human := sources.Human{Actor: "alice", Reason: "crash test", Expect: version}
	var err error
	switch op {
	case "claim":
		_, err = src.Claim(ctx, crashTask, sources.ClaimRequest{Agent: "CRASHER"})
	case "rescue":
		var t *model.Task
		if t, err = src.ClaimNext(ctx, sources.ClaimRequest{Agent: "CRASHER"}); err == nil && t == nil {
			err = errors.New("claim-next found nothing to rescue")
		}
	case "heartbeat":
		_, err = src.Heartbeat(ctx, crashTask, token, 0)
	case "complete":
		_, err = src.Finish(ctx, crashTask, token, sources.Outcome{State: model.StateDone, Artifacts: "pr/1"})
	case "fail":
		_, err = src.Finish(ctx, crashTask, token, sources.Outcome{State: model.StateFailed, Reason: "broke"})
	case "block":
		_, err = src.Finish(ctx, crashTask, token, sources.Outcome{State: model.StateBlocked, Reason: "creds"})
	case "release":
		_, err = src.ForceRelease(ctx, crashTask, human)
	case "handoff":
		_, err = src.Handoff(ctx, crashTask, sources.Handoff{Human: human, To: "ORACLE"})
	case "agent-handoff":
		_, err = src.Handoff(ctx, crashTask, sources.Handoff{Human: sources.Human{Actor: "SANDMAN"}, Token: token, To: "ORACLE"})
	case "takeover":
		_, err = src.Takeover(ctx, crashTask, human)
	case "cancel":
		_, err = src.Cancel(ctx, crashTask, human)
	case "mark":
		err = src.MarkEscalation(ctx, crashTask, token, model.LevelStale)
	default:
		err = fmt.Errorf("no change %q", op)
	}
	return err
}

// "Every multi-step change leaves a directory that reads correctly if the
// process dies after any step": each change is killed after each of its
// steps in turn, and then the task must read as before the change or as
// after it — never queued under a running lease, never broken — and the
// change, retried, must finish it.
func TestKilledAfterEveryStep(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process per step")
	}
	for _, c := range crashCases {
		t.Run(c.op, func(t *testing.T) {
			steps := 0
			for at := 1; ; at++ {
				if finished := crashOnce(t, c, at); finished {
					break
				}
				steps++
			}
			if steps == 0 {
				t.Fatalf("%s was never killed: the change reports no steps", c.op)
			}
			t.Logf("%s: killed after each of %d steps", c.op, steps)
		})
	}
}

// crashOnce sets up a directory, runs the change killed after step at, and
// checks what the directory reads as. finished is true when the change had
// fewer steps than at.
func crashOnce(t *testing.T, c crashCase, at int) (finished bool) {
	t.Helper()
	dir := t.TempDir()
	src := openAt(t, dir)
	ctx := context.Background()
	if _, err := src.Create(ctx, sources.NewTask{ID: crashTask, Title: "Design the VPC module"}); err != nil {
		t.Fatal(err)
	}
	var before *model.Task
	if c.op == "claim" {
		before = get(t, src)
	} else {
		var err error
		if before, err = src.Claim(ctx, crashTask, sources.ClaimRequest{Agent: "SANDMAN"}); err != nil {
			t.Fatal(err)
		}
	}
	if c.dead {
		backdate(t, src, crashTask, 20*time.Minute+model.DefaultPolicy().Grace)
		before = get(t, src)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LOCKDIR_CRASH="+c.op, "LOCKDIR_CRASH_AT="+strconv.Itoa(at), "LOCKDIR_DIR="+dir,
		"LOCKDIR_TOKEN="+before.Claim().Token, "LOCKDIR_VERSION="+before.Version)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil && strings.Contains(string(out), "finished"):
		finished = true
	case errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL:
	default:
		t.Fatalf("%s, step %d: the child failed: %v\n%s", c.op, at, err, out)
	}
	what := fmt.Sprintf("%s killed after step %d (%s)", c.op, at, strings.TrimSpace(string(out)))

	// A reader that takes no lock: what the dashboard and the seed's
	// agents see before anyone repairs anything.
	got := get(t, openAt(t, dir))
	checkReads(t, what, c, before, got)

	// The next change of the task settles the directory; its reading
	// stays the same, and no file is left aside.
	fresh := openAt(t, dir)
	unlock, err := fresh.lockTask(context.Background(), "check", crashTask)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if settled := get(t, fresh); settled.State != got.State || settled.Claim().Token != got.Claim().Token {
		t.Fatalf("%s: settling changed the task from %s to %s", what, describeTask(got), describeTask(settled))
	}
	if held, _ := filepath.Glob(filepath.Join(dir, heldPrefix+"*")); len(held) > 0 {
		t.Fatalf("%s: files left aside after settling: %v", what, held)
	}
	if got.State == before.State && got.Claim().Token == before.Claim().Token && !finished && c.op != "heartbeat" && c.op != "mark" {
		// Not published: the change, retried, goes through.
		if err := runChange(fresh, c.op, before.Claim().Token, get(t, fresh).Version); err != nil {
			t.Fatalf("%s: the retried change failed: %v", what, err)
		}
		checkReads(t, what+", then retried", c, before, get(t, fresh))
	}
	return finished
}

// checkReads holds the task to "as before the change or as after it".
func checkReads(t *testing.T, what string, c crashCase, before, got *model.Task) {
	t.Helper()
	if got.More().Problem != "" {
		t.Fatalf("%s: the task reads as broken: %s", what, got.More().Problem)
	}
	unchanged := got.State == before.State && got.Claim().Token == before.Claim().Token
	done := got.State == c.after && got.Claim().Name == c.holder
	if !unchanged && !done {
		t.Fatalf("%s: the task reads as %s; want as before (%s) or after (%s held by %q)",
			what, describeTask(got), describeTask(before), c.after, c.holder)
	}
	if before.State == model.StateClaimed && !c.dead && got.State == model.StateQueued && c.after != model.StateQueued {
		t.Fatalf("%s: the task reads as queued under a running lease", what)
	}
}

func openAt(t *testing.T, dir string) *Source {
	t.Helper()
	src, err := Open(Config{Name: "crash", Path: dir, Lease: 20 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

func get(t *testing.T, src *Source) *model.Task {
	t.Helper()
	task, err := src.Get(context.Background(), crashTask)
	if err != nil {
		t.Fatal(err)
	}
	return task
}

func describeTask(t *model.Task) string {
	return fmt.Sprintf("%s held by %q (token %.8s)", t.State, t.Claim().Name, t.Claim().Token)
}

// A temp file is published within milliseconds or its writer died: the
// scan removes those older than a lease and leaves younger ones alone.
func TestScanRemovesTempFilesOlderThanALease(t *testing.T) {
	dir := t.TempDir()
	src := openAt(t, dir)
	old, young := filepath.Join(dir, tempPrefix+"dead"), filepath.Join(dir, tempPrefix+"busy")
	for _, p := range []string{old, young} {
		if err := os.WriteFile(p, []byte("{"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-21 * time.Minute)
	if err := os.Chtimes(old, long, long); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Poll(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(old); !os.IsNotExist(err) {
		t.Errorf("a temp file older than the lease is still there (%v)", err)
	}
	if _, err := os.Lstat(young); err != nil {
		t.Errorf("a temp file a writer may still be writing was removed: %v", err)
	}
}

// backdate makes d pass for a task's lock where no injected clock reaches:
// the crash test's child process opens the directory on the real clock. A
// lease is judged on the file's times and on its mtime (the kernel's clock,
// which no test can move), so both move back by d.
func backdate(t testing.TB, src sources.Source, id string, d time.Duration) {
	t.Helper()
	p := src.(*Source).path(id, kindLock)
	fs := readFile(p, kindLock, nil)
	if fs == nil || fs.problem != "" {
		t.Fatalf("backdate %s: no readable lock", id)
	}
	rec := fs.rec.clone()
	for _, at := range []*time.Time{&rec.ClaimedAt, &rec.ExpiresAt, &rec.Heartbeat} {
		if !at.IsZero() {
			*at = at.Add(-d)
		}
	}
	if err := os.WriteFile(p, rec.marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fs.mtime.Add(-d), fs.mtime.Add(-d)); err != nil {
		t.Fatal(err)
	}
}
