package tui

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/sqlstore"
)

// e2e is the dashboard as a real program over a real SQLite queue: one
// task held by the agent SANDMAN, one waiting.
type e2e struct {
	t       *testing.T
	tm      *teatest.TestModel
	shown   *shown
	store   *sqlstore.Store
	hub     *hub.Hub
	journal string
}

func startE2E(t *testing.T) *e2e {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	store, err := sqlstore.Open(ctx, sqlstore.Config{Name: "local", Driver: "sqlite", Path: filepath.Join(dir, "queue.db"), Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	for _, n := range []sources.NewTask{{ID: "deploy-1", Title: "Deploy the API"}, {ID: "docs-2", Title: "Write the runbook"}} {
		if _, err := store.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.Claim(ctx, "deploy-1", sources.ClaimRequest{Agent: "SANDMAN", RunID: "run-1"}); err != nil {
		t.Fatal(err)
	}
	e := dashboardOn(t, store)
	e.store = store
	e.see("docs-2", "local ok")
	return e
}

// dashboardOn runs the dashboard as a real program over src, its actions
// journalled as alice's.
func dashboardOn(t *testing.T, src sources.Source) *e2e {
	t.Helper()
	e := &e2e{t: t, journal: filepath.Join(t.TempDir(), "journal.jsonl")}
	journal, err := sources.OpenJournal(e.journal)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = journal.Close() })
	e.hub = hub.New(hub.Config{Feeds: []hub.Feed{{Source: src, Every: 100 * time.Millisecond}},
		Desk: &sources.Desk{Actor: "alice", Journal: journal}})
	hctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.hub.Run(hctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	m, err := New(Options{Hub: e.hub})
	if err != nil {
		t.Fatal(err)
	}
	e.shown = &shown{Model: m}
	e.tm = teatest.NewTestModel(t, e.shown, teatest.WithInitialTermSize(120, 40))
	return e
}

// shown is the dashboard with every frame it hands the renderer kept, as
// text: Bubble Tea v2's renderer writes only the cells that changed, so
// the bytes on the wire need not hold a changed line whole.
type shown struct {
	*Model
	mu     sync.Mutex
	frames bytes.Buffer // the frames since see last read them
}

func (s *shown) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := s.Model.Update(msg)
	return s, cmd
}

func (s *shown) View() tea.View {
	v := s.Model.View()
	s.mu.Lock()
	s.frames.WriteString(ansi.Strip(v.Content))
	s.mu.Unlock()
	return v
}

func (s *shown) Read(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.frames.Read(p) // io.EOF when no frame came since

}

// see waits until the screen has shown every one of texts since see last
// looked.
func (e *e2e) see(texts ...string) {
	e.t.Helper()
	var seen []byte
	teatest.WaitFor(e.t, e.shown, func(b []byte) bool {
		seen = append(seen, b...)
		for _, s := range texts {
			if !bytes.Contains(seen, []byte(s)) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(15*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}

func (e *e2e) keys(ks ...string) {
	for _, k := range ks {
		// Apart, as a person types: keys within burstGap of the one
		// that closed a dialog are taken as typed for that dialog.
		time.Sleep(2 * burstGap)
		for _, msg := range keyMsgs(e.t, k) {
			e.tm.Send(msg)
		}
	}
}

func (e *e2e) task(id string) *model.Task {
	e.t.Helper()
	task, err := e.store.Get(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return task
}

// quit ends the program and returns the final model.
func (e *e2e) quit() *Model {
	e.t.Helper()
	e.keys("esc") // close a dialog left open
	e.keys("q")
	return e.tm.FinalModel(e.t, teatest.WithFinalTimeout(10*time.Second)).(*shown).Model
}

func TestE2EClaimAsHuman(t *testing.T) {
	e := startE2E(t)
	e.keys("2")
	e.see("SANDMAN")
	e.keys("c")
	e.see("Claim as HUMAN deploy-1 on local", "optional") // the reason may be left empty
	e.keys("enter")
	e.see("Claim as HUMAN deploy-1 on local?", "[y/N]")
	e.keys("y")
	e.see("takeover deploy-1 applied")
	if got := e.task("deploy-1"); got.Claim().Holder != model.HolderHuman || got.Claim().Name != "HUMAN:alice" {
		t.Fatalf("holder %s %s", got.Claim().Holder, got.Claim().Name)
	}
	recs, err := sources.ReadJournal(e.journal)
	if err != nil || len(recs) != 2 || recs[1].Result != "applied" {
		t.Fatalf("journal %+v, %v: want pending then applied", recs, err)
	}
	m := e.quit()
	if sel := m.selected(); sel == nil || sel.ID != "deploy-1" {
		t.Fatalf("the selection moved off the task: %v", sel)
	}
}

func TestE2EForceRelease(t *testing.T) {
	e := startE2E(t)
	e.keys("2")
	e.see("SANDMAN")
	e.keys("r", "enter", "y")
	e.see("force-release deploy-1 applied")
	if got := e.task("deploy-1"); got.State != model.StateQueued || got.Held() {
		t.Fatalf("after force-release: %s held by %q", got.State, got.Claim().Name)
	}
	m := e.quit()
	if n := len(m.board.panes[queueView].members); n != 2 {
		t.Fatalf("the queue holds %d tasks after the release, want 2", n)
	}
}

func TestE2ECancelWithReason(t *testing.T) {
	e := startE2E(t)
	e.keys("x", "enter")
	e.see("a reason is required")
	e.keys("o", "b", "s", "o", "l", "e", "t", "e", "enter")
	e.see("obsolete")
	e.keys("y")
	e.see("cancel docs-2 applied")
	if got := e.task("docs-2"); got.State != model.StateCanceled || !strings.Contains(got.More().Reason, "obsolete") {
		t.Fatalf("after cancel: %s %q", got.State, got.More().Reason)
	}
	e.quit()
}

func TestE2EHandOff(t *testing.T) {
	e := startE2E(t)
	e.keys("2")
	e.see("SANDMAN")
	e.keys("h")
	e.see("to       ANY")
	e.keys("tab", "s", "t", "u", "c", "k", "enter")
	e.see("ANY, priority medium")
	e.keys("y")
	e.see("handoff deploy-1 applied")
	if got := e.task("deploy-1"); got.ReservedFor() != model.AnyAgent || got.Held() {
		t.Fatalf("after hand-off: reserved for %q, held by %q", got.ReservedFor(), got.Claim().Name)
	}
	e.quit()
}

// Never trust the screen: the agent heartbeats while polling is paused, so
// the human acts on a stale view and is told what changed.
func TestE2EActionOnAChangedTaskIsRefused(t *testing.T) {
	e := startE2E(t)
	e.keys("2")
	e.see("SANDMAN")
	e.tm.Send(tea.BlurMsg{})
	e.see("paused")
	time.Sleep(500 * time.Millisecond) // let a poll already under way land
	held := e.task("deploy-1")
	if _, err := e.store.Takeover(context.Background(), "deploy-1", sources.Human{Actor: "carol", Expect: held.Version}); err != nil {
		t.Fatal(err)
	}
	e.keys("r", "enter", "y")
	e.see("Force-release deploy-1 refused", "holder AGENT SANDMAN → HUMAN HUMAN:carol", "force-release deploy-1 refused: CONFLICT")
	if got := e.task("deploy-1"); got.Claim().Name != "HUMAN:carol" || got.State != model.StateClaimed {
		t.Fatalf("the refused release changed the task: %s %s", got.State, got.Claim().Name)
	}
	if m := e.quit(); !strings.Contains(m.status.text, "CONFLICT") || len(m.work.pending) != 0 {
		t.Fatalf("after the refusal: banner %q, pending %v", m.status.text, m.work.pending)
	}
}
