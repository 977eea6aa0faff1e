package lockdir

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// seedDir is a project as seed 004 lays it out: the scripts run from root
// and use project/.locks, claimdeck opens the same directory.
type seedDir struct {
	root, locks string
	src         *Source
}

func newSeedDir(t *testing.T, tasksYAML string) *seedDir {
	t.Helper()
	for _, tool := range []string{"bash", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the seed's snippets need %s: %v", tool, err)
		}
	}
	root := t.TempDir()
	d := &seedDir{root: root, locks: filepath.Join(root, "project", ".locks")}
	if err := os.MkdirAll(d.locks, 0o755); err != nil {
		t.Fatal(err)
	}
	tasks := filepath.Join(root, "tasks.yaml")
	if err := os.WriteFile(tasks, []byte(tasksYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := Open(Config{Name: "infra-locks", Path: d.locks, TasksFile: tasks})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	d.src = src
	return d
}

// run runs one of the seed's snippets from testdata/seed004 and returns its
// output and exit status.
func (d *seedDir) run(t *testing.T, script string, env ...string) (string, int) {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join("testdata", "seed004", script))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", abs)
	cmd.Dir = d.root
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	return string(out), code
}

func (d *seedDir) get(t *testing.T, id string) *model.Task {
	t.Helper()
	task, err := d.src.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("Get(%s): %v", id, err)
	}
	return task
}

func within(t *testing.T, what string, got, want time.Time, slack time.Duration) {
	t.Helper()
	if d := got.Sub(want); d < -slack || d > slack {
		t.Fatalf("%s = %v, want %v ± %v", what, got, want, slack)
	}
}

const vpcTasks = `# the team's queue
- id: design-vpc-module
  title: Design VPC module
  description: Design and implement VPC Terraform module
  priority: high
  class: EXPEDITE
`

func TestSeedClaimHeartbeatCompleteAndCleanupAreReadByClaimdeck(t *testing.T) {
	d := newSeedDir(t, vpcTasks)
	ctx := context.Background()
	id := "design-vpc-module"
	if out, code := d.run(t, "claim.sh", "TASK_ID="+id, "AGENT_NAME=terraform-engineer"); code != 0 || !strings.Contains(out, "LOCK_ACQUIRED") {
		t.Fatalf("seed claim: %d %s", code, out)
	}
	got := d.get(t, id)
	if got.State != model.StateClaimed || got.Claim().Holder != model.HolderAgent || got.Claim().Name != "terraform-engineer" || got.More().Problem != "" {
		t.Fatalf("a seed claim reads as %s problem %q", describe(got), got.More().Problem)
	}
	within(t, "expiry of a seed claim", got.Claim().Expires.Time(), time.Now().Add(time.Hour), 2*time.Minute)
	within(t, "claimed-at of a seed claim", got.Claim().ClaimedAt.Time(), time.Now(), 2*time.Minute)
	if got.Title != "Design VPC module" || got.Class != model.ClassExpedite || got.Priority != model.PriorityHigh {
		t.Fatalf("the tasks file's fields are lost under a seed lock: %+v", got)
	}
	_, err := d.src.Claim(ctx, id, sources.ClaimRequest{Agent: "ORACLE"})
	if model.CodeOf(err) != model.CodeConflict || model.CurrentOf(err).Claim().Name != "terraform-engineer" {
		t.Fatalf("claim over a live seed lock: %v", err)
	}

	d.run(t, "heartbeat.sh", "TASK_ID="+id)
	beat := d.get(t, id)
	within(t, "heartbeat of the seed's heartbeat", beat.Claim().HeartbeatAt.Time(), time.Now(), 2*time.Minute)
	within(t, "expiry after the seed's heartbeat", beat.Claim().Expires.Time(), time.Now().Add(time.Hour), 2*time.Minute)
	if beat.Version == got.Version {
		t.Fatal("the seed's heartbeat did not change the version")
	}

	if out, _ := d.run(t, "complete.sh", "TASK_ID="+id); !strings.Contains(out, "TASK_COMPLETE") {
		t.Fatalf("seed complete: %s", out)
	}
	done := d.get(t, id)
	if done.State != model.StateDone || done.RawStatus != "completed" || done.Held() {
		t.Fatalf("a seed completion reads as %s (%s)", describe(done), done.RawStatus)
	}

	d.run(t, "cleanup.sh")
	if _, err := os.Stat(filepath.Join(d.locks, "archive", id+".done")); err != nil {
		t.Fatalf("the seed's cleanup did not archive: %v", err)
	}
	if archived := d.get(t, id); archived.State != model.StateDone {
		t.Fatalf("a task archived by the seed's cleanup reads as %s; it must not go back to the queue", describe(archived))
	}
	if next, err := d.src.Next(ctx, "ORACLE"); err != nil || next != nil {
		t.Fatalf("next offered %s (%v) after the only task was done and archived", describe(next), err)
	}
}

func TestSeedFailureIsReadWithItsReason(t *testing.T) {
	d := newSeedDir(t, "[]\n")
	d.run(t, "claim.sh", "TASK_ID=apply-prod", "AGENT_NAME=terraform-engineer")
	if out, _ := d.run(t, "fail.sh", "TASK_ID=apply-prod", "REASON=terraform validate failed with 3 errors"); !strings.Contains(out, "TASK_FAILED") {
		t.Fatalf("seed fail: %s", out)
	}
	got := d.get(t, "apply-prod")
	if got.State != model.StateFailed || got.More().Reason != "terraform validate failed with 3 errors" || got.More().Problem != "" {
		t.Fatalf("a seed failure reads as %s reason %q problem %q", describe(got), got.More().Reason, got.More().Problem)
	}
	d.run(t, "cleanup.sh")
	if got := d.get(t, "apply-prod"); got.State != model.StateFailed {
		t.Fatalf("an archived failure reads as %s", describe(got))
	}
}

// The seed's expiry check measures (now - claimed_at).seconds, which drops
// whole days: a claim 25 hours old looks one hour old to it. claimdeck
// compares whole durations.
func TestAClaimADayOldIsExpiredAlthoughTheSeedsCheckCallsItActive(t *testing.T) {
	d := newSeedDir(t, vpcTasks)
	id := "design-vpc-module"
	day := time.Now().UTC().Add(-25*time.Hour + 30*time.Second)
	lock := `{"task_id": "` + id + `", "agent": "gone-agent", "claimed_at": "` + day.Format("2006-01-02T15:04:05Z") +
		`", "expires_at": "` + day.Add(time.Hour).Format("2006-01-02T15:04:05Z") + `", "description": "Task description here"}`
	path := filepath.Join(d.locks, id+".lock")
	if err := os.WriteFile(path, []byte(lock), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, day, day); err != nil {
		t.Fatal(err)
	}
	out, _ := d.run(t, "claim.sh", "TASK_ID="+id, "AGENT_NAME=late-agent")
	if !strings.Contains(out, "ACTIVE") {
		t.Fatalf("expected the seed's check to misjudge a 25 h old claim as ACTIVE, it printed: %s", out)
	}
	// The seed's snippet re-claims whatever its check prints (the `if` tests
	// python's exit status); start again from the stale lock.
	if err := os.WriteFile(path, []byte(lock), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, day, day); err != nil {
		t.Fatal(err)
	}
	if h := model.Health(d.get(t, id), time.Now(), model.DefaultPolicy()); h != model.LeaseExpired {
		t.Fatalf("a 25 h old claim is %s to claimdeck, want expired", h)
	}
	got, err := d.src.Claim(context.Background(), id, sources.ClaimRequest{Agent: "ORACLE"})
	if err != nil || got.Claim().Name != "ORACLE" {
		t.Fatalf("claim of an expired seed lock: %v", err)
	}
	archived, _ := filepath.Glob(filepath.Join(d.locks, "archive", id+"@*.expired"))
	if len(archived) != 1 {
		t.Fatalf("the broken lock must be kept in archive/, found %v", archived)
	}
}

func TestClaimdecksFilesAreReadByTheSeedsSnippets(t *testing.T) {
	d := newSeedDir(t, `
- {id: lease-a, title: A}
- {id: done-b, title: B}
- {id: blocked-c, title: C}
- {id: human-d, title: D}
- {id: canceled-e, title: E}
- {id: seed-done-f, title: F}
- {id: seed-failed-g, title: G}
`)
	ctx := context.Background()
	claim := func(id string) *model.Task {
		t.Helper()
		task, err := d.src.Claim(ctx, id, sources.ClaimRequest{Agent: "ORACLE", RunID: "run-1"})
		if err != nil {
			t.Fatal(err)
		}
		return task
	}
	a := claim("lease-a")
	b := claim("done-b")
	if _, err := d.src.Finish(ctx, b.ID, b.Claim().Token, sources.Outcome{State: model.StateDone}); err != nil {
		t.Fatal(err)
	}
	c := claim("blocked-c")
	if _, err := d.src.Finish(ctx, c.ID, c.Claim().Token, sources.Outcome{State: model.StateBlocked, Reason: "waiting on credentials"}); err != nil {
		t.Fatal(err)
	}
	dd := d.get(t, "human-d")
	if _, err := d.src.Takeover(ctx, dd.ID, sources.Human{Actor: "alice", Expect: dd.Version}); err != nil {
		t.Fatal(err)
	}
	e := d.get(t, "canceled-e")
	if _, err := d.src.Cancel(ctx, e.ID, sources.Human{Actor: "alice", Reason: "duplicate", Expect: e.Version}); err != nil {
		t.Fatal(err)
	}

	if out, code := d.run(t, "status.sh"); code != 2 || !strings.Contains(out, "syntax error") {
		t.Fatalf("the seed's status snippet, verbatim, is a bash syntax error; got %d: %s", code, out)
	}
	out, code := d.run(t, "status_runnable.sh")
	if code != 0 {
		t.Fatalf("status: %d %s", code, out)
	}
	for _, want := range []string{
		"lease-a: ORACLE (since ", "human-d: HUMAN:alice (since ",
		"done-b: ORACLE (completed ", "canceled-e: HUMAN:alice (completed ",
		"blocked-c: ORACLE - waiting on credentials",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the seed's status listing lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Traceback") {
		t.Fatalf("python failed on a claimdeck file:\n%s", out)
	}

	// The seed's agents skip a task with a .done: a canceled task stays so.
	if out, _ := d.run(t, "claim.sh", "TASK_ID=canceled-e", "AGENT_NAME=seed-agent"); !strings.Contains(out, "TASK_ALREADY_DONE") {
		t.Fatalf("seed claim of a canceled task: %s", out)
	}

	// The seed's heartbeat keeps claimdeck's token: the holder goes on.
	d.run(t, "heartbeat.sh", "TASK_ID=lease-a")
	beat := d.get(t, "lease-a")
	if beat.Claim().Token != a.Claim().Token || beat.Claim().HeartbeatAt.IsZero() {
		t.Fatalf("after the seed's heartbeat: token kept %v, heartbeat %v", beat.Claim().Token == a.Claim().Token, beat.Claim().HeartbeatAt)
	}
	within(t, "expiry after the seed's heartbeat on claimdeck's lock", beat.Claim().Expires.Time(), time.Now().Add(time.Hour), 2*time.Minute)
	if _, err := d.src.Heartbeat(ctx, a.ID, a.Claim().Token, 0); err != nil {
		t.Fatalf("claimdeck heartbeat after the seed's: %v", err)
	}

	// The seed's complete and fail on locks claimdeck wrote.
	f := claim("seed-done-f")
	d.run(t, "complete.sh", "TASK_ID=seed-done-f")
	if got := d.get(t, f.ID); got.State != model.StateDone || got.More().Problem != "" {
		t.Fatalf("seed completion of claimdeck's lock: %s %q", describe(got), got.More().Problem)
	}
	g := claim("seed-failed-g")
	d.run(t, "fail.sh", "TASK_ID=seed-failed-g", "REASON=plan drift")
	if got := d.get(t, g.ID); got.State != model.StateFailed || got.More().Reason != "plan drift" {
		t.Fatalf("seed failure of claimdeck's lock: %s %q", describe(got), got.More().Reason)
	}
	if _, err := d.src.Finish(ctx, g.ID, g.Claim().Token, sources.Outcome{State: model.StateDone}); model.CodeOf(err) != model.CodeLostLock {
		t.Fatalf("finishing a lock the seed already moved: %v, want LOST_LOCK", err)
	}
}

// The seed's claim never refuses (its `if` tests python's exit status, not
// what it printed), so a seed agent can overwrite a live claimdeck lock.
// claimdeck cannot prevent that; it can fence the claimdeck holder out and
// leave the seed agent's lock alone.
func TestASeedAgentOverwritingALiveLockFencesOutTheClaimdeckHolder(t *testing.T) {
	d := newSeedDir(t, vpcTasks)
	ctx := context.Background()
	id := "design-vpc-module"
	mine, err := d.src.Claim(ctx, id, sources.ClaimRequest{Agent: "ORACLE"})
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := d.run(t, "claim.sh", "TASK_ID="+id, "AGENT_NAME=seed-agent"); !strings.Contains(out, "reclaiming") {
		t.Fatalf("the seed's claim was expected to re-claim a live lock: %s", out)
	}
	if _, err := d.src.Heartbeat(ctx, id, mine.Claim().Token, 0); model.CodeOf(err) != model.CodeLostLock {
		t.Fatalf("heartbeat after the seed overwrote the lock: %v", err)
	}
	if _, err := d.src.Finish(ctx, id, mine.Claim().Token, sources.Outcome{State: model.StateDone}); model.CodeOf(err) != model.CodeLostLock {
		t.Fatalf("finish after the seed overwrote the lock: %v", err)
	}
	if got := d.get(t, id); got.Claim().Name != "seed-agent" || got.State != model.StateClaimed {
		t.Fatalf("the seed agent's lock was disturbed: %s", describe(got))
	}
}

func describe(t *model.Task) string {
	if t == nil {
		return "<nil>"
	}
	return t.ID + "[" + t.State.String() + " " + t.Claim().Holder.String() + " " + t.Claim().Name + "]"
}
