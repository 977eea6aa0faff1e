package relay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/mesh"
)

// maxPending is how many pushed frames wait for a poll before they are
// folded into one.
const maxPending = 64

// keptFrame is the most room a stream keeps between frames for the
// next: a change's frame fits, a full answer's room is let go.
const keptFrame = 256 << 10

// maxAnswer bounds the answer a client reads: a million tasks are well
// under it, and a relay gone wrong cannot fill a dashboard's memory.
const maxAnswer = 2 << 30

// Source reads a source through a relay and does everything else — every
// write, Get, Next, Archive — on the source itself. It is the source a
// dashboard's hub polls when the configuration names a relay for it.
type Source struct {
	sources.Source
	base    *url.URL
	token   mesh.Token
	tokenAt string // where the token is, as messages name it
	hc      *http.Client
	// retry is how long Watch waits before it reconnects (doubling to a
	// minute); tests shorten it.
	retry   time.Duration
	restart chan struct{} // a fetched poll moved the cursor: stream from it
	// silence is how long a stream may stay silent before it is given up
	// (three keep-alives); tests shorten it.
	silence time.Duration
	// via is how the source line says the queue is read, when not
	// "through the relay at HOST" (Via).
	via string

	mu sync.Mutex
	// held is the cursor the hub holds (the last Poll's); pending are the
	// stream's frames since it, in order, and tail the cursor after them.
	held, tail sources.Cursor
	pending    []*Answer
	// last is the latest answer's standing (without its tasks), which an
	// empty Poll reports.
	last *Answer
	// live: a stream is delivering from tail. gen counts the fetched
	// polls that moved held; a stream of an older gen is dropped.
	live   bool
	gen    uint64
	hangUp context.CancelFunc // ends the current stream
	after  time.Time          // the hub's history horizon, for a stream's full frames
}

// TokenAt names where a token is, for a message: $NAME for a variable's
// name, "file PATH" as it is.
func TokenAt(at string) string {
	if strings.HasPrefix(at, "file ") {
		return at
	}
	return "$" + at
}

// Wrap reads src through the relay at addr (http://host:port), presenting
// token, which the environment variable tokenEnv holds — or, given as
// "file PATH", that file (messages name where). src's name is the name
// asked of the relay: the relay must read a source of that name.
func Wrap(src sources.Source, addr string, token mesh.Token, tokenEnv string) (*Source, error) {
	u, err := checkAddr(addr)
	if err != nil {
		return nil, err
	}
	if tokenEnv == "" {
		tokenEnv = DefaultTokenEnv
	}
	at := TokenAt(tokenEnv)
	if !token.Set() {
		return nil, fmt.Errorf("relay %s: no token: set %s to the relay's token", u.Host, at)
	}
	return &Source{Source: src, base: u, token: token, tokenAt: at, hc: &http.Client{}, retry: time.Second,
		restart: make(chan struct{}, 1), silence: 3 * keepAlive}, nil
}

// CheckAddr is the one rule for a relay's address: http://HOST:PORT,
// without a path, a query or a password.
func CheckAddr(addr string) error {
	_, err := checkAddr(addr)
	return err
}

func checkAddr(addr string) (*url.URL, error) {
	u, err := url.Parse(addr)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return nil, fmt.Errorf("relay address %q: want http://HOST:PORT (the address `claimdeck relay --listen` serves)", redactURL(addr))
	}
	u.Path = ""
	return u, nil
}

// ClientDebounce is how long a dashboard's hub gathers a relay's pushed
// changes into one poll (hub.Config.Debounce is 100 ms): none. They come
// gathered by the relay already, and a poll of them is answered from
// memory, so each frame is polled as it comes, without a cooldown after
// it. In the fleet benchmark (50 dashboards on one CPU) a change reached
// all 50 in 68-134 ms median, 177-238 ms worst, against 127-181 / 228-418
// ms gathering for 25 ms (4 and 3 runs alternated), at less processor
// time: the cooldown's timer woke every dashboard once more per frame.
const ClientDebounce = 0

// Gather is how long the hub gathers this source's hints into a poll.
func (s *Source) Gather() time.Duration { return ClientDebounce }

// redactURL keeps a password written into an address out of messages.
func redactURL(addr string) string {
	if u, err := url.Parse(addr); err == nil && u.User != nil {
		return u.Redacted()
	}
	return addr
}

// Via makes the source line say how the queue is read in the person's
// words instead of naming the relay's address: an SSH session reads the
// server's own loopback relay, whose address means nothing to it.
func (s *Source) Via(words string) *Source {
	s.via = words
	return s
}

// TrailSince reads the shared trail from the source itself, as every
// write goes there: the relay carries the queue, not the trail. The
// overrides' readers ask at most every few seconds, through the trail's
// own index (sources.TrailReader), so a relayed dashboard counts the
// team's overrides as one reading the source does.
func (s *Source) TrailSince(ctx context.Context, since time.Time, limit int) ([]sources.TrailEntry, error) {
	tr, ok := s.Source.(sources.TrailReader)
	if !ok {
		return nil, fmt.Errorf("%w on this kind of source", sources.ErrNoTrailRead)
	}
	return tr.TrailSince(ctx, since, limit)
}

var _ sources.TrailReader = (*Source)(nil)

// Relay is the relay's address, for the dashboard's source line and doctor.
func (s *Source) Relay() string { return s.base.String() }

// Caps are the source's, with Watch: the relay pushes a hint per change.
func (s *Source) Caps() sources.Caps {
	c := s.Source.Caps()
	c.Watch = true
	c.Lacks = without(c.Lacks, "watch")
	via := s.via
	if via == "" {
		via = "through the relay at " + s.base.Host
	}
	c.Reads = strings.TrimPrefix(c.Reads+"; ", "; ") + via
	return c
}

// without drops the lacks that name what the relay now gives.
func without(lacks []string, word string) []string {
	var out []string
	for _, l := range lacks {
		if !strings.Contains(strings.ToLower(l), word) {
			out = append(out, l)
		}
	}
	return out
}

// busyTries is how many times a request the relay answers 503 with a
// Retry-After (it is sending as many full answers as it may) is made
// before its answer is the error; busyWait bounds the wait it asks.
const (
	busyTries = 3
	busyWait  = 10 * time.Second
)

func (s *Source) get(ctx context.Context, path string, q url.Values) (*http.Response, error) {
	u := *s.base
	u.Path, u.RawQuery = path, q.Encode()
	var resp *http.Response
	for try := 1; ; try++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+s.token.Reveal())
		resp, err = s.hc.Do(req)
		if err != nil {
			return nil, model.Errorf(model.CodeAPIError, "poll", "", "relay %s unreachable: %s (is `claimdeck relay --listen` running there?)", s.base.Host, errText(err))
		}
		wait, busy := retryAfter(resp)
		if !busy || try == busyTries {
			break
		}
		resp.Body.Close()
		select {
		case <-ctx.Done():
			return nil, model.Errorf(model.CodeAPIError, "poll", "", "relay %s is busy sending full answers, and the poll ended waiting for its turn", s.base.Host)
		case <-time.After(wait):
		}
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		msg := strings.TrimSpace(string(body))
		code := model.CodeAPIError
		switch resp.StatusCode {
		case http.StatusUnauthorized:
			code, msg = model.CodeMisconfigured, "the relay refused the token in "+s.tokenAt+": set it to the token the relay was started with"
		case http.StatusNotFound, http.StatusBadRequest:
			code = model.CodeMisconfigured
		}
		return nil, model.Errorf(code, "poll", "", "relay %s: %s (HTTP %d)", s.base.Host, model.Redact(msg), resp.StatusCode)
	}
	return resp, nil
}

// retryAfter is how long a 503 answer asks to wait before asking again;
// false for any other answer, or a wait past busyWait.
func retryAfter(resp *http.Response) (time.Duration, bool) {
	if resp.StatusCode != http.StatusServiceUnavailable {
		return 0, false
	}
	secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	if err != nil || secs < 0 || secs > int(busyWait/time.Second) {
		return 0, false
	}
	return time.Duration(secs) * time.Second, true
}

// Sources is the relay's own account of what it reads (GET /v1/sources),
// for doctor: reachable, the token accepted, each source's read.
func (s *Source) Sources(ctx context.Context) ([]SourceView, error) {
	resp, err := s.get(ctx, "/v1/sources", nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var views []SourceView
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&views); err != nil {
		return nil, model.Errorf(model.CodeAPIError, "poll", "", "relay %s answered, but not as a claimdeck relay: %v", s.base.Host, err)
	}
	return views, nil
}

// errText is a transport error without the URL net/http puts in front.
func errText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// Poll answers the hub from what the relay's stream pushed since the
// cursor; without a stream that delivers from that cursor it asks the
// relay over HTTP. It fails, as a poll of the source would, when the
// relay cannot read the source or its reads lag; the error says which,
// and when the relay last read it.
func (s *Source) Poll(ctx context.Context, since sources.Cursor, opt ...sources.PollOption) (sources.Delta, error) {
	var after time.Time
	for _, o := range opt {
		if !o.FinishedAfter.IsZero() {
			after = o.FinishedAfter
		}
	}
	s.mu.Lock()
	s.after = after
	if since == s.held && since != "" && (s.live || len(s.pending) > 0) {
		a := merge(s.pending, since, s.last)
		d, err := s.delta(a)
		if err == nil {
			s.pending, s.held = nil, d.Cursor
		} else {
			// The hub keeps its cursor: stream again from it.
			s.restartFrom(since)
		}
		s.mu.Unlock()
		return d, err
	}
	s.mu.Unlock()
	a, err := s.fetch(ctx, since, after)
	if err != nil {
		return sources.Delta{}, err
	}
	d, err := s.delta(a)
	if err == nil {
		// The hub now holds this cursor: a stream must deliver from it.
		s.mu.Lock()
		s.held, s.last = d.Cursor, standing(a)
		s.restartFrom(d.Cursor)
		s.mu.Unlock()
	}
	return d, err
}

// restartFrom drops the frames held and has the stream start again from
// cursor. Holds s.mu.
func (s *Source) restartFrom(cursor sources.Cursor) {
	s.tail, s.pending = cursor, nil
	s.gen++
	if s.hangUp != nil {
		s.hangUp()
	}
	poke(s.restart)
}

// fetch asks the relay over HTTP.
func (s *Source) fetch(ctx context.Context, since sources.Cursor, after time.Time) (*Answer, error) {
	resp, err := s.get(ctx, "/v1/poll", s.query(since, after))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return nil, model.Errorf(model.CodeAPIError, "poll", "", "relay %s: the answer broke off: %s", s.base.Host, errText(err))
	}
	a, err := decodeAnswer(body, nil)
	if err != nil {
		return nil, model.Errorf(model.CodeAPIError, "poll", "", "relay %s: %v", s.base.Host, err)
	}
	return a, nil
}

func (s *Source) query(since sources.Cursor, after time.Time) url.Values {
	q := url.Values{"source": {s.Name()}, "cursor": {string(since)}}
	if !after.IsZero() {
		q.Set("after", strconv.FormatInt(after.UnixMicro(), 10))
	}
	return q
}

// delta is an answer as the hub takes it, or the error its health is.
func (s *Source) delta(a *Answer) (sources.Delta, error) {
	if err := a.health(s.base.Host); err != nil {
		return sources.Delta{}, err
	}
	for _, t := range a.Tasks {
		if t.Source != s.Name() {
			return sources.Delta{}, model.Errorf(model.CodeAPIError, "poll", t.ID, "relay %s answered a task of source %q for %q", s.base.Host, t.Source, s.Name())
		}
	}
	return sources.Delta{Full: a.Full, Tasks: a.Tasks, Removed: a.Removed, Cursor: sources.Cursor(a.Cursor), Archived: a.Archived}, nil
}

// standing is an answer's view of the source without its tasks: what an
// empty poll reports, kept without holding a full answer's task list.
func standing(a *Answer) *Answer {
	out := *a
	out.Tasks, out.Removed = nil, nil
	return &out
}

// merge folds frames, each answering the one before, into one answer
// since the cursor since: a task's last record wins, a removal cancels
// the task's earlier records and a return cancels its removal, and a full
// frame starts over. The relay's standing is the last frame's (last,
// when there is no frame).
func merge(frames []*Answer, since sources.Cursor, last *Answer) *Answer {
	if len(frames) == 0 {
		out := *last
		out.Full, out.Tasks, out.Removed, out.Cursor = false, nil, nil, string(since)
		return &out
	}
	if len(frames) == 1 {
		return frames[0]
	}
	out := *frames[len(frames)-1]
	out.Full, out.Archived = false, 0
	tasks := map[string]*model.Task{}
	removed := map[string]bool{}
	for _, f := range frames {
		if f.Full {
			clear(tasks)
			clear(removed)
			out.Full, out.Archived = true, f.Archived
		}
		for _, id := range f.Removed {
			delete(tasks, id)
			if !out.Full {
				removed[id] = true
			}
		}
		for _, t := range f.Tasks {
			tasks[t.ID] = t
			delete(removed, t.ID)
		}
	}
	out.Tasks = slices.Collect(maps.Values(tasks))
	out.Removed = slices.Collect(maps.Keys(removed))
	return &out
}

// health is the relay's view of the source as the error a poll of it
// would give: nil while the relay reads it well.
func (a *Answer) health(host string) error {
	switch {
	case !a.Loaded && hub.Status(a.Status) != hub.StatusDegraded:
		return model.Errorf(model.CodeAPIError, "poll", "", "relay %s has not read the source yet", host)
	case hub.Status(a.Status) == hub.StatusDegraded:
		code := model.Code(a.Code)
		if code == "" {
			code = model.CodeAPIError
		}
		return model.Errorf(code, "poll", "", "relay %s cannot read the source (%s)%s", host, a.Err, lastRead(a.Updated))
	case a.Lagging:
		return model.Errorf(model.CodeAPIError, "poll", "", "relay %s's reads of the source lag: no answer from it for %s%s", host, (3 * a.Every).String(), lastRead(a.Updated))
	}
	return nil
}

func lastRead(at time.Time) string {
	if at.IsZero() {
		return "; it has never read it"
	}
	return "; its last good read was at " + at.UTC().Format(time.RFC3339)
}

// Watch keeps a stream from the relay open while ctx lasts: its frames
// wait for the hub's next Poll, and each is a hint. It reconnects after
// a failure, waiting longer each time (to a minute); the hub's timed
// polls ask over HTTP meanwhile. The channel closes when ctx ends.
func (s *Source) Watch(ctx context.Context) (<-chan struct{}, error) {
	hints := make(chan struct{}, 1)
	go func() {
		defer close(hints)
		wait := s.retry
		for ctx.Err() == nil {
			s.mu.Lock()
			from, gen, after := s.tail, s.gen, s.after
			s.mu.Unlock()
			if from == "" {
				// Nothing held yet: the hub's first poll fetches the
				// whole table, and the stream starts from there.
				select {
				case <-ctx.Done():
					return
				case <-s.restart:
				}
				continue
			}
			if s.stream(ctx, from, gen, after, hints) {
				wait = s.retry // it worked for a while: start over
				continue
			}
			select {
			case <-ctx.Done():
				return
			case <-s.restart:
			case <-time.After(wait):
			}
			wait = min(2*wait, time.Minute)
		}
	}()
	return hints, nil
}

// stream reads one stream from cursor from until it fails, stays silent
// past three keep-alives, or a fetched poll moves the hub's cursor (gen);
// true when it delivered anything.
func (s *Source) stream(ctx context.Context, from sources.Cursor, gen uint64, after time.Time, hints chan<- struct{}) bool {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	if s.gen != gen {
		s.mu.Unlock()
		return true // moved meanwhile: start again from the new cursor
	}
	s.hangUp = cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.gen == gen {
			s.live, s.hangUp = false, nil
		}
		s.mu.Unlock()
	}()
	resp, err := s.get(ctx, "/v1/stream", s.query(from, after))
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	silence := time.AfterFunc(s.silence, cancel)
	defer silence.Stop()
	r := bufio.NewReader(resp.Body)
	got := false
	var buf bytes.Buffer // each frame's bytes, kept for the next
	w := words{}         // the stream's repeated strings, one copy each
	for {
		n, err := binary.ReadUvarint(r)
		if err != nil || n > maxAnswer {
			return got
		}
		if buf.Cap() > keptFrame {
			buf = bytes.Buffer{} // a full answer's room is not kept
		}
		buf.Reset()
		// Read as it arrives, not allocated at the length announced: a
		// wrong address cannot make a dashboard allocate more than it sent.
		if m, err := buf.ReadFrom(io.LimitReader(r, int64(n))); err != nil || uint64(m) != n {
			return got
		}
		silence.Reset(s.silence)
		got = true
		if n == 0 {
			continue // keep-alive
		}
		a, err := decodeAnswer(buf.Bytes(), w)
		if err != nil {
			return got
		}
		s.mu.Lock()
		if s.gen != gen {
			s.mu.Unlock()
			return got
		}
		s.pending = append(s.pending, a)
		if len(s.pending) >= maxPending {
			// Nobody polls (a paused dashboard): fold, keeping one record
			// a task, so memory stays the size of the queue.
			s.pending = []*Answer{merge(s.pending, "", nil)}
		}
		s.tail, s.last, s.live = sources.Cursor(a.Cursor), standing(a), true
		s.mu.Unlock()
		poke(hints)
	}
}

func poke(c chan<- struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
