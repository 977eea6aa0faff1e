package mesh

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// staleView polls tasks as they were before an agent re-claimed them: the
// sweep holds an old lock token.
type staleView struct{ *markingSource }

func (s staleView) Poll(ctx context.Context, c sources.Cursor, opt ...sources.PollOption) (sources.Delta, error) {
	d, err := s.markingSource.Poll(ctx, c, opt...)
	for _, t := range d.Tasks {
		t.EditClaim().Token = "old-" + t.Claim().Token
	}
	return d, err
}

type brokenSource struct{ memSource }

func (*brokenSource) Name() string { return "broken" }
func (*brokenSource) Poll(context.Context, sources.Cursor, ...sources.PollOption) (sources.Delta, error) {
	return sources.Delta{}, model.Errorf(model.CodeAPIError, "poll", "", "database unreachable")
}

func stuckTask(id string, stuck time.Duration, now time.Time) *model.Task {
	at := now.Add(-stuck)
	return (&model.Task{Source: "q", ID: id, Title: "Research " + id, State: model.StateClaimed}).WithClaim(model.Claim{Holder: model.HolderAgent, Name: "oracle-1", Token: "SECRET-lock-" + id, ClaimedAt: model.StampOf(at), Expires: model.StampOf(at.Add(10 * time.Minute))})
}

// A task re-claimed between the sweep's read and its write is not marked
// and the mesh is not told about it.
func TestSweepStopsClimbingOnLostLock(t *testing.T) {
	now := time.Now()
	node := newTestNode(t, "ORACLE")
	src := &markingSource{memSource: memSource{name: "q", tasks: []*model.Task{stuckTask("t-1", 3*time.Hour, now)}}}
	sw := &Sweeper{Policy: model.DefaultPolicy(), Notifier: &Notifier{From: "SANDMAN", Nodes: registryOf(node).Nodes}, Now: func() time.Time { return now }}
	rep := sw.Sweep(t.Context(), staleView{src}, &brokenSource{})
	if len(rep.Marks) != 1 || !errors.Is(rep.Marks[0].Err, model.ErrLostLock) || rep.Marks[0].Applied {
		t.Errorf("marks = %+v, want one LOST_LOCK", rep.Marks)
	}
	if len(rep.Deliveries) != 0 || len(node.inbox.Messages()) != 0 {
		t.Errorf("notified about a re-claimed task: %+v", rep.Deliveries)
	}
	if len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0].Error(), "sweep broken: API_ERROR") {
		t.Errorf("errors = %v", rep.Errors)
	}
}

func TestMessageNamesTheTaskNotTheToken(t *testing.T) {
	now := time.Now()
	task := stuckTask("t-9", 61*time.Minute, now)
	task.Key = "TASK-9"
	got := Message(task, now)
	want := `⚠️ Task "Research t-9" (q/TASK-9) held by oracle-1 has been stuck for 1h1m0s. Available for takeover.`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if strings.Contains(got, "SECRET") {
		t.Error("the message carries the lock token")
	}
}

// Two processes sharing one sweep record — a cron `claimdeck sweep` and a
// dashboard's --enforce — sweeping at the same moment notify each task
// once: each holds the record for its pass and reloads what the other sent.
func TestConcurrentSweepsSharingARecordNotifyOnce(t *testing.T) {
	now := time.Now()
	node := newTestNode(t, "ORACLE")
	var tasks []*model.Task
	for _, id := range []string{"t-1", "t-2", "t-3", "t-4"} {
		tasks = append(tasks, stuckTask(id, 61*time.Minute, now))
	}
	path := t.TempDir() + "/sweep.json"
	sweepers := make([]*Sweeper, 4)
	for i := range sweepers {
		rec, err := OpenRecord(path) // each its own, as in separate processes
		if err != nil {
			t.Fatal(err)
		}
		sweepers[i] = &Sweeper{Policy: model.DefaultPolicy(), Record: rec,
			Notifier: &Notifier{From: "SANDMAN", Nodes: registryOf(node).Nodes}, Now: func() time.Time { return now }}
	}
	src := &markingSource{memSource: memSource{name: "q", tasks: tasks}} // the one queue they share
	done := make(chan SweepReport)
	for _, sw := range sweepers {
		go func() { done <- sw.Sweep(t.Context(), src) }()
	}
	for range sweepers {
		if rep := <-done; len(rep.Errors) > 0 {
			t.Fatalf("sweep: %v", rep.Errors)
		}
	}
	if got := len(node.inbox.Messages()); got != len(tasks) {
		t.Fatalf("%d notifications for %d tasks from 4 concurrent sweeps, want one each", got, len(tasks))
	}
}
