package sshdoor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	gossh "golang.org/x/crypto/ssh"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/mesh"
	"github.com/claimdeck/claimdeck/sources/relay"
	"github.com/claimdeck/claimdeck/sources/sourcetest/memsource"
	"github.com/claimdeck/claimdeck/sources/webserver"
)

// The wiring this test holds is the one claimdeck ssh is to use: one hub
// reads the sources for every session, served by a relay on loopback
// inside the process, and each session's own hub reads that relay, with a
// desk of its own that acts as the person the key belongs to, at door
// ssh, read-only for a viewer. Twenty sessions then cost the store what
// one reader costs, and every action is the person's.

// countedSource counts the polls that reach the store through it.
type countedSource struct {
	sources.Source
	polls *atomic.Int64
}

func (c countedSource) Poll(ctx context.Context, since sources.Cursor, opt ...sources.PollOption) (sources.Delta, error) {
	c.polls.Add(1)
	return c.Source.Poll(ctx, since, opt...)
}

// queueView is the test's dashboard: it shows the queue as its session's
// hub publishes it, and t takes the first task over through that hub.
type queueView struct {
	ctx  context.Context
	s    *Session
	h    *hub.Hub
	snap hub.Snapshot
	said string
}

type (
	snapMsg    hub.Snapshot
	appliedMsg struct{ err error }
)

func (m *queueView) Init() tea.Cmd { return m.wait() }

func (m *queueView) wait() tea.Cmd {
	return func() tea.Msg {
		select {
		case s := <-m.h.Snapshots():
			return snapMsg(s)
		case <-m.ctx.Done():
			return nil
		}
	}
}

func (m *queueView) first() *model.Task {
	for i := range m.snap.Sources {
		if m.snap.Sources[i].Tasks.Len() > 0 {
			return m.snap.Sources[i].Tasks.At(0)
		}
	}
	return nil
}

func (m *queueView) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case snapMsg:
		m.snap = hub.Snapshot(msg)
		return m, m.wait()
	case appliedMsg:
		switch {
		case msg.err == nil:
			m.said = "applied"
		case strings.Contains(msg.err.Error(), "is read-only"):
			m.said = "refused: read-only"
		default:
			m.said = "refused: " + msg.err.Error()
		}
	case tea.KeyPressMsg:
		if msg.String() == "t" {
			if t := m.first(); t != nil {
				h, ctx := m.h, m.ctx
				return m, func() tea.Msg {
					_, err := h.Apply(ctx, sources.Request{Action: model.ActionTakeover, Seen: t, Reason: "paged"})
					return appliedMsg{err}
				}
			}
		}
	}
	return m, nil
}

func (m *queueView) View() tea.View {
	line := "loading"
	if t := m.first(); t != nil {
		line = fmt.Sprintf("queue %s holder=%s", t.ID, t.Claim().Name)
	}
	return tea.NewView(fmt.Sprintf("%s %s\n%s\n%s", m.s.Person, m.s.Role, line, m.said))
}

func TestTwentySessionsShareOneReaderAndActAsTheirPerson(t *testing.T) {
	if testing.Short() {
		t.Skip("twenty sessions skipped in -short mode")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store := memsource.NewMemory("team")
	task, err := store.Create(ctx, sources.NewTask{Title: "ship the fix"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "agent-7"}); err != nil {
		t.Fatal(err)
	}

	// One reader, as claimdeck relay reads.
	var readerPolls, sessionPolls atomic.Int64
	shared := hub.New(relay.HubConfig(hub.Config{Feeds: []hub.Feed{{Source: countedSource{store, &readerPolls}, Every: 50 * time.Millisecond}}}))
	var b [32]byte
	_, _ = rand.Read(b[:])
	token := mesh.Token(hex.EncodeToString(b[:]))
	srv := relay.NewServer(token)
	go shared.Run(ctx)
	go srv.Run(ctx, shared)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = webserver.New(srv.Handler(), webserver.Limits{PerClient: 256}).Serve(ctx, ln) }()
	relayAddr := "http://" + ln.Addr().String()

	journal, err := sources.OpenJournal(filepath.Join(t.TempDir(), "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer journal.Close()
	const doorSSH = model.Door("ssh")
	newModel := func(ctx context.Context, s *Session) (tea.Model, error) {
		rs, err := relay.Wrap(countedSource{store, &sessionPolls}, relayAddr, token, "")
		if err != nil {
			return nil, err
		}
		desk := &sources.Desk{Actor: s.Person, Door: doorSSH, Journal: journal,
			ReadOnly: func(string) bool { return s.ReadOnly() }}
		h := hub.New(hub.Config{Feeds: []hub.Feed{{Source: rs, Every: time.Minute}}, Desk: desk})
		go h.Run(ctx)
		return &queueView{ctx: ctx, s: s, h: h}, nil
	}

	dir := t.TempDir()
	people := []string{"alice", "bob"}
	signers := map[string]gossh.Signer{}
	var keys strings.Builder
	for i := range 20 {
		name := fmt.Sprintf("viewer%02d", i)
		if i < len(people) {
			name = people[i]
		}
		role := Viewer
		if name == "alice" {
			role = OnCall
		}
		s, line := newKey(t, name+"@test")
		signers[name] = s
		fmt.Fprintf(&keys, "%s %s %s\n", name, role, line)
	}
	keysFile := filepath.Join(dir, "keys")
	if err := os.WriteFile(keysFile, []byte(keys.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := New(Config{KeysFile: keysFile, HostKeyPath: filepath.Join(dir, HostKeyFile)}, newModel, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	sshLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	td := &testDoor{Door: d, addr: sshLn.Addr().String(), cancel: cancel}
	served := make(chan error, 1)
	go func() { served <- d.Serve(ctx, sshLn) }()
	defer func() { cancel(); <-served }()

	terms := map[string]*terminal{}
	for name, s := range signers {
		c, err := td.dial(s)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		terms[name] = openTerminal(t, c, 80, 24)
	}
	for _, term := range terms {
		waitFor(t, term.out.String, "holder=agent-7")
	}
	if d.Sessions() != 20 {
		t.Fatalf("%d sessions open", d.Sessions())
	}

	// bob may only look: his takeover is refused by his desk.
	fmt.Fprint(terms["bob"].in, "t")
	waitFor(t, terms["bob"].out.String, "refused: read-only")
	if got, _ := store.Get(ctx, task.ID); got.Claim().Name != "agent-7" {
		t.Fatalf("a viewer's takeover changed the task: holder %s", got.Claim().Name)
	}

	// alice is on call: her takeover is hers, at door ssh, and every
	// session sees it.
	fmt.Fprint(terms["alice"].in, "t")
	waitFor(t, terms["alice"].out.String, "applied")
	got, err := store.Get(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Claim().Name != model.HumanPrefix+"alice" {
		t.Fatalf("holder after alice's takeover: %s", got.Claim().Name)
	}
	for name, term := range terms {
		if name != "alice" {
			// The renderer redraws only what changed: the new holder's name.
			waitFor(t, term.out.String, model.HumanPrefix+"alice")
		}
	}
	records, err := sources.ReadJournal(journal.Path())
	if err != nil {
		t.Fatal(err)
	}
	// Every attempt is in the trail, refused or applied: bob's takeover
	// refused as read-only, alice's applied, each as its person at door ssh.
	var outcomes []model.AuditRecord
	for _, r := range records {
		if !r.Pending {
			outcomes = append(outcomes, r)
		}
	}
	if len(outcomes) != 2 {
		t.Fatalf("the journal's outcomes: %+v", outcomes)
	}
	bob, alice := outcomes[0], outcomes[1]
	if bob.Actor != "bob" || bob.Door != doorSSH || bob.Result != string(model.CodeMisconfigured) {
		t.Errorf("bob's refused takeover journaled as %+v", bob)
	}
	if alice.Actor != "alice" || alice.Door != doorSSH || alice.Action != model.ActionTakeover || alice.Result != "applied" {
		t.Errorf("alice's takeover journaled as %+v", alice)
	}

	// No session read the store: the one reader did, for all twenty.
	if n := sessionPolls.Load(); n != 0 {
		t.Errorf("the sessions polled the store %d times", n)
	}
	if readerPolls.Load() == 0 {
		t.Error("the shared reader never polled")
	}
	t.Logf("store polls: %d by the one reader, %d by 20 sessions", readerPolls.Load(), sessionPolls.Load())
}
