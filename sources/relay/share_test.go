package relay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/webserver"
)

// shared is a relay server holding a queue, served on 127.0.0.1 as
// `claimdeck relay` serves it, with small socket buffers: a client that
// stops reading blocks the relay's writes after a few kilobytes, not the
// megabytes the kernel would otherwise take for it.
type shared struct {
	srv   *Server
	addr  string
	tasks []*model.Task
	busy  atomic.Int64 // 503 answers
}

// smallBuffers shrinks every accepted connection's send buffer.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(16 << 10)
	}
	return c, err
}

// counting503 counts the 503 answers its handler gives.
type counting503 struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w *counting503) WriteHeader(code int) {
	if code == http.StatusServiceUnavailable {
		w.n.Add(1)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *counting503) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func serveShared(t *testing.T, cfg Config, n int) *shared {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cfg.Token = token
	sh := &shared{srv: New(cfg), tasks: bigQueue(n)}
	loaded(sh.srv, sh.tasks)
	h := sh.srv.Handler()
	web := webserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&counting503{ResponseWriter: w, n: &sh.busy}, r)
	}), webserver.Limits{PerClient: 256, Write: 2 * time.Minute})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = web.Serve(ctx, smallBuffers{ln})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	sh.addr = ln.Addr().String()
	return sh
}

// ask sends a GET of path on a connection of its own with a small
// receive window, and reads nothing.
func (sh *shared) ask(t *testing.T, path string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10) })
	}}
	c, err := d.Dial("tcp", sh.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: relay\r\nAuthorization: Bearer "+token.Reveal()+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	return c
}

// get is a whole GET of path, read to its end.
func (sh *shared) get(t *testing.T, path string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+sh.addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token.Reveal())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v after %d bytes", path, err, len(body))
	}
	return resp, body
}

// held is how many clients hold a place for a full answer.
func (sh *shared) held() int { return len(sh.srv.full) }

// await waits for cond, failing after a generous while.
func await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
	}
}

func (sh *shared) fullBuilt() int {
	sh.srv.mu.Lock()
	defer sh.srv.mu.Unlock()
	return sh.srv.tables["local"].fullBuilt
}

// correct checks a full answer on the wire against the queue the relay
// holds: every task, each exactly as encoded from the source's record.
func (sh *shared) correct(t *testing.T, body []byte) {
	t.Helper()
	a, err := decodeAnswer(body, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Full || len(a.Tasks) != len(sh.tasks) {
		t.Fatalf("a full answer: full=%v with %d tasks; want all %d", a.Full, len(a.Tasks), len(sh.tasks))
	}
	byID := map[string]*model.Task{}
	for _, task := range sh.tasks {
		byID[task.ID] = task
	}
	for _, got := range a.Tasks {
		want := byID[got.ID]
		if want == nil || !bytes.Equal(appendTask(nil, got), appendTask(nil, want)) {
			t.Fatalf("task %s of the answer is not the source's", got.ID)
		}
	}
}

// Clients that ask for a full answer and never read it share one,
// built once: they cost the relay no answer of their own, and a client
// that reads meanwhile gets the same bytes, whole and correct.
func TestClientsThatNeverReadShareOneFullAnswer(t *testing.T) {
	sh := serveShared(t, Config{Stall: time.Minute}, 3000)
	for range 8 {
		sh.ask(t, "/v1/poll?source=local")
	}
	await(t, "eight clients being sent their full answer", func() bool { return sh.held() == 8 })
	resp, body := sh.get(t, "/v1/poll?source=local")
	if resp.StatusCode != http.StatusOK || resp.ContentLength != int64(len(body)) {
		t.Fatalf("a reading client beside eight that do not: %s, %d bytes of %d", resp.Status, len(body), resp.ContentLength)
	}
	sh.correct(t, body)
	if n := sh.fullBuilt(); n != 1 {
		t.Fatalf("nine clients asking everything had %d full answers built; want 1, shared", n)
	}
}

// Every client asking everything gets the same bytes, whatever cursor it
// could not be answered from and whatever its horizon within one
// HorizonStep, by poll or as a stream's first frame; and they are the
// queue the relay holds.
func TestEveryClientGetsTheSameCorrectFullAnswer(t *testing.T) {
	sh := serveShared(t, Config{}, 500)
	horizon := time.Now().Add(-24 * time.Hour).Truncate(time.Minute)
	paths := []string{
		"/v1/poll?source=local",
		"/v1/poll?source=local&cursor=0123456789abcdef.12",
		"/v1/poll?source=local&cursor=nonsense",
	}
	for _, after := range []time.Time{horizon, horizon.Add(time.Second), horizon.Add(59 * time.Second)} {
		paths = append(paths, "/v1/poll?source=local&after="+strconv.FormatInt(after.UnixMicro(), 10))
	}
	bodies := make([][]byte, len(paths)+1)
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Go(func() {
			resp, body := sh.get(t, p)
			if resp.StatusCode != http.StatusOK {
				t.Errorf("GET %s: %s", p, resp.Status)
			}
			bodies[i] = body
		})
	}
	wg.Go(func() { bodies[len(paths)] = firstFrame(t, sh, "/v1/stream?source=local") })
	wg.Wait()
	if t.Failed() {
		return
	}
	// Those without a horizon (the first three and the stream), and those
	// with one in the same minute, each share one answer.
	for i, b := range bodies {
		first := 0
		if i >= 3 && i < len(paths) {
			first = 3
		}
		if !bytes.Equal(b, bodies[first]) {
			t.Fatalf("client %d got another full answer than client %d (%d bytes against %d)", i, first, len(b), len(bodies[first]))
		}
		sh.correct(t, b)
	}
	if n := sh.fullBuilt(); n != 2 {
		t.Fatalf("%d full answers built for two kinds of asking; want 2", n)
	}
}

// firstFrame is the first frame of a stream, without its length.
func firstFrame(t *testing.T, sh *shared, path string) []byte {
	t.Helper()
	c, err := net.Dial("tcp", sh.addr)
	if err != nil {
		t.Error(err)
		return nil
	}
	defer c.Close()
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: relay\r\nAuthorization: Bearer "+token.Reveal()+"\r\n\r\n"); err != nil {
		t.Error(err)
		return nil
	}
	r := bufio.NewReader(c)
	resp, err := http.ReadResponse(r, nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %v %v", path, resp, err)
		return nil
	}
	br := bufio.NewReader(resp.Body)
	n, err := binary.ReadUvarint(br)
	if err != nil {
		t.Errorf("the stream's first frame: %v", err)
		return nil
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(br, body); err != nil {
		t.Errorf("the stream's first frame: %v", err)
	}
	return body
}

// A client over MaxFull waits FullWait for a place and then gets 503
// with a Retry-After, by poll and by stream; a place freed while it
// waits is its; a poll of the changes since a cursor needs none.
func TestAClientOverTheCapWaitsThenGets503(t *testing.T) {
	sh := serveShared(t, Config{MaxFull: 2, FullWait: 300 * time.Millisecond, Stall: time.Minute}, 3000)
	holder := sh.ask(t, "/v1/poll?source=local")
	sh.ask(t, "/v1/poll?source=local")
	await(t, "two clients holding both places", func() bool { return sh.held() == 2 })
	for _, p := range []string{"/v1/poll?source=local", "/v1/stream?source=local"} {
		resp, body := sh.get(t, p)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" || !strings.Contains(string(body), "full answers") {
			t.Fatalf("GET %s over the cap: %s, Retry-After %q, %q; want 503 asking again in 1 s", p, resp.Status, resp.Header.Get("Retry-After"), body[:min(len(body), 120)])
		}
	}
	sh.srv.mu.Lock()
	cursor := sh.srv.epoch + "." + strconv.FormatUint(sh.srv.tables["local"].seq, 10)
	sh.srv.mu.Unlock()
	if resp, body := sh.get(t, "/v1/poll?source=local&cursor="+cursor); resp.StatusCode != http.StatusOK || len(body) > 1024 {
		t.Fatalf("a poll of the changes since a cursor beside two full answers: %s, %d bytes; want 200 and nothing new", resp.Status, len(body))
	}

	// A relay's client asks again when told to, and gets the place a
	// holder leaves meanwhile.
	client, err := Wrap(sourceNamed{name: "local"}, "http://"+sh.addr, token, "")
	if err != nil {
		t.Fatal(err)
	}
	busy := sh.busy.Load()
	polled := make(chan error, 1)
	go func() {
		d, err := client.Poll(context.Background(), "")
		if err == nil && (!d.Full || len(d.Tasks) != 3000) {
			err = errors.New("not the whole queue")
		}
		polled <- err
	}()
	await(t, "the client's poll answered 503", func() bool { return sh.busy.Load() > busy })
	holder.Close()
	if err := <-polled; err != nil {
		t.Fatalf("a poll told to ask again while a place came free: %v", err)
	}
}

// A client that stops reading is dropped once it has taken nothing for
// Stall, and its place goes to the next; one that reads slowly but
// steadily gets the whole answer, though it takes longer than Stall.
func TestAClientThatStopsReadingIsDropped(t *testing.T) {
	sh := serveShared(t, Config{MaxFull: 1, FullWait: 100 * time.Millisecond, Stall: time.Second}, 3000)
	c := sh.ask(t, "/v1/poll?source=local")
	r := bufio.NewReader(c)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, 64<<10)); err != nil {
		t.Fatal(err)
	}
	await(t, "the stopped reader dropped", func() bool { return sh.held() == 0 })
	rest, err := io.ReadAll(resp.Body)
	if err == nil || int64(len(rest)+64<<10) >= resp.ContentLength {
		t.Fatalf("the dropped client read %d more bytes of %d, then %v; want the answer cut short", len(rest), resp.ContentLength, err)
	}

	slow := sh.ask(t, "/v1/poll?source=local")
	start := time.Now()
	resp, err = http.ReadResponse(bufio.NewReader(slow), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	for {
		n, err := io.CopyN(&got, resp.Body, 64<<10)
		if err != nil || n == 0 {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("a slow reader was cut after %d bytes of %d: %v", got.Len(), resp.ContentLength, err)
			}
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if took := time.Since(start); took < time.Second {
		t.Logf("the slow reader took %s, under Stall: it proves nothing about a whole-answer deadline", took)
	}
	sh.correct(t, got.Bytes())
}

// Whatever a relay (or what answers in its place) says in Retry-After, a
// client waits no longer than busyWait, and only on a 503.
func FuzzRetryAfter(f *testing.F) {
	for _, v := range []string{"1", "2", "0", "-1", "10", "11", "99999999999999999999", "Wed, 21 Oct 2026 07:28:00 GMT", ""} {
		f.Add(v, true)
	}
	f.Fuzz(func(t *testing.T, v string, busy bool) {
		resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Retry-After": {v}}}
		if busy {
			resp.StatusCode = http.StatusServiceUnavailable
		}
		wait, ok := retryAfter(resp)
		if ok && (!busy || wait < 0 || wait > busyWait) {
			t.Fatalf("Retry-After %q on %d: wait %s", v, resp.StatusCode, wait)
		}
	})
}
