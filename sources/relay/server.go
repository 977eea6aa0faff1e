// Package relay lets many dashboards share one reader of their sources.
//
// A relay (`claimdeck relay`) reads each configured source with one hub,
// exactly as a dashboard does, and answers the dashboards' polls from
// memory; a dashboard whose source names the relay (Wrap) polls the relay
// instead of the store and still writes to the store itself, as its own
// actor, so no action passes through the relay. Fifty dashboards on one
// PostgreSQL then cost the server one reader, not fifty.
//
// Freshness travels with the tasks: every answer carries the relay's own
// view of the source (its status, error and last good read), and a client
// fails its poll when the relay's read of the source fails or lags
// (hub.SourceState.Lagging), so a dashboard behind a relay says "degraded"
// exactly when one reading the store would.
package relay

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"math"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/mesh"
)

// DefaultTokenEnv names the environment variable that holds the relay's
// bearer token, on the relay and on its dashboards alike.
const DefaultTokenEnv = "CLAIMDECK_RELAY_TOKEN"

// Debounce is the relay hub's gathering of change hints, and so the
// shortest time between two frames to its dashboards under churn, each of
// which takes every frame as it comes (ClientDebounce): one reader serves
// every dashboard, so it can afford to poll twice as often as a dashboard
// does (hub.DefaultDebounce). In the fleet benchmark (50 dashboards on one
// CPU, 4 and 3 runs, alternated) a change reached all 50 in 70-99 ms
// median, 166-224 ms worst, at 50 ms; in 64-87 / 212-343 ms at 25 ms, the
// dashboards' CPU saturated (96-98 % busy against 82-90 %); 75 ms: 96-99
// / 130-241 ms (2 runs).
const Debounce = 50 * time.Millisecond

// ListenPause is the pause a relay's PostgreSQL source takes from
// LISTEN while NOTIFYs come faster than it (sqlstore.Config.ListenPause):
// a dashboard's 200 ms spares the server fifty listeners' wake-ups, and a
// relay is one listener, so it waits an eighth of that and its dashboards
// see a change sooner.
const ListenPause = 25 * time.Millisecond

// keepAlive is how often an idle stream carries an empty frame, and so
// how soon (three of them) a client notices a relay that stopped without
// closing its streams: at a dashboard's 2 s poll interval, as soon as a
// source read directly would show lagging (hub.SourceState.Lagging).
const keepAlive = 2 * time.Second

// firstLoadWait is how long a poll waits for the relay's first read of a
// source before answering that it has none yet.
const firstLoadWait = 10 * time.Second

// HubConfig is the hub a relay reads with: base (the configuration's
// window, policy and intervals) with the relay's Debounce, and no first
// page, so that every answer holds whole reads.
func HubConfig(base hub.Config) hub.Config {
	base.Debounce = Debounce
	base.FirstPage = -1
	base.Changes = true // the table takes each snapshot's changes, not all of its tasks
	base.Desk = nil     // a relay reads; actions go from each dashboard to the store
	return base
}

// Config is a relay server's: its token, and what a client may hold of
// it. Zero fields take their defaults.
type Config struct {
	Token mesh.Token
	// MaxFull is how many clients may be sent a full answer at once, over
	// polls and streams (default 64: the fifty dashboards of the fleet
	// benchmark restarting at once). Clients asking the same full answer
	// share it, so a place costs little beyond its connection: the cap
	// bounds the writers of full answers, and the distinct full answers
	// alive (each a list of pieces over the table's bytes).
	MaxFull int
	// FullWait is how long a client over MaxFull waits for a place
	// before it is answered 503 with a Retry-After (default 2 s).
	FullWait time.Duration
	// Stall is the write deadline of each 256 KiB piece of an answer
	// (default 10 s): a client that takes less in that time is dropped,
	// so one that stopped reading lets its answer go and a slow reader
	// behind an SSH tunnel still gets a large answer whole.
	Stall time.Duration
	// HorizonStep is the grain of a full answer's history horizon
	// (default a minute): a client's horizon is rounded down to it, so
	// that dashboards whose windows end within the same minute share one
	// full answer. Rounding down keeps in the answer a task that finished
	// within that minute before the client's horizon, as the client's own
	// table holds until its next full read.
	HorizonStep time.Duration
}

// Defaults for Config.
const (
	DefaultMaxFull     = 64
	DefaultFullWait    = 2 * time.Second
	DefaultStall       = 10 * time.Second
	DefaultHorizonStep = time.Minute
)

func (c Config) withDefaults() Config {
	if c.MaxFull <= 0 {
		c.MaxFull = DefaultMaxFull
	}
	if c.FullWait <= 0 {
		c.FullWait = DefaultFullWait
	}
	if c.Stall <= 0 {
		c.Stall = DefaultStall
	}
	if c.HorizonStep <= 0 {
		c.HorizonStep = DefaultHorizonStep
	}
	return c
}

// Server answers dashboards' polls and watches from its hub's snapshots.
type Server struct {
	token mesh.Token
	cfg   Config
	epoch string
	// full holds a place for each client being sent a full answer
	// (Config.MaxFull places).
	full chan struct{}

	mu      sync.Mutex
	tables  map[string]*table
	changed chan struct{} // closed and replaced whenever a table moves
	now     func() time.Time
}

// table is one source as the relay last read it. Every change of a task
// (a new record from the hub) or its removal takes the next sequence
// number; log lists them in that order so a poll since a sequence reads
// only what came after it.
type table struct {
	seq    uint64
	gen    uint64
	tasks  map[string]*entry
	gone   map[string]uint64 // removed ids and the sequence of their removal
	floor  uint64            // a cursor under it is answered in full: removals before it were forgotten
	log    []change
	state  hub.SourceState
	loaded bool
	// answers are the answers built since the table last moved, by what
	// they answer: every poll and stream asking the same (all streams once
	// caught up, every client that needs everything) is sent one answer,
	// built once.
	answers map[answerKey]*answer
	// fullBuilt counts the full answers built, for tests.
	fullBuilt int
	scratch   []byte // room to encode a task in (entry.wire)
}

// answerKey is what an answer answers. Every cursor the table cannot
// answer from asks the same full answer, keyed by the empty cursor.
type answerKey struct {
	cursor string
	after  int64 // a full answer's history horizon, Unix microseconds
	lag    bool  // the relay's reads lagged when it was built
}

// answer is an answer on the wire in pieces: its head, then each task as
// the table holds it on the wire (entry.wire), never copied into one
// buffer. A full answer of 30,000 tasks is thus 30,000 slices (720 KB)
// over the bytes the table keeps anyway, not 47 MB of its own, and every
// client sent it, however slowly it reads, holds no more than that.
type answer struct {
	parts [][]byte
	size  int    // the bytes of parts
	next  string // the cursor it brings the client to
	full  bool
}

type entry struct {
	t        *model.Task
	seq, gen uint64
	bin      []byte // t as an answer carries it, made at the first answer that does
}

// wire is the entry's task as an answer carries it (appendCarried),
// encoded once for every client and every answer: in the table's
// scratch room, then copied to a buffer of its exact size, so that
// encoding a table of 47 MB allocates 47 MB, not twice that in buffers
// grown by appending.
func (e *entry) wire(tb *table) []byte {
	if e.bin == nil {
		tb.scratch = appendTask(tb.scratch[:0], e.t)
		e.bin = appendCarried(make([]byte, 0, binary.MaxVarintLen32+len(tb.scratch)), tb.scratch)
	}
	return e.bin
}

type change struct {
	seq uint64
	id  string
}

// maxGone bounds the removals a table remembers; a client further behind
// gets a full answer.
const maxGone = 16384

// NewServer is a relay with the default Config that serves what Run
// reads from the hub's snapshots, to clients presenting token.
func NewServer(token mesh.Token) *Server { return New(Config{Token: token}) }

// New is a relay that serves what Run reads from the hub's snapshots, to
// clients presenting cfg.Token.
func New(cfg Config) *Server {
	cfg = cfg.withDefaults()
	var b [8]byte
	_, _ = rand.Read(b[:])
	return &Server{token: cfg.Token, cfg: cfg, full: make(chan struct{}, cfg.MaxFull), epoch: hex.EncodeToString(b[:]),
		tables: map[string]*table{}, changed: make(chan struct{}), now: time.Now}
}

// Run takes the hub's snapshots into the server's tables until ctx ends.
// The hub runs beside it (h.Run).
func (s *Server) Run(ctx context.Context, h *hub.Hub) {
	for {
		select {
		case <-ctx.Done():
			return
		case snap := <-h.Snapshots():
			s.take(snap)
		}
	}
}

// take applies one snapshot: every task record the table does not hold
// yet is a change, every id it holds that the snapshot lacks a removal.
func (s *Server) take(snap hub.Snapshot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	moved := false
	for i := range snap.Sources {
		st := snap.Sources[i]
		tb := s.tables[st.Name]
		if tb == nil {
			tb = &table{tasks: map[string]*entry{}, gone: map[string]uint64{}}
			s.tables[st.Name] = tb
		}
		tasks, changed, gone := st.Tasks, st.Changed, st.Gone
		st.Tasks, st.Changed, st.Gone = hub.Tasks{}, nil, nil
		// A read that moved only the time of the last good read is no
		// news: it wakes no stream (they look each second for a lag
		// anyway) and keeps the frames built.
		news := tb.state.Status != st.Status || tb.state.Err != st.Err || tb.state.Health.Code != st.Health.Code
		tb.state = st
		if !st.Updated.IsZero() && !st.Loading {
			first := !tb.loaded
			tb.loaded = true
			switch {
			case first || st.Whole:
				news = tb.apply(tasks) || first || news
			case tb.changes(changed, gone):
				news = true
			}
		} // else nothing read yet: keep answering "not loaded"
		if news {
			tb.answers = nil
			moved = true
		}
	}
	if moved {
		close(s.changed)
		s.changed = make(chan struct{})
	}
}

// apply diffs the table against the hub's list of a source's tasks.
// Records are immutable, so the same pointer is no change; a new record
// equal to the old one (DeepEqual follows the claim and the rest behind
// their pointers) is a task read again, as an incremental poll's overlap
// does, and no change either.
func (tb *table) apply(tasks hub.Tasks) (moved bool) {
	tb.gen++
	for t := range tasks.All() {
		if tb.put(t) {
			moved = true
		}
		tb.tasks[t.ID].gen = tb.gen
	}
	if len(tb.tasks) > tasks.Len() || moved {
		for id, e := range tb.tasks {
			if e.gen != tb.gen {
				tb.remove(id)
				moved = true
			}
		}
	}
	tb.compact()
	return moved
}

// put takes a task's record; true when it is news.
func (tb *table) put(t *model.Task) bool {
	e := tb.tasks[t.ID]
	if e == nil {
		e = &entry{gen: tb.gen}
		tb.tasks[t.ID] = e
		delete(tb.gone, t.ID)
	}
	switch {
	case e.t == t:
		return false
	case e.t != nil && reflect.DeepEqual(*e.t, *t):
		e.t = t // read again, unchanged (a poll's overlap): no news
		return false
	}
	tb.seq++
	e.t, e.seq, e.bin = t, tb.seq, nil
	tb.log = append(tb.log, change{tb.seq, t.ID})
	return true
}

// remove forgets a task, remembering its removal.
func (tb *table) remove(id string) {
	delete(tb.tasks, id)
	tb.seq++
	tb.gone[id] = tb.seq
	tb.log = append(tb.log, change{tb.seq, id})
}

// changes applies what the hub says changed since the snapshot before:
// the records put and the ids removed.
func (tb *table) changes(put []*model.Task, gone []string) (moved bool) {
	for _, t := range put {
		if tb.put(t) {
			moved = true
		}
	}
	for _, id := range gone {
		if _, ok := tb.tasks[id]; ok {
			tb.remove(id)
			moved = true
		}
	}
	tb.compact()
	return moved
}

// compact keeps the log to what can still be asked for: one line per
// task or removal, and at most maxGone removals (the oldest forgotten,
// and the floor raised past them).
func (tb *table) compact() {
	if len(tb.gone) > maxGone {
		seqs := make([]uint64, 0, len(tb.gone))
		for _, q := range tb.gone {
			seqs = append(seqs, q)
		}
		slices.Sort(seqs)
		cut := seqs[len(seqs)-maxGone/2-1]
		for id, q := range tb.gone {
			if q <= cut {
				delete(tb.gone, id)
			}
		}
		tb.floor = max(tb.floor, cut+1)
	}
	if len(tb.log) <= 2*(len(tb.tasks)+len(tb.gone))+1024 {
		return
	}
	kept := tb.log[:0]
	for _, c := range tb.log {
		if tb.current(c) {
			kept = append(kept, c)
		}
	}
	clear(tb.log[len(kept):])
	tb.log = kept
}

// current says whether a log line is still the latest word on its id.
func (tb *table) current(c change) bool {
	if e := tb.tasks[c.id]; e != nil {
		return e.seq == c.seq
	}
	q, ok := tb.gone[c.id]
	return ok && q == c.seq
}

// Handler serves the relay's API: GET /v1/stream and GET /v1/poll for
// clients with the token, GET /v1/sources for a person with it.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/poll", s.poll)
	mux.HandleFunc("GET /v1/stream", s.stream)
	mux.HandleFunc("GET /v1/sources", s.sources)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.token.Authorizes(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="claimdeck relay"`)
			http.Error(w, "the relay wants its bearer token (the same "+DefaultTokenEnv+" it was started with)", http.StatusUnauthorized)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// poll answers GET /v1/poll?source=NAME&cursor=C&after=MICROS with an
// answer on the wire (wire.go): the changes since cursor, or everything
// when the cursor is empty, from another relay run, or older than the
// removals kept. after is the client's history horizon (Unix
// microseconds, 0 for none): a full answer leaves out the tasks finished
// before it (Config.HorizonStep) and counts them. A client reads this
// way while its stream is down. A full answer waits for a place among
// Config.MaxFull; without one it is answered 503 with a Retry-After.
func (s *Server) poll(w http.ResponseWriter, r *http.Request) {
	name, cursor, after, ok := pollArgs(w, r)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), firstLoadWait)
	defer cancel()
	tb, code, msg := s.ready(ctx, name)
	if tb == nil {
		http.Error(w, msg, code)
		return
	}
	a := s.answer(tb, cursor, after)
	s.mu.Unlock()
	if a.full {
		leave := s.admit(r.Context())
		if leave == nil {
			s.busy(w)
			return
		}
		defer leave()
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(a.size))
	s.send(w, nil, a)
}

// admit takes a place for a client to be sent a full answer, waiting up
// to Config.FullWait for one; it returns the place's release, or nil
// when none came free.
func (s *Server) admit(ctx context.Context) (leave func()) {
	leave = func() { <-s.full }
	select {
	case s.full <- struct{}{}:
		return leave
	default:
	}
	wait := time.NewTimer(s.cfg.FullWait)
	defer wait.Stop()
	select {
	case s.full <- struct{}{}:
		return leave
	case <-wait.C:
	case <-ctx.Done():
	}
	return nil
}

// busy answers a client over Config.MaxFull: 503, and when to ask again.
func (s *Server) busy(w http.ResponseWriter) {
	secs := strconv.Itoa(max(1, int(math.Ceil(s.cfg.FullWait.Seconds()))))
	w.Header().Set("Retry-After", secs)
	http.Error(w, "the relay is sending "+strconv.Itoa(s.cfg.MaxFull)+" full answers already: ask again in "+secs+" s", http.StatusServiceUnavailable)
}

// sendPiece is how much of an answer goes out under one write deadline.
const sendPiece = 256 << 10

// send writes prefix, then a's pieces (a may be nil), to a client,
// allowing it Config.Stall for each sendPiece bytes; false when it did
// not take them (it stopped reading, or left), and its connection is
// then dropped. A server's write timeout for the whole answer would cut
// a large answer to a slow reader that reads, and hold one that stopped
// reading until then.
func (s *Server) send(w http.ResponseWriter, prefix []byte, a *answer) bool {
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Now().Add(s.cfg.Stall))
	if _, err := w.Write(prefix); err != nil {
		return false
	}
	piece := len(prefix)
	if a != nil {
		for _, p := range a.parts {
			if piece >= sendPiece {
				_ = rc.SetWriteDeadline(time.Now().Add(s.cfg.Stall))
				piece = 0
			}
			if _, err := w.Write(p); err != nil {
				return false
			}
			piece += len(p)
		}
	}
	if rc.Flush() != nil {
		return false
	}
	// Sent: no deadline stays behind for the connection's next request,
	// or a stream's wait for its next frame.
	_ = rc.SetWriteDeadline(time.Time{})
	return true
}

// pollArgs reads a poll's or a stream's query; false when it answered
// a bad one.
func pollArgs(w http.ResponseWriter, r *http.Request) (name, cursor string, after time.Time, ok bool) {
	q := r.URL.Query()
	if v := q.Get("after"); v != "" && v != "0" {
		us, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			http.Error(w, "after: want Unix microseconds, got "+strconv.Quote(v), http.StatusBadRequest)
			return "", "", time.Time{}, false
		}
		after = time.UnixMicro(us)
	}
	return q.Get("source"), q.Get("cursor"), after, true
}

// ready waits up to ctx for the relay's first read of the source and
// returns its table with s.mu held; nil, and what to answer, when it
// has none.
func (s *Server) ready(ctx context.Context, name string) (tb *table, code int, msg string) {
	for {
		s.mu.Lock()
		tb := s.tables[name]
		if tb != nil && (tb.loaded || tb.state.Status == hub.StatusDegraded) {
			return tb, http.StatusOK, ""
		}
		wait := s.changed
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			if tb == nil && !s.knows(name) {
				return nil, http.StatusNotFound, "the relay reads no source named " + strconv.Quote(name) + " (" + s.names() + ")"
			}
			return nil, http.StatusServiceUnavailable, "the relay has not read source " + strconv.Quote(name) + " yet"
		case <-wait:
		}
	}
}

// answer is the answer to a poll or a stream of tb since cursor, with
// the history horizon after, built once for every client asking the same
// until the table moves. Holds s.mu.
func (s *Server) answer(tb *table, cursor string, after time.Time) *answer {
	k := answerKey{cursor: cursor, lag: tb.state.Lagging(s.now())}
	if _, ok := s.since(tb, cursor); tb.loaded && !ok {
		k.cursor = "" // every cursor the table cannot answer from asks for everything
		if !after.IsZero() {
			after = after.Truncate(s.cfg.HorizonStep)
			k.after = after.UnixMicro() // only a full answer leaves history out
		}
	}
	if a, ok := tb.answers[k]; ok {
		return a
	}
	a := s.build(tb, cursor, after, k.lag)
	if tb.answers == nil {
		tb.answers = map[answerKey]*answer{}
	}
	tb.answers[k] = a
	return a
}

// build is the answer, on the wire, to a poll of tb since cursor; lag is
// whether the relay's reads lag now. Holds s.mu.
func (s *Server) build(tb *table, cursor string, after time.Time, lag bool) *answer {
	a := &Answer{Cursor: s.epoch + "." + strconv.FormatUint(tb.seq, 10), Loaded: tb.loaded,
		Status: int(tb.state.Status), Updated: tb.state.Updated, Err: tb.state.Err,
		Code: string(tb.state.Health.Code), Every: tb.state.Health.Every,
		Lagging: lag}
	out := &answer{next: a.Cursor}
	parts := [][]byte{nil} // the head, once the tasks are counted
	since, ok := s.since(tb, cursor)
	switch {
	case !tb.loaded:
		out.next = cursor
	case !ok:
		out.full, a.Full = true, true
		a.Archived = tb.state.Archived
		parts = slices.Grow(parts, len(tb.tasks))
		for _, e := range tb.tasks {
			if model.Archived(e.t, after) {
				a.Archived++
				continue
			}
			parts = append(parts, e.wire(tb))
		}
		tb.fullBuilt++
	default:
		i, _ := slices.BinarySearchFunc(tb.log, since+1, func(c change, seq uint64) int {
			switch {
			case c.seq < seq:
				return -1
			case c.seq > seq:
				return 1
			}
			return 0
		})
		for _, c := range tb.log[i:] {
			if e := tb.tasks[c.id]; e != nil && e.seq == c.seq {
				parts = append(parts, e.wire(tb))
			} else if q, ok := tb.gone[c.id]; ok && q == c.seq {
				a.Removed = append(a.Removed, c.id)
			}
		}
	}
	parts[0] = appendHead(nil, a, len(parts)-1)
	for _, p := range parts {
		out.size += len(p)
	}
	out.parts = parts
	return out
}

// since is the sequence a cursor of this relay run stands at; false asks
// for a full answer.
func (s *Server) since(tb *table, cursor string) (uint64, bool) {
	epoch, seq, ok := strings.Cut(cursor, ".")
	if !ok || epoch != s.epoch {
		return 0, false
	}
	n, err := strconv.ParseUint(seq, 10, 64)
	if err != nil || n > tb.seq || n+1 < tb.floor {
		return 0, false
	}
	return n, true
}

func (s *Server) knows(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tables[name] != nil
}

func (s *Server) names() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.tables) == 0 {
		return "it has read none yet"
	}
	names := make([]string, 0, len(s.tables))
	for n := range s.tables {
		names = append(names, strconv.Quote(n))
	}
	slices.Sort(names)
	return "it reads " + strings.Join(names, ", ")
}

// stream serves GET /v1/stream?source=NAME&cursor=C&after=MICROS:
// answers pushed as the relay's reads change the source's tasks or its
// standing, each a frame (a varint length, then an answer as poll gives
// it) answering the changes since the frame before; the first answers
// the cursor asked. An empty frame comes every keepAlive when nothing
// else does. A dashboard thus holds each change without asking, and
// the relay builds one answer per change per dashboard instead of a
// request, a hint and an answer. A full frame waits for a place among
// Config.MaxFull as a poll's full answer does: without one, a stream not
// begun yet is answered 503 with a Retry-After, one under way ends.
func (s *Server) stream(w http.ResponseWriter, r *http.Request) {
	name, cursor, after, ok := pollArgs(w, r)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), firstLoadWait)
	tb, code, msg := s.ready(ctx, name)
	cancel()
	if tb == nil {
		http.Error(w, msg, code)
		return
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Cache-Control", "no-store")
	// Each second the stream looks again even when the hub is silent, so
	// that a relay whose reads stopped says so (Lagging) within one.
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	quiet := 0
	var seq uint64
	var state hub.SourceState
	first := true
	for {
		s.mu.Lock()
		wait := s.changed
		var a *answer
		if tb := s.tables[name]; tb != nil && (first || tb.seq != seq || !s.sameState(tb.state, state)) {
			a = s.answer(tb, cursor, after)
			cursor, seq, state = a.next, tb.seq, tb.state
		}
		s.mu.Unlock()
		if a != nil {
			if !s.frame(w, r, a, first) {
				return
			}
			first, quiet = false, 0
		}
		select {
		case <-r.Context().Done():
			return
		case <-wait:
		case <-tick.C:
			if quiet++; quiet >= int(keepAlive/time.Second) {
				if !s.send(w, keepAliveFrame, nil) {
					return
				}
				quiet = 0
			}
		}
	}
}

// frame sends a as a stream's frame, its length first, a full one in a
// place among Config.MaxFull; false when the stream ends, answered 503
// when none came free for its first frame.
func (s *Server) frame(w http.ResponseWriter, r *http.Request, a *answer, first bool) bool {
	if a.full {
		leave := s.admit(r.Context())
		if leave == nil {
			if first {
				s.busy(w)
			}
			return false
		}
		defer leave()
	}
	return s.send(w, binary.AppendUvarint(nil, uint64(a.size)), a)
}

// keepAliveFrame is an empty answer: a stream's sign of life.
var keepAliveFrame = []byte{0}

// sameState says whether a client already knows the source's standing:
// its status, error and whether the relay's reads lag. A read that moved
// only the time of the last good read is no news.
func (s *Server) sameState(a, b hub.SourceState) bool {
	now := s.now()
	return a.Status == b.Status && a.Err == b.Err && a.Health.Code == b.Health.Code && a.Lagging(now) == b.Lagging(now)
}

// SourceView is one source as GET /v1/sources shows it, for a person
// checking the relay (curl with the token).
type SourceView struct {
	Name     string    `json:"name"`
	Status   string    `json:"status"`
	Updated  time.Time `json:"updated"`
	Error    string    `json:"error,omitempty"`
	Lagging  bool      `json:"lagging,omitempty"` // its reads stopped answering (hub.SourceState.Lagging)
	Tasks    int       `json:"tasks"`
	Archived int       `json:"archived"`
	Seq      uint64    `json:"seq"`
}

func (s *Server) sources(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	now := s.now()
	out := make([]SourceView, 0, len(s.tables))
	for name, tb := range s.tables {
		out = append(out, SourceView{Name: name, Status: tb.state.Status.String(), Updated: tb.state.Updated,
			Error: tb.state.Err, Lagging: tb.state.Lagging(now), Tasks: len(tb.tasks), Archived: tb.state.Archived, Seq: tb.seq})
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b SourceView) int { return strings.Compare(a.Name, b.Name) })
	writeJSON(w, out)
}
