package notion

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/notion/notionemu"
)

// raw sends one request straight to the emulator, as another Notion
// client (a seed's own script, a person in the UI) would.
func (e *emulator) raw(tb testing.TB, method, path, body string) map[string]any {
	tb.Helper()
	req, err := http.NewRequest(method, e.url+path, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.token)
	req.Header.Set("Notion-Version", notionemu.NotionVersion)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil || res.StatusCode != http.StatusOK {
		tb.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
	}
	return out
}

// noToken fails when an error message carries the integration token.
func noToken(tb testing.TB, token string, errs ...error) {
	tb.Helper()
	for _, err := range errs {
		if err != nil && (strings.Contains(err.Error(), token) || strings.Contains(fmt.Sprintf("%+v %#v", err, err), token)) {
			tb.Fatalf("an error carries the token: %v", err)
		}
	}
}

func wantCode(tb testing.TB, err error, code model.Code, words ...string) {
	tb.Helper()
	if model.CodeOf(err) != code || err == nil {
		tb.Fatalf("got %v, want %s", err, code)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			tb.Fatalf("%q does not say %q", err, w)
		}
	}
}

func TestSchemaErrorsNameEveryMissingOrMistypedProperty(t *testing.T) {
	emu := newEmulator(t)
	schema := notionemu.PresetNtask()
	var kept []notionemu.Property
	for _, p := range schema.Properties {
		switch p.Name {
		case "Lock Token", "Agent Run":
		case "Priority":
			kept = append(kept, notionemu.Property{Name: "Priority", Type: notionemu.TypeRichText})
		default:
			kept = append(kept, p)
		}
	}
	schema.Properties = kept
	_, err := Open(context.Background(), emu.config(emu.database(t, schema), PresetNtask))
	wantCode(t, err, model.CodeMisconfigured, `"Lock Token"`, `"Agent Run"`, `"Priority" (priority) is rich_text`)
	noToken(t, emu.token, err)
}

func TestAPresetDatabaseWithoutTheOptionalExtrasStillWorks(t *testing.T) {
	for _, preset := range []string{PresetNtask, PresetClaimProtocol, PresetMeshHandoff} {
		t.Run(preset, func(t *testing.T) {
			emu := newEmulator(t)
			src := emu.open(t, emu.config(emu.database(t, presetSchema(preset)), preset))
			ctx := context.Background()
			task, err := src.Create(ctx, sources.NewTask{Title: "bare", Priority: 3})
			if err != nil {
				t.Fatal(err)
			}
			held, err := src.ClaimNext(ctx, sources.ClaimRequest{Agent: "SANDMAN"})
			if err != nil || held == nil || held.ID != task.ID || held.Claim().Token == "" {
				t.Fatalf("claim-next: %v %+v", err, held)
			}
			if _, err := src.Heartbeat(ctx, task.ID, held.Claim().Token, time.Hour); err != nil {
				t.Fatal(err)
			}
			done, err := src.Finish(ctx, task.ID, held.Claim().Token, sources.Outcome{State: model.StateBlocked, Reason: "no column for it"})
			if err != nil || done.State != model.StateBlocked || done.Held() {
				t.Fatalf("block: %v %+v", err, done)
			}
		})
	}
}

func TestAWrongTokenIsMisconfiguredAndNeverQuoted(t *testing.T) {
	emu := newEmulator(t)
	cfg := emu.config(emu.database(t, notionemu.PresetNtask()), PresetNtask)
	cfg.Token = "secret_not_registered_0123456789"
	_, err := Open(context.Background(), cfg)
	wantCode(t, err, model.CodeMisconfigured, "rejected the integration token")
	noToken(t, cfg.Token, err)
	if s := fmt.Sprint(cfg) + fmt.Sprintf("%+v %#v %v", cfg, cfg, &cfg); strings.Contains(s, cfg.Token) {
		t.Fatalf("the config prints its token: %s", s)
	}
}

func TestADatabaseNotSharedWithTheIntegrationSaysSo(t *testing.T) {
	emu := newEmulator(t)
	id, err := emu.srv.CreateDatabase(notionemu.PresetNtask()) // shared with nobody
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(context.Background(), emu.config(id, PresetNtask))
	wantCode(t, err, model.CodeMisconfigured, "not found or not shared with the integration")
	noToken(t, emu.token, err)
}

func TestA429StormIsRetriedAfterRetryAfter(t *testing.T) {
	emu := newEmulator(t)
	cfg := emu.config(emu.database(t, notionemu.PresetNtask()), PresetNtask)
	cfg.RetryMax = 0 // honour Retry-After in full
	src := emu.open(t, cfg)
	ctx := context.Background()
	task, err := src.Create(ctx, sources.NewTask{Title: "popular"})
	if err != nil {
		t.Fatal(err)
	}
	emu.srv.SetRateLimit(notionemu.RateLimit{PerSecond: 50, Burst: 1})
	emu.srv.ResetStats()
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = src.Get(ctx, task.ID)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("a rate-limited read was not retried to success: %v", err)
		}
	}
	if n := emu.srv.Stats().ByStatus[http.StatusTooManyRequests]; n == 0 {
		t.Fatal("the storm produced no 429: the test does not test retries")
	}
}

func TestFailedWritesAreReReadNotReplayed(t *testing.T) {
	emu := newEmulator(t)
	src := emu.open(t, emu.config(emu.database(t, withExtras(notionemu.PresetNtask(), PresetNtask)), PresetNtask))
	ctx := context.Background()
	for _, status := range []int{500, 502, 503, 504, 529} {
		if err := emu.srv.FailNext(2, status); err != nil {
			t.Fatal(err)
		}
		task, err := src.Create(ctx, sources.NewTask{Title: fmt.Sprintf("after %d", status), Description: "body must survive"})
		if err != nil {
			t.Fatalf("create after two %d: %v", status, err)
		}
		if task.Description != "body must survive" {
			t.Fatalf("the replayed body lost its content: %+v", task)
		}
		if err := emu.srv.FailNext(2, status); err != nil {
			t.Fatal(err)
		}
		if _, err := src.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "SANDMAN"}); err != nil {
			t.Fatalf("claim after two %d: %v", status, err)
		}
	}
}

func TestRetriesAreBoundedAndTheErrorIsClear(t *testing.T) {
	emu := newEmulator(t)
	cfg := emu.config(emu.database(t, notionemu.PresetNtask()), PresetNtask)
	cfg.Retries = 2
	src := emu.open(t, cfg)
	if err := emu.srv.FailNext(3, 529); err != nil {
		t.Fatal(err)
	}
	emu.srv.ResetStats()
	_, err := src.Poll(context.Background(), "")
	wantCode(t, err, model.CodeAPIError, "529")
	noToken(t, emu.token, err)
	if n := emu.srv.Stats().Requests; n != 3 {
		t.Fatalf("%d requests, want 1 + 2 retries", n)
	}
}

func TestASlowNotionTimesOut(t *testing.T) {
	emu := newEmulator(t)
	cfg := emu.config(emu.database(t, notionemu.PresetNtask()), PresetNtask)
	src := emu.open(t, cfg)
	if err := emu.srv.SetFaults(notionemu.Faults{Latency: 500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := src.Poll(ctx, "")
	wantCode(t, err, model.CodeAPIError, "timed out")
	noToken(t, emu.token, err)
}

func TestPagesWithMissingOrNullPropertiesAreShownWithAProblem(t *testing.T) {
	emu := newEmulator(t)
	db := emu.database(t, notionemu.PresetNtask())
	src := emu.open(t, emu.config(db, PresetNtask))
	emu.raw(t, "POST", "/v1/pages", `{"parent":{"database_id":"`+db+`"},"properties":{"Name":{"title":[]}}}`)
	emu.raw(t, "POST", "/v1/pages", `{"parent":{"database_id":"`+db+`"},"properties":{"Name":{"title":[{"text":{"content":"odd"}}]},"Status":{"select":{"name":"SOMEDAY"}},"Claimed By":{"select":{"name":"AGENT"}},"Priority":{"number":null}}}`)
	d, err := src.Poll(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Tasks) != 2 {
		t.Fatalf("%d tasks, want 2", len(d.Tasks))
	}
	for _, task := range d.Tasks {
		if task.State != model.StateUnknown || task.More().Problem == "" || model.Eligible(task, time.Now()) {
			t.Fatalf("a page without a known status: %+v", task)
		}
	}
	if next, err := src.Next(context.Background(), "SANDMAN"); err != nil || next != nil {
		t.Fatalf("next offered %v (%v)", next, err)
	}
}

func TestUnknownPropertyTypesDoNotBreakLoading(t *testing.T) {
	emu := newEmulator(t)
	schema := notionemu.PresetNtask()
	schema.Properties = append(schema.Properties,
		notionemu.Property{Name: "Run it", Type: "button", Value: []byte(`{}`)},
		notionemu.Property{Name: "Mystery", Type: "unsupported", Value: []byte(`{}`)},
		notionemu.Property{Name: "Future", Type: "some_future_type", Value: []byte(`{"x":1}`)})
	src := emu.open(t, emu.config(emu.database(t, schema), PresetNtask))
	ctx := context.Background()
	task, err := src.Create(ctx, sources.NewTask{Title: "still loads"})
	if err != nil {
		t.Fatal(err)
	}
	if d, err := src.Poll(ctx, ""); err != nil || len(d.Tasks) != 1 {
		t.Fatalf("poll: %v %d", err, len(d.Tasks))
	}
	if _, err := src.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "SANDMAN"}); err != nil {
		t.Fatal(err)
	}
}

func TestLongTextIsWrittenInChunksAndReadBackWhole(t *testing.T) {
	emu := newEmulator(t)
	src := emu.open(t, emu.config(emu.database(t, withExtras(notionemu.PresetNtask(), PresetNtask)), PresetNtask))
	ctx := context.Background()
	long := strings.Repeat("log line ✓ 😀 ", 600) // > 2,000 UTF-16 units, with surrogate pairs
	task, err := src.Create(ctx, sources.NewTask{Title: "long", Description: long})
	if err != nil {
		t.Fatal(err)
	}
	held, err := src.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "SANDMAN"})
	if err != nil {
		t.Fatal(err)
	}
	done, err := src.Finish(ctx, task.ID, held.Claim().Token, sources.Outcome{State: model.StateDone, Artifacts: long})
	if err != nil {
		t.Fatal(err)
	}
	if done.More().Artifacts != long || done.Description != long {
		t.Fatalf("long text came back %d/%d bytes, want %d", len(done.More().Artifacts), len(done.Description), len(long))
	}
}

func TestATrashedPageIsNeverRestoredAndLeavesTheNextFullPoll(t *testing.T) {
	emu := newEmulator(t)
	src := emu.open(t, emu.config(emu.database(t, notionemu.PresetNtask()), PresetNtask))
	ctx := context.Background()
	task, err := src.Create(ctx, sources.NewTask{Title: "to be trashed"})
	if err != nil {
		t.Fatal(err)
	}
	seen := task.Version
	emu.raw(t, "PATCH", "/v1/pages/"+task.ID, `{"in_trash":true}`)
	_, err = src.ForceRelease(ctx, task.ID, sources.Human{Actor: "alice", Expect: seen})
	if err == nil {
		t.Fatal("a human action on a trashed page succeeded")
	}
	_, err = src.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "SANDMAN"})
	if err == nil {
		t.Fatal("a claim on a trashed page succeeded")
	}
	if page := emu.raw(t, "GET", "/v1/pages/"+task.ID, ""); page["archived"] != true {
		t.Fatalf("the page left the trash: %v", page["archived"])
	}
	d, err := src.Poll(ctx, "")
	if err != nil || !d.Full || len(d.Tasks) != 0 {
		t.Fatalf("full poll after trashing: %v full=%v %d tasks", err, d.Full, len(d.Tasks))
	}
}

func TestIncrementalPollsReportEachChangeOnce(t *testing.T) {
	emu := newEmulator(t)
	src := emu.open(t, emu.config(emu.database(t, notionemu.PresetNtask()), PresetNtask))
	ctx := context.Background()
	task, err := src.Create(ctx, sources.NewTask{Title: "watched"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := src.Poll(ctx, "")
	if err != nil || len(d.Tasks) != 1 {
		t.Fatal(err, len(d.Tasks))
	}
	emu.srv.ResetStats()
	idle, err := src.Poll(ctx, d.Cursor)
	if err != nil || idle.Full || len(idle.Tasks) != 0 {
		t.Fatalf("idle poll: %v full=%v %d tasks", err, idle.Full, len(idle.Tasks))
	}
	if n := emu.srv.Stats().Requests; n != 1 {
		t.Fatalf("an idle poll cost %d requests, want 1", n)
	}
	if _, err := src.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "SANDMAN"}); err != nil {
		t.Fatal(err)
	}
	changed, err := src.Poll(ctx, idle.Cursor)
	if err != nil || len(changed.Tasks) != 1 || changed.Tasks[0].State != model.StateClaimed {
		t.Fatalf("the claim in the same minute was not reported: %v %d", err, len(changed.Tasks))
	}
	again, err := src.Poll(ctx, changed.Cursor)
	if err != nil || len(again.Tasks) != 0 {
		t.Fatalf("the same change was reported twice: %v %d", err, len(again.Tasks))
	}
}

func TestCommentsAndEditsGoThroughTheSameRules(t *testing.T) {
	emu := newEmulator(t)
	src := emu.open(t, emu.config(emu.database(t, notionemu.PresetNtask()), PresetNtask))
	ctx := context.Background()
	task, err := src.Create(ctx, sources.NewTask{Title: "edit me"})
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Comment(ctx, task.ID, sources.Note{Author: "alice", Text: strings.Repeat("long note ", 300)}); err != nil {
		t.Fatal(err)
	}
	title, prio, class := "edited", 4, model.ClassFixedDate
	got, err := src.Update(ctx, task.ID, sources.Edit{Actor: "alice", Title: &title, Priority: &prio, Class: &class, State: model.StateBlocked, Reason: "waiting"})
	if err != nil || got.Title != title || got.Priority != 4 || got.Class != class || got.State != model.StateBlocked || got.More().Reason != "waiting" {
		t.Fatalf("update: %v %+v", err, got)
	}
	_, err = src.Update(ctx, task.ID, sources.Edit{Actor: "alice", State: model.StateQueued})
	wantCode(t, err, model.CodeMisconfigured, "unblock moves it back to the queue")
	if _, err := src.Update(ctx, task.ID, sources.MoveEdit(model.MoveUnblock, sources.Human{Actor: "alice"})); err != nil {
		t.Fatal(err)
	}
	held, err := src.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "SANDMAN"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = src.Update(ctx, task.ID, sources.Edit{Actor: "alice", Title: &title})
	wantCode(t, err, model.CodeConflict, "only its holder")
	if _, err := src.Update(ctx, task.ID, sources.Edit{Actor: "SANDMAN", Token: held.Claim().Token, Title: &title}); err != nil {
		t.Fatalf("the holder's edit: %v", err)
	}
}

func TestAHandoffUnderMeshHandoffIsRecordedInTheHistoryAndTheQueue(t *testing.T) {
	emu := newEmulator(t)
	cfg := emu.config(emu.database(t, notionemu.PresetMeshHandoff()), PresetMeshHandoff)
	cfg.HandoffQueueDB = emu.database(t, notionemu.PresetHandoffQueue())
	src := emu.open(t, cfg)
	ctx := context.Background()
	task, err := src.Create(ctx, sources.NewTask{Title: "research"})
	if err != nil {
		t.Fatal(err)
	}
	held, err := src.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "SANDMAN"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := src.Handoff(ctx, task.ID, sources.Handoff{Human: sources.Human{Actor: "alice", Reason: "Oracle has context", Expect: held.Version}, To: "ORACLE", Priority: "urgent"})
	if err != nil {
		t.Fatal(err)
	}
	if got.ReservedFor() != "ORACLE" || len(got.More().History) != 2 || got.More().History[1].Action != "handoff" || got.More().History[0].Action != "claimed" {
		t.Fatalf("after hand-off: %+v history %+v", got.Reserved(), got.More().History)
	}
	res := emu.raw(t, "POST", "/v1/databases/"+cfg.HandoffQueueDB+"/query", `{}`)
	rows, _ := res["results"].([]any)
	if len(rows) != 1 {
		t.Fatalf("%d hand-off records, want 1", len(rows))
	}
	b, _ := json.Marshal(rows[0])
	for _, want := range []string{"ORACLE", "alice", "Oracle has context", "urgent", "pending", task.ID} {
		if !strings.Contains(string(b), want) {
			t.Fatalf("the hand-off record lacks %q: %s", want, b)
		}
	}
}

func TestSourcesSharingATokenShareOneLimiter(t *testing.T) {
	a, b := limiterFor("secret_shared_limiter", 3), limiterFor("secret_shared_limiter", 10)
	if a != b {
		t.Fatal("two sources with one token got two limiters")
	}
	if a.every < time.Second/3 {
		t.Fatalf("the shared limiter runs every %v, want the slower rate's %v or more", a.every, time.Second/3)
	}
	if limiterFor("secret_other", 3) == a {
		t.Fatal("two tokens share a limiter")
	}
}
