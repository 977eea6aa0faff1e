package notion

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/notion/notionemu"
)

// Notion's API as it stands since 2026-03-11: a query's 10,000-result cap,
// in_trash, 529 service_overload and the workspace-wide rate limit.

// A query Notion cut at its result limit is never shown as the whole
// queue: a full poll reads past the cap in created_time windows, and when
// a window cannot move on the poll fails, saying so, instead of handing
// over the first pages as the queue.
func TestACappedQueryIsNeverShownWhole(t *testing.T) {
	e := newEmulator(t)
	e.srv.SetQueryResultLimit(3)
	src := e.open(t, e.config(e.database(t, presetSchema(PresetNtask)), PresetNtask))
	ctx := context.Background()
	want := map[string]bool{}
	for i := range 8 {
		task, err := src.Create(ctx, sources.NewTask{Title: "task " + string(rune('a'+i))})
		if err != nil {
			t.Fatal(err)
		}
		want[task.ID] = true
		e.advance(time.Minute) // Notion stamps created_time to the minute
	}
	before := e.srv.Stats().ByEndpoint[notionemu.EndpointDataSourceQuery]
	d, err := src.Poll(ctx, "")
	if err != nil {
		t.Fatalf("a poll of 8 tasks, 3 a query: %v", err)
	}
	t.Logf("8 tasks, 3 a query: the full poll sent %d queries", e.srv.Stats().ByEndpoint[notionemu.EndpointDataSourceQuery]-before)
	got := map[string]bool{}
	for _, task := range d.Tasks {
		got[task.ID] = true
	}
	if !d.Full || len(got) != len(want) {
		t.Fatalf("the poll read %d of %d tasks (full %v): a capped query was shown as the whole queue", len(got), len(want), d.Full)
	}
	// Four created in one minute: no created_time window holds fewer
	// than the cap, so the poll must say it cannot read them all.
	for range 4 {
		if _, err := src.Create(ctx, sources.NewTask{Title: "same minute"}); err != nil {
			t.Fatal(err)
		}
	}
	d, err = src.Poll(ctx, "")
	if err == nil || !errors.Is(err, ErrIncomplete) || !strings.Contains(err.Error(), "query_result_limit_reached") {
		t.Fatalf("a poll that cannot read past the cap = %d tasks, err %v; want ErrIncomplete naming the limit", len(d.Tasks), err)
	}
}

// trash puts a page in the trash as a person does, through the API.
func (e *emulator) trash(t *testing.T, id string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPatch, e.url+"/v1/pages/"+id, bytes.NewReader([]byte(`{"in_trash": true}`)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.token)
	req.Header.Set("Notion-Version", VersionCurrent)
	req.Header.Set("Content-Type", "application/json")
	res, err := e.rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("trashing %s: %s", id, res.Status)
	}
}

// A task whose page is in the trash is gone: not polled, not claimable,
// and a claim on it ended (its holder's heartbeat is refused).
func TestATrashedPageCannotBeClaimed(t *testing.T) {
	for _, version := range []string{VersionCurrent, VersionDataSources} {
		t.Run(version, func(t *testing.T) {
			e := newEmulator(t)
			cfg := e.config(e.database(t, presetSchema(PresetNtask)), PresetNtask)
			cfg.Version = version
			src := e.open(t, cfg)
			ctx := context.Background()
			free, err := src.Create(ctx, sources.NewTask{Title: "thrown away"})
			if err != nil {
				t.Fatal(err)
			}
			held, err := src.Create(ctx, sources.NewTask{Title: "thrown away while held"})
			if err != nil {
				t.Fatal(err)
			}
			claim, err := src.Claim(ctx, held.ID, sources.ClaimRequest{Agent: "SANDMAN"})
			if err != nil {
				t.Fatal(err)
			}
			e.trash(t, free.ID)
			e.trash(t, held.ID)
			if _, err := src.Claim(ctx, free.ID, sources.ClaimRequest{Agent: "ORACLE"}); !errors.Is(err, model.ErrNoSuchTask) {
				t.Fatalf("a claim of a trashed page: %v; want the task gone (no such task)", err)
			}
			if next, err := src.ClaimNext(ctx, sources.ClaimRequest{Agent: "ORACLE"}); err != nil || next != nil {
				t.Fatalf("claim-next handed out %v (err %v); the only tasks are in the trash", next, err)
			}
			if _, err := src.Heartbeat(ctx, held.ID, claim.Claim().Token, 0); model.CodeOf(err) != model.CodeLostLock {
				t.Fatalf("the holder of a trashed page heartbeated: %v; want LOST_LOCK, its claim over", err)
			}
			d, err := src.Poll(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Tasks) != 0 || !d.Full {
				t.Fatalf("a full poll lists %d trashed tasks", len(d.Tasks))
			}
		})
	}
}

// A 529 service_overload is retried after its Retry-After, for reads and
// for writes: Notion did not apply the request.
func TestServiceOverloadThenSuccess(t *testing.T) {
	e := newEmulator(t)
	src := e.open(t, e.config(e.database(t, presetSchema(PresetNtask)), PresetNtask))
	ctx := context.Background()
	task, err := src.Create(ctx, sources.NewTask{Title: "under load"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.srv.Inject(1, notionemu.Fault{Endpoint: notionemu.EndpointDataSourceQuery, Status: notionemu.StatusServiceOverload}); err != nil {
		t.Fatal(err)
	}
	if d, err := src.Poll(ctx, ""); err != nil || len(d.Tasks) != 1 {
		t.Fatalf("a poll after one 529: %d tasks, %v", len(d.Tasks), err)
	}
	if err := e.srv.Inject(1, notionemu.Fault{Endpoint: notionemu.EndpointCommentCreate, Status: notionemu.StatusServiceOverload}); err != nil {
		t.Fatal(err)
	}
	if err := src.Comment(ctx, task.ID, sources.Note{Author: "SANDMAN", Text: "still here"}); err != nil {
		t.Fatalf("a comment whose write met one 529: %v", err)
	}
	if n := e.srv.Stats().ByStatus[notionemu.StatusServiceOverload]; n != 2 {
		t.Fatalf("the emulator answered %d 529s, want the 2 injected", n)
	}
}

// A workspace-wide 429 with a long Retry-After stops every token of that
// workspace until then: a second integration's request is not sent, and
// its command ends at once naming the limit; a token of another workspace
// goes on.
func TestAWorkspaceRateLimitSlowsEveryTokenOfTheWorkspace(t *testing.T) {
	e := newEmulator(t)
	// Tokens and a workspace of this test's own: the limiters and pauses
	// are per process, and the package's tests run once per API version.
	other, third := "secret_"+strings.ReplaceAll(uuid.NewString(), "-", ""), "secret_"+strings.ReplaceAll(uuid.NewString(), "-", "")
	acme := "acme-" + uuid.NewString()
	e.srv.AddToken(other)
	e.srv.AddToken(third)
	db, err := e.srv.CreateDatabase(presetSchema(PresetNtask), e.token, other, third)
	if err != nil {
		t.Fatal(err)
	}
	open := func(token, workspace string) *Source {
		cfg := e.config(db, PresetNtask)
		cfg.Token, cfg.Workspace, cfg.Budget = token, workspace, 10*time.Second
		return e.open(t, cfg)
	}
	first, second, elsewhere := open(e.token, acme), open(other, acme), open(third, "")
	ctx := context.Background()
	if err := e.srv.Inject(1, notionemu.Fault{Status: http.StatusTooManyRequests, RetryAfter: 5 * time.Minute, Reason: notionemu.ReasonWorkspace}); err != nil {
		t.Fatal(err)
	}
	_, err = first.Poll(ctx, "")
	if err == nil || !strings.Contains(err.Error(), notionemu.ReasonWorkspace) {
		t.Fatalf("the first token's poll under a 5-minute workspace 429: %v; want it to name the workspace limit", err)
	}
	before := e.srv.Stats().Requests
	_, err = second.Poll(ctx, "")
	if err == nil || !strings.Contains(err.Error(), "workspace") || model.CodeOf(err) != model.CodeAPIError {
		t.Fatalf("another token of the workspace polled while it waits: %v", err)
	}
	if sent := e.srv.Stats().Requests - before; sent != 0 {
		t.Fatalf("the other token sent %d requests into a workspace Notion had paused", sent)
	}
	if _, err := elsewhere.Poll(ctx, ""); err != nil {
		t.Fatalf("a token of another workspace is held too: %v", err)
	}
}

// Past a Free workspace's block limit, creating a task is refused with
// its own error naming the next step, while claims of the tasks already
// there go on.
func TestTheBlockLimitIsItsOwnErrorWithANextStep(t *testing.T) {
	e := newEmulator(t)
	e.srv.SetBlockLimit(1)
	src := e.open(t, e.config(e.database(t, presetSchema(PresetNtask)), PresetNtask))
	ctx := context.Background()
	first, err := src.Create(ctx, sources.NewTask{Title: "the last block"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = src.Create(ctx, sources.NewTask{Title: "one too many"})
	if !errors.Is(err, ErrBlockLimit) || model.CodeOf(err) != model.CodeMisconfigured || !strings.Contains(err.Error(), "upgrade the workspace's plan") {
		t.Fatalf("a create past the block limit: %v; want ErrBlockLimit with its next step", err)
	}
	if _, err := src.Claim(ctx, first.ID, sources.ClaimRequest{Agent: "SANDMAN"}); err != nil {
		t.Fatalf("a claim of an existing task past the block limit: %v", err)
	}
}
