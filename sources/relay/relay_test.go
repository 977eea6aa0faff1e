package relay

import (
	"context"
	"database/sql"
	"encoding/binary"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/mesh"
	"github.com/claimdeck/claimdeck/sources/sqlstore"
	_ "modernc.org/sqlite"
)

const token = mesh.Token("c0ffee5ca1ab1e00d15ea5e0ddba11ad5eed0fca7ba5eba11")

// relayed is a relay over a real SQLite file, served on 127.0.0.1, and a
// dashboard's own handle on the same file wrapped to read through it.
type relayed struct {
	web    *httptest.Server
	polls  atomic.Int64 // requests to /v1/poll
	path   string
	store  *sqlstore.Store // the relay's reader
	own    *sqlstore.Store // the dashboard's, for writes
	client *Source
	srv    *Server
	url    string
}

func newRelayed(t *testing.T, window time.Duration) *relayed {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	path := filepath.Join(t.TempDir(), "q.db")
	store, err := sqlstore.Open(ctx, sqlstore.Config{Name: "local", Driver: "sqlite", Path: path, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	own, err := sqlstore.Open(ctx, sqlstore.Config{Name: "local", Driver: "sqlite", Path: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = own.Close() })
	h := hub.New(HubConfig(hub.Config{Feeds: []hub.Feed{{Source: store, Every: 20 * time.Millisecond}}, Window: window}))
	srv := NewServer(token)
	go h.Run(ctx)
	go srv.Run(ctx, h)
	r := &relayed{path: path, store: store, own: own, srv: srv}
	handler := srv.Handler()
	r.web = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/v1/poll" {
			r.polls.Add(1)
		}
		handler.ServeHTTP(w, req)
	}))
	t.Cleanup(r.web.Close)
	r.url = r.web.URL
	client, err := Wrap(own, r.url, token, "")
	if err != nil {
		t.Fatal(err)
	}
	client.retry = 10 * time.Millisecond
	r.client = client
	return r
}

// settled polls the store directly and through the relay until both hold
// the same tasks, and returns the relay's delta and cursor; the test fails
// when they never agree.
func (r *relayed) agree(t *testing.T, cursor sources.Cursor, what string) (sources.Delta, sources.Cursor) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	for {
		want, err := r.own.Poll(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.client.Poll(ctx, "")
		if err == nil && same(got.Tasks, want.Tasks) {
			d, err := r.client.Poll(ctx, cursor)
			if err != nil {
				t.Fatal(err)
			}
			return d, d.Cursor
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the relay never answered what the store holds (last error %v)", what, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func same(a, b []*model.Task) bool {
	if len(a) != len(b) {
		return false
	}
	byID := map[string]*model.Task{}
	for _, t := range b {
		byID[t.ID] = t
	}
	for _, t := range a {
		u := byID[t.ID]
		if u == nil || !reflect.DeepEqual(*t, *u) || !reflect.DeepEqual(t.Claim(), u.Claim()) || !reflect.DeepEqual(t.More(), u.More()) {
			return false
		}
	}
	return true
}

func ids(ts []*model.Task) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.ID)
	}
	slices.Sort(out)
	return out
}

// A dashboard reading through the relay holds exactly what the store
// holds, and each poll after the first carries only what changed since
// its cursor: a new task, an agent's claim, a row deleted by hand.
func TestADashboardThroughTheRelayHoldsWhatTheStoreHolds(t *testing.T) {
	r := newRelayed(t, -1)
	ctx := context.Background()
	for _, id := range []string{"t1", "t2", "t3"} {
		if _, err := r.own.Create(ctx, sources.NewTask{ID: id, Title: "index the logs of " + id, Priority: 2}); err != nil {
			t.Fatal(err)
		}
	}
	full, cursor := r.agree(t, "", "the first load")
	if !full.Full || !slices.Equal(ids(full.Tasks), []string{"t1", "t2", "t3"}) {
		t.Fatalf("first poll: full=%v %v, want the three tasks in full", full.Full, ids(full.Tasks))
	}

	claimed, err := r.own.Claim(ctx, "t2", sources.ClaimRequest{Agent: "SANDMAN", RunID: "r1", Node: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	d, cursor := r.agree(t, cursor, "the claim")
	if d.Full || !slices.Equal(ids(d.Tasks), []string{"t2"}) || len(d.Removed) != 0 {
		t.Fatalf("after a claim: full=%v tasks %v removed %v, want t2 alone", d.Full, ids(d.Tasks), d.Removed)
	}
	if got := d.Tasks[0].Claim(); got.Token != claimed.Claim().Token || got.Name != "SANDMAN" || got.Node != "n1" {
		t.Fatalf("the claim through the relay: %+v, want the store's %+v", got, claimed.Claim())
	}

	db, err := sql.Open("sqlite", "file:"+r.path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`DELETE FROM governance_tasks WHERE id = 't3'`); err != nil {
		t.Fatal(err)
	}
	// The store notices a deleted row at its next full read: ask the
	// relay's hub for one by waiting for the relay to agree.
	d, _ = r.agree(t, cursor, "the deletion")
	if d.Full || len(d.Tasks) != 0 || !slices.Equal(d.Removed, []string{"t3"}) {
		t.Fatalf("after a deletion: full=%v tasks %v removed %v, want t3 removed alone", d.Full, ids(d.Tasks), d.Removed)
	}
}

// A cursor the relay cannot answer from — another relay run's, or one
// from before the removals it still remembers — gets the whole table.
func TestACursorTheRelayCannotAnswerGetsEverything(t *testing.T) {
	r := newRelayed(t, -1)
	ctx := context.Background()
	if _, err := r.own.Create(ctx, sources.NewTask{ID: "t1", Title: "a"}); err != nil {
		t.Fatal(err)
	}
	_, cursor := r.agree(t, "", "the first load")
	epoch, seq, _ := strings.Cut(string(cursor), ".")
	for _, c := range []string{"0123456789abcdef." + seq, epoch + ".x", epoch + ".99999999", "nonsense"} {
		d, err := r.client.Poll(ctx, sources.Cursor(c))
		if err != nil || !d.Full || len(d.Tasks) != 1 {
			t.Errorf("cursor %q: err %v full=%v %d tasks, want the whole table", c, err, d.Full, len(d.Tasks))
		}
	}
	r.srv.mu.Lock()
	r.srv.tables["local"].floor = 1_000_000
	r.srv.mu.Unlock()
	if d, err := r.client.Poll(ctx, cursor); err != nil || !d.Full {
		t.Errorf("a cursor under the floor: err %v full=%v, want a full answer", err, d.Full)
	}
}

// When the relay cannot read the source, a dashboard's poll through it
// fails with the relay's reason, so the dashboard shows the source
// degraded rather than old tasks as fresh.
func TestARelayThatCannotReadItsSourceFailsThePoll(t *testing.T) {
	r := newRelayed(t, -1)
	ctx := context.Background()
	r.agree(t, "", "the first load")
	_ = r.store.Close() // the relay's reader is gone: its polls fail
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := r.client.Poll(ctx, "")
		if err != nil {
			if !strings.Contains(err.Error(), "cannot read the source") || !strings.Contains(err.Error(), "last good read was at") {
				t.Fatalf("the poll failed with %q; want the relay's reason and its last good read", err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the relay kept answering as if it read the source")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The dashboard's own store still writes: actions never go through the relay.
	if _, err := r.client.Create(ctx, sources.NewTask{ID: "t9", Title: "still writable"}); err != nil {
		t.Fatalf("a write through the wrapped source: %v", err)
	}
}

// frozen stands for a relay process that stopped without closing its
// connections (SIGSTOP, a hung machine): once frozen, every write and
// every new request waits until the test ends.
type frozen struct {
	h    http.Handler
	now  atomic.Bool
	done chan struct{}
}

func (f *frozen) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.now.Load() {
		<-f.done
		return
	}
	f.h.ServeHTTP(&frozenWriter{w, f}, r)
}

type frozenWriter struct {
	http.ResponseWriter
	f *frozen
}

func (w *frozenWriter) Write(b []byte) (int, error) {
	if w.f.now.Load() {
		<-w.f.done
		return 0, http.ErrHandlerTimeout
	}
	return w.ResponseWriter.Write(b)
}

func (w *frozenWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// A relay that stops answering without closing its stream does not leave
// a dashboard showing old tasks as fresh: the stream falls silent, is
// given up, and the poll that asks instead fails.
func TestAFrozenRelayShowsTheSourceDegraded(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	path := filepath.Join(t.TempDir(), "q.db")
	store, err := sqlstore.Open(ctx, sqlstore.Config{Name: "local", Driver: "sqlite", Path: path, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	rh := hub.New(HubConfig(hub.Config{Feeds: []hub.Feed{{Source: store, Every: 20 * time.Millisecond}}}))
	srv := NewServer(token)
	go rh.Run(ctx)
	go srv.Run(ctx, rh)
	f := &frozen{h: srv.Handler(), done: make(chan struct{})}
	web := httptest.NewServer(f)
	defer web.Close()
	defer close(f.done)
	client, err := Wrap(store, web.URL, token, "")
	if err != nil {
		t.Fatal(err)
	}
	client.retry, client.silence = 10*time.Millisecond, 300*time.Millisecond
	h := hub.New(hub.Config{Feeds: []hub.Feed{{Source: client, Every: 50 * time.Millisecond}}, PollTimeout: 500 * time.Millisecond})
	go h.Run(ctx)
	status := func(want hub.Status) {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for {
			select {
			case s := <-h.Snapshots():
				if s.Sources[0].Status == want {
					return
				}
			case <-timeout:
				t.Fatalf("the source never showed %s", want)
			}
		}
	}
	status(hub.StatusOK)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		client.mu.Lock()
		live := client.live
		client.mu.Unlock()
		if live {
			break // the stream delivers: the polls are answered from it
		}
		if time.Now().After(deadline) {
			t.Fatal("the stream never delivered")
		}
	}
	f.now.Store(true)
	status(hub.StatusDegraded)
}

// A stream that announces a huge frame and sends a few bytes costs the
// dashboard those bytes, not the announced length.
func TestAFrameIsReadAsItArrivesNotAsAnnounced(t *testing.T) {
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(binary.AppendUvarint(nil, maxAnswer-1))
		w.Write([]byte("not nearly that much"))
	}))
	defer web.Close()
	c, err := Wrap(nil, web.URL, token, "")
	if err != nil {
		t.Fatal(err)
	}
	c.Source = sourceNamed{name: "local"}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if c.stream(context.Background(), "e.1", 0, time.Time{}, make(chan struct{}, 1)) {
		t.Error("a stream that sent no whole frame counted as delivering")
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Fatalf("reading a frame announced at %d bytes allocated %d bytes", maxAnswer-1, grew)
	}
}

// sourceNamed is a source that has a name and nothing else, for a client
// that never reaches the store.
type sourceNamed struct {
	sources.Source // nil: any other call panics
	name           string
}

func (n sourceNamed) Name() string { return n.name }

// A lagging relay (its reads stopped answering) fails the poll too.
func TestALaggingRelayFailsThePoll(t *testing.T) {
	a := Answer{Loaded: true, Status: int(hub.StatusOK), Lagging: true, Every: time.Second, Updated: time.Unix(1_700_000_000, 0)}
	err := a.health("relay.example:8766")
	if err == nil || !strings.Contains(err.Error(), "lag") || !strings.Contains(err.Error(), "2023-11-14T22:13:20Z") {
		t.Fatalf("a lagging relay: %v; want an error saying it lags and when it last read", err)
	}
	a.Lagging = false
	if err := a.health("relay.example:8766"); err != nil {
		t.Fatalf("a relay reading well: %v", err)
	}
}

// A wrong token is refused as a configuration error naming what to set,
// and the token never appears in it.
func TestTheRelayRefusesAWrongToken(t *testing.T) {
	r := newRelayed(t, -1)
	bad, err := Wrap(r.own, r.url, mesh.Token("not-the-token-0123456789abcdef"), "TEAM_RELAY_TOKEN")
	if err != nil {
		t.Fatal(err)
	}
	_, err = bad.Poll(context.Background(), "")
	if model.CodeOf(err) != model.CodeMisconfigured || !strings.Contains(err.Error(), "$TEAM_RELAY_TOKEN") || strings.Contains(err.Error(), "not-the-token") {
		t.Fatalf("a wrong token: %v (%s); want MISCONFIGURED naming the variable that holds it", err, model.CodeOf(err))
	}
	for _, addr := range []string{"", "relay:8766", "ftp://h:1", "http://user:hunter2@h:1", "http://h:1/v1/poll", "http://h:1?x=1"} {
		_, err := Wrap(r.own, addr, token, "")
		if err == nil || !strings.Contains(err.Error(), "http://HOST:PORT") || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("address %q: %v; want a refusal showing the form, without the password", addr, err)
		}
	}
	if _, err := Wrap(r.own, r.url, "", ""); err == nil || !strings.Contains(err.Error(), DefaultTokenEnv) {
		t.Errorf("no token: %v; want a refusal naming %s", err, DefaultTokenEnv)
	}
}

// The watch stream hints at each change, and a dashboard's hub on the
// wrapped source shows a claim made by another process's store.
func TestAHubOnTheRelayShowsAChange(t *testing.T) {
	r := newRelayed(t, -1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := r.own.Create(ctx, sources.NewTask{ID: "t1", Title: "a"}); err != nil {
		t.Fatal(err)
	}
	if !r.client.Caps().Watch {
		t.Fatal("a relayed source does not say it watches")
	}
	// A long timer: only the watch can bring the claim soon.
	h := hub.New(hub.Config{Feeds: []hub.Feed{{Source: r.client, Every: time.Hour}}})
	go h.Run(ctx)
	find := func(s hub.Snapshot) *model.Task {
		for t := range s.Sources[0].Tasks.All() {
			if t.ID == "t1" {
				return t
			}
		}
		return nil
	}
	await := func(what string, ok func(*model.Task) bool) {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for {
			select {
			case s := <-h.Snapshots():
				if task := find(s); task != nil && ok(task) {
					return
				}
			case <-timeout:
				t.Fatalf("the hub on the relay never showed %s", what)
			}
		}
	}
	await("the task", func(*model.Task) bool { return true })
	if _, err := r.store.Claim(ctx, "t1", sources.ClaimRequest{Agent: "SANDMAN"}); err != nil {
		t.Fatal(err)
	}
	await("the claim", func(t *model.Task) bool { return t.Claim().Name == "SANDMAN" })
	if n := r.polls.Load(); n != 1 {
		t.Errorf("the hub asked the relay %d times over HTTP; want once, for the first load, and the claim pushed", n)
	}

	// A stream cut off (the relay restarted its connections) comes back
	// from where it was, and nothing is lost meanwhile.
	r.web.CloseClientConnections()
	if _, err := r.store.Heartbeat(ctx, "t1", mustGet(t, r.own, "t1").Claim().Token, 2*time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.Create(ctx, sources.NewTask{ID: "t2", Title: "after the cut"}); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(30 * time.Second)
	for {
		select {
		case s := <-h.Snapshots():
			if s.Sources[0].Tasks.Len() == 2 {
				return
			}
		case <-timeout:
			t.Fatal("the hub on the relay never showed the task created after its stream was cut")
		}
	}
}

func mustGet(t *testing.T, s sources.Source, id string) *model.Task {
	t.Helper()
	got, err := s.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// Frames pushed between two polls fold into one answer as the relay
// would have given it at once.
func TestFramesFoldIntoOneAnswer(t *testing.T) {
	task := func(id, title string) *model.Task { return &model.Task{Source: "local", ID: id, Title: title} }
	last := &Answer{Loaded: true, Cursor: "e.9", Status: int(hub.StatusOK)}
	frames := []*Answer{
		{Loaded: true, Cursor: "e.2", Tasks: []*model.Task{task("a", "a1"), task("b", "b1")}},
		{Loaded: true, Cursor: "e.3", Removed: []string{"b", "c"}, Tasks: []*model.Task{task("a", "a2")}},
		{Loaded: true, Cursor: "e.4", Tasks: []*model.Task{task("c", "c back")}, Err: "the last word"},
	}
	got := merge(frames, "e.1", last)
	byID := map[string]string{}
	for _, t := range got.Tasks {
		byID[t.ID] = t.Title
	}
	if got.Full || got.Cursor != "e.4" || got.Err != "the last word" || len(byID) != 2 || byID["a"] != "a2" || byID["c"] != "c back" || !slices.Equal(got.Removed, []string{"b"}) {
		t.Errorf("folded: full=%v cursor %s err %q tasks %v removed %v; want a2 and c back, b removed, at e.4", got.Full, got.Cursor, got.Err, byID, got.Removed)
	}
	// A full frame starts over: what came before it is in it.
	frames = append(frames, &Answer{Loaded: true, Full: true, Cursor: "e.5", Archived: 3, Tasks: []*model.Task{task("z", "z")}},
		&Answer{Loaded: true, Cursor: "e.6", Removed: []string{"z"}, Tasks: []*model.Task{task("y", "y")}})
	got = merge(frames, "e.1", last)
	if !got.Full || got.Archived != 3 || len(got.Tasks) != 1 || got.Tasks[0].ID != "y" || len(got.Removed) != 0 {
		t.Errorf("folded past a full frame: full=%v archived %d tasks %v removed %v; want y alone, in full", got.Full, got.Archived, ids(got.Tasks), got.Removed)
	}
	// Folding in steps gives what folding at once gives.
	once, steps := merge(frames[:3], "e.1", last), merge([]*Answer{merge(frames[:2], "", nil), frames[2]}, "e.1", last)
	slices.Sort(once.Removed)
	slices.Sort(steps.Removed)
	if !slices.Equal(ids(once.Tasks), ids(steps.Tasks)) || !slices.Equal(once.Removed, steps.Removed) || once.Cursor != steps.Cursor {
		t.Errorf("three frames folded in two steps: tasks %v removed %v; at once: %v %v", ids(steps.Tasks), steps.Removed, ids(once.Tasks), once.Removed)
	}
	stepwise := merge([]*Answer{merge(frames[:2], "", nil), merge(frames[2:], "", nil)}, "", nil)
	if stepwise.Cursor != got.Cursor || !slices.Equal(ids(stepwise.Tasks), ids(got.Tasks)) || !stepwise.Full {
		t.Errorf("folded in two steps: full=%v cursor %s tasks %v; want %v", stepwise.Full, stepwise.Cursor, ids(stepwise.Tasks), ids(got.Tasks))
	}
	// No frame: nothing new, at the same cursor, with the standing last heard.
	got = merge(nil, "e.9", last)
	if got.Full || len(got.Tasks) != 0 || got.Cursor != "e.9" || !got.Loaded {
		t.Errorf("no frame: %+v", got)
	}
}

// The window: a full answer leaves out what finished before the client's
// horizon and counts it, as a store's windowed poll does.
func TestAFullAnswerLeavesOldHistoryOutAndCountsIt(t *testing.T) {
	r := newRelayed(t, -1)
	ctx := context.Background()
	for _, id := range []string{"t1", "t2"} {
		if _, err := r.own.Create(ctx, sources.NewTask{ID: id, Title: id}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := r.own.Claim(ctx, "t1", sources.ClaimRequest{Agent: "A"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.own.Finish(ctx, "t1", c.Claim().Token, sources.Outcome{State: model.StateDone, Reason: "done"}); err != nil {
		t.Fatal(err)
	}
	r.agree(t, "", "the finish")
	d, err := r.client.Poll(ctx, "", sources.PollOption{FinishedAfter: time.Now().Add(time.Hour)})
	if err != nil || !slices.Equal(ids(d.Tasks), []string{"t2"}) || d.Archived != 1 {
		t.Fatalf("a full poll with a horizon after the finish: %v, tasks %v archived %d; want t2 and 1 archived", err, ids(d.Tasks), d.Archived)
	}
}

// Streams at the same cursor send one frame, built once, whatever their
// history horizons; when the table moves, the same cursor is answered
// anew with the change in it.
func TestStreamsAtOneCursorShareAFrame(t *testing.T) {
	ctx := context.Background()
	r := newRelayed(t, 0)
	if _, err := r.own.Create(ctx, sources.NewTask{ID: "s1", Title: "first"}); err != nil {
		t.Fatal(err)
	}
	_, cursor := r.agree(t, "", "a task")
	r.srv.mu.Lock()
	tb := r.srv.tables["local"]
	// Each client has its own history horizon; it shapes only a full
	// answer.
	a := r.srv.answer(tb, string(cursor), time.Now().Add(-time.Hour))
	b := r.srv.answer(tb, string(cursor), time.Now().Add(-2*time.Hour))
	r.srv.mu.Unlock()
	if a != b {
		t.Fatal("two streams at one cursor built the frame twice")
	}
	if a.next != string(cursor) {
		t.Fatalf("a caught-up cursor %s was moved to %s", cursor, a.next)
	}
	if _, err := r.own.Create(ctx, sources.NewTask{ID: "s2", Title: "second"}); err != nil {
		t.Fatal(err)
	}
	r.agree(t, cursor, "the second task")
	r.srv.mu.Lock()
	c := r.srv.answer(tb, string(cursor), time.Time{})
	r.srv.mu.Unlock()
	ans, err := decodeAnswer(c.bytes(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(ans.Tasks); !slices.Equal(got, []string{"s2"}) {
		t.Fatalf("after the table moved the frame from the old cursor carries %v; want the new task s2", got)
	}
}

// bytes is the answer in one piece, as a client reads it.
func (a *answer) bytes() []byte { return slices.Concat(a.parts...) }

// A dashboard reading through the relay counts the team's overrides as
// one reading the source does: the trail is read from the source itself
// (writes go there too), not reported "not counted".
func TestOverridesAreCountedThroughTheRelay(t *testing.T) {
	r := newRelayed(t, time.Hour)
	ctx := context.Background()
	start := time.Now().Add(-time.Minute)
	n, err := r.own.Create(ctx, sources.NewTask{Title: "stuck"})
	if err != nil {
		t.Fatal(err)
	}
	held, err := r.own.Claim(ctx, n.ID, sources.ClaimRequest{Agent: "SANDMAN"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.own.Takeover(ctx, n.ID, sources.Human{Actor: "alice", Reason: "looping", Expect: held.Version, Seen: held}); err != nil {
		t.Fatal(err)
	}
	feed := &sources.OverrideFeed{Sources: []sources.Source{r.client}, Start: start}
	recs, missing := feed.Read(ctx)
	if len(missing) != 0 {
		t.Fatalf("through the relay the trail is %v, want read", missing)
	}
	if len(recs) != 1 || recs[0].Action != "takeover" || recs[0].Actor != "alice" {
		t.Fatalf("through the relay the overrides are %+v, want alice's takeover", recs)
	}
}
