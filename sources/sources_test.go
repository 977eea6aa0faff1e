package sources_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/sourcetest/memsource"
	"github.com/claimdeck/claimdeck/sources/sqlstore"
)

func openQueue(t *testing.T) *sqlstore.Store {
	t.Helper()
	st, err := sqlstore.Open(context.Background(), sqlstore.Config{Name: "q", Driver: "sqlite", Path: filepath.Join(t.TempDir(), "q.db"), Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestDeskJournalsEveryAction: a pending record before the action, its
// outcome after; a refused action is journaled with its code and changes
// nothing; read-only refuses before anything is written.
func TestDeskJournalsEveryAction(t *testing.T) {
	ctx := context.Background()
	src := openQueue(t)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	j, err := sources.OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	readOnly := false
	desk := &sources.Desk{Actor: "alice", Journal: j, ReadOnly: func(string) bool { return readOnly }}
	task, _ := src.Create(ctx, sources.NewTask{Title: "stuck"})
	held, err := src.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "SANDMAN"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := desk.Apply(ctx, src, sources.Request{Action: model.ActionTakeover, Seen: held}); err != nil {
		t.Fatalf("takeover: %v", err)
	}
	// The screen still shows the agent's claim: a release on it is stale.
	_, err = desk.Apply(ctx, src, sources.Request{Action: model.ActionForceRelease, Seen: held, Reason: "wedged"})
	if model.CodeOf(err) != model.CodeConflict || !strings.Contains(err.Error(), "changed since you looked") {
		t.Fatalf("a release on a stale screen: %v", err)
	}
	if now, _ := src.Get(ctx, task.ID); now.Claim().Holder != model.HolderHuman {
		t.Fatalf("the refused release changed the task: %+v", now.Claim())
	}
	readOnly = true
	if _, err := desk.Apply(ctx, src, sources.Request{Action: model.ActionCancel, Seen: held, Reason: "x"}); model.CodeOf(err) != model.CodeMisconfigured {
		t.Fatalf("read-only cancel: %v", err)
	}
	readOnly = false
	if _, err := desk.Apply(ctx, src, sources.Request{Action: model.ActionCancel, Seen: held}); model.CodeOf(err) != model.CodeMisconfigured {
		t.Fatalf("cancel without a reason: %v", err)
	}
	j.Close()

	recs, err := sources.ReadJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, string(r.Action)+":"+r.Result)
		if r.Actor != "alice" || r.Task != task.ID || r.Attempt == "" {
			t.Fatalf("journal record lacks actor, task or attempt: %+v", r)
		}
	}
	// Refusals before anything is written (read-only, no reason) are
	// journaled too: every attempt leaves a record.
	want := "takeover:pending takeover:applied force-release:pending force-release:CONFLICT cancel:MISCONFIGURED cancel:MISCONFIGURED"
	if strings.Join(got, " ") != want {
		t.Fatalf("journal = %q, want %q", strings.Join(got, " "), want)
	}
}

func TestReadJournalSkipsOnlyATornLastLine(t *testing.T) {
	dir := t.TempDir()
	good, _ := json.Marshal(model.AuditRecord{Actor: "alice", Action: model.ActionCancel, Result: "applied"})
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	recs, err := sources.ReadJournal(write("torn", string(good)+"\n"+`{"actor":"bo`))
	if err != nil || len(recs) != 1 {
		t.Fatalf("torn last line: %d records, %v", len(recs), err)
	}
	_, err = sources.ReadJournal(write("bad", string(good)+"\n\nnot json\n"+string(good)+"\n"))
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("a bad line in the middle must be an error naming line 3, got %v", err)
	}
}

func FuzzReadJournal(f *testing.F) {
	good, _ := json.Marshal(model.AuditRecord{Actor: "alice", Action: model.ActionHandoff, Target: "ANY", At: time.Unix(1, 0).UTC()})
	f.Add(append(good, '\n'))
	f.Add([]byte("{}\n{\"at\":\"x\"}\n"))
	f.Add([]byte("\n\n{"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "j.jsonl")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		recs, err := sources.ReadJournal(p)
		if err != nil && !strings.Contains(err.Error(), "line ") {
			t.Fatalf("error does not name the line: %v", err)
		}
		for _, r := range recs {
			if _, err := json.Marshal(r); err != nil {
				t.Fatalf("a record read back does not marshal: %v", err)
			}
		}
	})
}

func TestCheckEdit(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	title := "t"
	free := &model.Task{ID: "a", State: model.StateQueued}
	held := (&model.Task{ID: "b", State: model.StateClaimed}).WithClaim(model.Claim{Holder: model.HolderAgent, Name: "SANDMAN", Token: "tok", Expires: model.StampOf(now.Add(time.Minute))})
	lapsed := (&model.Task{ID: "c", State: model.StateClaimed}).WithClaim(model.Claim{Holder: model.HolderAgent, Name: "SANDMAN", Token: "tok", Expires: model.StampOf(now.Add(-time.Minute))})
	human := (&model.Task{ID: "d", State: model.StateClaimed}).WithClaim(model.Claim{Holder: model.HolderHuman, Name: "HUMAN:alice", Token: "h"})
	cases := []struct {
		name string
		t    *model.Task
		e    sources.Edit
		want model.Code
	}{
		{"free task, anyone", free, sources.Edit{Actor: "x", Title: &title}, ""},
		{"nothing to change", free, sources.Edit{Actor: "x"}, model.CodeMisconfigured},
		{"no actor", free, sources.Edit{Title: &title}, model.CodeMisconfigured},
		{"claimed is the protocol's", free, sources.Edit{Actor: "x", State: model.StateClaimed}, model.CodeMisconfigured},
		{"held, no token", held, sources.Edit{Actor: "x", Title: &title}, model.CodeConflict},
		{"held, wrong token", held, sources.Edit{Actor: "x", Token: "other", Title: &title}, model.CodeLostLock},
		{"held, holder edits", held, sources.Edit{Actor: "x", Token: "tok", Title: &title}, ""},
		{"held, holder changes state", held, sources.Edit{Actor: "x", Token: "tok", State: model.StateDone}, model.CodeMisconfigured},
		{"lapsed lease, state change", lapsed, sources.Edit{Actor: "x", State: model.StateQueued}, ""},
		{"human hold, no token", human, sources.Edit{Actor: "x", Title: &title}, model.CodeConflict},
		{"token on a free task", free, sources.Edit{Actor: "x", Token: "tok", Title: &title}, model.CodeLostLock},
	}
	for _, c := range cases {
		if got := model.CodeOf(sources.CheckEdit(c.t, c.e, now)); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// An agent door names its caller: an approval through MCP stdio or ntask
// that names nobody is refused, never applied as the configured person,
// and the refusal is journaled.
func TestDeskRefusesAnAgentDoorThatNamesNobody(t *testing.T) {
	ctx := context.Background()
	src := memsource.NewMemory("q")
	task, err := src.Create(ctx, sources.NewTask{Title: "in review"})
	if err != nil {
		t.Fatal(err)
	}
	held, err := src.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "w1"})
	if err != nil {
		t.Fatal(err)
	}
	seen, err := src.Finish(ctx, task.ID, held.Claim().Token, sources.Outcome{State: model.StateReview, Writer: "w1"})
	if err != nil {
		t.Fatal(err)
	}
	desk := &sources.Desk{Actor: "alice"}
	for _, door := range []model.Door{model.DoorMCPStdio, model.DoorNtask, model.DoorMCPHTTP} {
		_, err := desk.Apply(ctx, src, sources.Request{Action: model.ActionApprove, Seen: seen, By: model.Actor{Door: door}})
		if model.CodeOf(err) != model.CodeMisconfigured || !strings.Contains(err.Error(), "names its caller") {
			t.Fatalf("an approval through %s naming nobody: %v, want MISCONFIGURED asking for the caller's name", door, err)
		}
	}
	if now, _ := src.Get(ctx, task.ID); now.State != model.StateReview {
		t.Fatalf("a refused approval left %s", now.State)
	}
}
