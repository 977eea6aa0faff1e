package notion

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/notion/notionemu"
)

func TestADatabaseWithTwoDataSourcesWorksOnceOneIsNamed(t *testing.T) {
	emu := newEmulator(t)
	db := emu.database(t, notionemu.PresetNtask())
	archive := notionemu.PresetNtask()
	archive.Title = "Archive"
	second, err := emu.srv.AddDataSource(db, archive)
	if err != nil {
		t.Fatal(err)
	}
	first := emu.srv.DataSources(db)[0]
	_, err = Open(context.Background(), emu.config(db, PresetNtask))
	wantCode(t, err, model.CodeMisconfigured, "2 data sources", first, second, `"Tasks"`, `"Archive"`)
	cfg := emu.config(db, PresetNtask)
	cfg.DataSource = "Archive"
	byName := emu.open(t, cfg)
	cfg.DataSource, cfg.DataSourceID = "", first
	byID := emu.open(t, cfg)
	ctx := context.Background()
	task, err := byName.Create(ctx, sources.NewTask{Title: "archived work"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := byName.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "A"}); err != nil || got.Claim().Name != "A" {
		t.Fatalf("claim in the named data source: %v", err)
	}
	if next, err := byID.Next(ctx, "B"); err != nil || next != nil {
		t.Fatalf("the other data source sees %v (%v)", next, err)
	}
	if _, err := byID.Get(ctx, task.ID); err == nil {
		t.Fatal("a page of another data source was read as a task")
	}
	cfg.DataSourceID = "0c8fd3d4-6f9a-4a7c-9d43-0d7a3f3b1f2e"
	_, err = Open(ctx, cfg)
	wantCode(t, err, model.CodeMisconfigured, "no data source 0c8fd3d4", first, second)
}

func TestNotionsRequestIDIsInEveryAPIError(t *testing.T) {
	emu := newEmulator(t)
	cfg := emu.config(emu.database(t, notionemu.PresetNtask()), PresetNtask)
	cfg.Retries = 1
	src := emu.open(t, cfg)
	if err := emu.srv.FailNext(2, http.StatusBadGateway); err != nil {
		t.Fatal(err)
	}
	_, err := src.Poll(context.Background(), "")
	wantCode(t, err, model.CodeAPIError, "502", "request_id ")
	if strings.Contains(err.Error(), "request_id —") {
		t.Fatalf("the request_id is missing: %v", err)
	}
	if err := emu.srv.FailNext(2, http.StatusServiceUnavailable); err != nil {
		t.Fatal(err)
	}
	_, err = src.Get(context.Background(), "0c8fd3d4-6f9a-4a7c-9d43-0d7a3f3b1f2e")
	wantCode(t, err, model.CodeAPIError, "503", "request_id ")
	// A 404 is an answer, not a fault: the unknown id is named, never retried.
	_, err = src.Get(context.Background(), "0c8fd3d4-6f9a-4a7c-9d43-0d7a3f3b1f2e")
	if !errors.Is(err, model.ErrNoSuchTask) {
		t.Fatalf("a page Notion does not have: %v, want ErrNoSuchTask", err)
	}
}

func TestWithoutCommentCapabilitiesHistoryIsLeftOutAndActionsComplete(t *testing.T) {
	emu := newEmulator(t)
	src := emu.open(t, emu.config(emu.database(t, notionemu.PresetNtask()), PresetNtask))
	ctx := context.Background()
	task, err := src.Create(ctx, sources.NewTask{Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	emu.srv.SetCapabilities(emu.token, notionemu.Capabilities{})
	got, err := src.Get(ctx, task.ID)
	if err != nil {
		t.Fatalf("get without Read comments: %v", err)
	}
	if len(got.More().History) != 1 || got.More().History[0].Action != "history-unavailable" || !strings.Contains(got.More().History[0].Detail, "comment capabilities") {
		t.Fatalf("history %+v, want one entry saying why it is missing", got.More().History)
	}
	took, err := src.Takeover(ctx, task.ID, sources.Human{Actor: "alice", Expect: got.Version})
	if err != nil {
		t.Fatalf("takeover without Insert comments: %v", err)
	}
	if took.Claim().Name != model.HumanPrefix+"alice" || took.More().History[len(took.More().History)-1].Action != "history-unavailable" {
		t.Fatalf("takeover: holder %q, history %+v", took.Claim().Name, took.More().History)
	}
}

func TestAStatusTypedStatusPropertyWorksLikeASelect(t *testing.T) {
	emu := newEmulator(t)
	schema := notionemu.PresetNtask()
	for i, p := range schema.Properties {
		if p.Name == "Status" || p.Name == "Claimed By" {
			schema.Properties[i].Type = notionemu.TypeStatus
		}
	}
	src := emu.open(t, emu.config(emu.database(t, schema), PresetNtask))
	ctx := context.Background()
	task, err := src.Create(ctx, sources.NewTask{Title: "status-typed"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := src.ClaimNext(ctx, sources.ClaimRequest{Agent: "A"})
	if err != nil || got == nil || got.ID != task.ID {
		t.Fatalf("claim-next on a status property: %v %v", got, err)
	}
	done, err := src.Finish(ctx, task.ID, got.Claim().Token, sources.Outcome{State: model.StateDone})
	if err != nil || done.State != model.StateDone {
		t.Fatalf("finish on a status property: %v", err)
	}
}

func TestARetryAfterBeyondTheBudgetEndsTheCommandSayingSo(t *testing.T) {
	emu := newEmulator(t)
	cfg := emu.config(emu.database(t, notionemu.PresetNtask()), PresetNtask)
	cfg.Budget = 5 * time.Second
	src := emu.open(t, cfg)
	if err := emu.srv.Inject(1, notionemu.Fault{Status: http.StatusTooManyRequests, RetryAfter: 90 * time.Second}); err != nil {
		t.Fatal(err)
	}
	_, err := src.Poll(context.Background(), "")
	wantCode(t, err, model.CodeAPIError, "Retry-After", "budget")
}

func TestASlowRequestIsCutByThePerRequestTimeoutAndNamed(t *testing.T) {
	emu := newEmulator(t)
	cfg := emu.config(emu.database(t, notionemu.PresetNtask()), PresetNtask)
	cfg.Timeout, cfg.Retries = 50*time.Millisecond, 1
	src := emu.open(t, cfg)
	if err := emu.srv.SetFaults(notionemu.Faults{Latency: time.Second}); err != nil {
		t.Fatal(err)
	}
	_, err := src.Poll(context.Background(), "")
	wantCode(t, err, model.CodeAPIError, "per-request timeout")
}

func TestTheCommandBudgetCoversEveryRetry(t *testing.T) {
	emu := newEmulator(t)
	cfg := emu.config(emu.database(t, notionemu.PresetNtask()), PresetNtask)
	cfg.Timeout, cfg.Budget, cfg.Retries = 300*time.Millisecond, 500*time.Millisecond, 100
	src := emu.open(t, cfg)
	if err := emu.srv.SetFaults(notionemu.Faults{Latency: time.Second}); err != nil {
		t.Fatal(err)
	}
	_, err := src.Get(context.Background(), "0c8fd3d4-6f9a-4a7c-9d43-0d7a3f3b1f2e")
	wantCode(t, err, model.CodeAPIError, "time budget")
}

func TestDoctorFindsCommentsOffWithoutWriting(t *testing.T) {
	emu := newEmulator(t)
	src := emu.open(t, emu.config(emu.database(t, notionemu.PresetNtask()), PresetNtask))
	ctx := context.Background()
	if _, err := src.Create(ctx, sources.NewTask{Title: "t"}); err != nil {
		t.Fatal(err)
	}
	if err := src.CheckWrite(ctx); err != nil {
		t.Fatalf("all capabilities on: %v", err)
	}
	emu.srv.SetCapabilities(emu.token, notionemu.Capabilities{InsertComments: true})
	emu.srv.ResetStats()
	wantCode(t, src.CheckWrite(ctx), model.CodeMisconfigured, "Read comments")
	st := emu.srv.Stats()
	if st.ByEndpoint[notionemu.EndpointPageUpdate]+st.ByEndpoint[notionemu.EndpointPageCreate]+st.ByEndpoint[notionemu.EndpointCommentCreate] != 0 {
		t.Fatalf("the check wrote: %v", st.ByEndpoint)
	}
}

func TestALongHistoryDropsWholeOldEntriesAndSaysSo(t *testing.T) {
	emu := newEmulator(t)
	src := emu.open(t, emu.config(emu.database(t, notionemu.PresetMeshHandoff()), PresetMeshHandoff))
	ctx := context.Background()
	task, err := src.Create(ctx, sources.NewTask{Title: "chatty"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 45 {
		note := fmt.Sprintf("note %02d ", i) + strings.Repeat("x", 5000)
		if err := src.Comment(ctx, task.ID, sources.Note{Author: "alice", Text: note}); err != nil {
			t.Fatalf("comment %d: %v", i, err)
		}
	}
	got, err := src.Get(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The property keeps what fits and says how much it dropped; the page's
	// comments keep every note, so the merged timeline loses none.
	h := got.More().History
	var dropped int
	var last string
	notes := map[string]bool{}
	for _, e := range h {
		switch {
		case e.Action == actionTrimmed:
			if _, err := fmt.Sscanf(e.Detail, "%d", &dropped); err != nil {
				t.Fatalf("trim note %q", e.Detail)
			}
		case strings.HasPrefix(e.Reason, "note "):
			notes[e.Reason[:7]], last = true, e.Reason[:7]
		}
	}
	if last != "note 44" {
		t.Fatalf("the newest note in the timeline is %q, want note 44", last)
	}
	if dropped == 0 || len(notes) != 45 {
		t.Fatalf("trim note says %d dropped, %d of 45 notes in the timeline", dropped, len(notes))
	}
}

// Notion's Retry-After is honoured in full, longer than one request's
// timeout and than RetryMax: the issue's "2 s Retry-After with a 1 s
// timeout fails after one request" now succeeds.
func TestARetryAfterLongerThanTheRequestTimeoutIsWaitedOut(t *testing.T) {
	emu := newEmulator(t)
	cfg := emu.config(emu.database(t, notionemu.PresetNtask()), PresetNtask)
	cfg.Timeout = time.Second
	src := emu.open(t, cfg)
	emu.srv.SetRateLimit(notionemu.RateLimit{PerSecond: 1, Window: 2 * time.Second})
	emu.srv.ResetStats()
	for i := range 3 {
		if _, err := src.Poll(context.Background(), ""); err != nil {
			t.Fatalf("poll %d under a 2-per-2 s window: %v", i, err)
		}
	}
	if n := emu.srv.Stats().ByStatus[http.StatusTooManyRequests]; n == 0 {
		t.Fatal("no 429 was answered: the test does not test Retry-After")
	}
}

// A Retry-After past the one-minute cap is waited in full, plus at most
// the spread (a quarter of it) that keeps a storm's clients apart; drawn
// many times, since the spread is random.
func TestRetryAfterPastAMinuteIsNotCapped(t *testing.T) {
	r := retryPolicy{attempts: 6, base: 500 * time.Millisecond, max: time.Minute}
	for range 1000 {
		if d := r.backoff(1, &apiError{Status: http.StatusTooManyRequests, RetryAfter: 90 * time.Second}); d < 90*time.Second || d > 90*time.Second+90*time.Second/4 {
			t.Fatalf("waits %s for a Retry-After of 90 s", d)
		}
	}
}
