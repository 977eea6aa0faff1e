// Package webserver is the one way claimdeck serves HTTP: `node serve`, the
// Notion emulator, and any endpoint added later (metrics, MCP). It bounds
// what a client can hold — time, connections, body size — so that idle or
// unauthenticated clients cannot starve the ones with a token.
//
// It knows nothing of what it serves.
package webserver

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"
)

// Limits bound what clients can take from a server. Zero fields take the
// defaults of Defaults.
type Limits struct {
	ReadHeader time.Duration // to read a request's headers
	Read       time.Duration // to read a whole request
	Write      time.Duration // to write a response
	Idle       time.Duration // a kept-alive connection waiting for its next request
	// PerClient is how many connections one client address may hold open.
	PerClient int
	// MaxConns caps the server's open connections; the default stays under
	// the process's open-file limit.
	MaxConns int
	// MaxBody is the largest request body read, in bytes.
	MaxBody int64
	// MaxHeader is the largest request header block, in bytes.
	MaxHeader int
}

// Defaults are limits for a small control endpoint answered in
// milliseconds.
func Defaults() Limits {
	return Limits{
		ReadHeader: 5 * time.Second,
		Read:       10 * time.Second,
		Write:      30 * time.Second,
		Idle:       60 * time.Second,
		PerClient:  16,
		MaxConns:   defaultMaxConns(),
		MaxBody:    1 << 20,
		MaxHeader:  16 << 10,
	}
}

func (l Limits) withDefaults() Limits {
	d := Defaults()
	l.ReadHeader, l.Read, l.Write, l.Idle = orDefault(l.ReadHeader, d.ReadHeader), orDefault(l.Read, d.Read), orDefault(l.Write, d.Write), orDefault(l.Idle, d.Idle)
	l.PerClient, l.MaxConns = orDefault(l.PerClient, d.PerClient), orDefault(l.MaxConns, d.MaxConns)
	l.MaxBody, l.MaxHeader = orDefault(l.MaxBody, d.MaxBody), orDefault(l.MaxHeader, d.MaxHeader)
	return l
}

// orDefault is v, or def when v is zero or negative: a limit left unset.
func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Server serves one handler under Limits.
type Server struct {
	srv    *http.Server
	limits Limits
	conns  *tracker
}

// New makes a server for h. Every response with status 401 closes its
// connection, and every request body is cut at Limits.MaxBody. GET or HEAD
// /healthz answers 200 "ok" before h sees the request, with no credentials:
// it says only that the process is serving, for a supervisor's probe.
func New(h http.Handler, l Limits) *Server {
	l = l.withDefaults()
	t := &tracker{limits: l, byConn: map[net.Conn]*entry{}, perHost: map[string]int{}}
	s := &Server{limits: l, conns: t}
	s.srv = &http.Server{
		Handler:           bounded(healthz(h), l.MaxBody),
		ReadHeaderTimeout: l.ReadHeader,
		ReadTimeout:       l.Read,
		WriteTimeout:      l.Write,
		IdleTimeout:       l.Idle,
		MaxHeaderBytes:    l.MaxHeader,
		ConnState:         t.state,
	}
	return s
}

// Serve answers on ln until ctx ends, then shuts down, giving requests in
// flight up to Limits.Write to finish. It returns nil after ctx ends.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	stop := context.AfterFunc(ctx, func() {
		shut, cancel := context.WithTimeout(context.Background(), s.limits.Write)
		defer cancel()
		if s.srv.Shutdown(shut) != nil {
			_ = s.srv.Close()
		}
	})
	defer stop()
	err := s.srv.Serve(&listener{Listener: ln, t: s.conns})
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Open is how many connections the server holds now.
func (s *Server) Open() int {
	s.conns.mu.Lock()
	defer s.conns.mu.Unlock()
	return len(s.conns.byConn)
}

// healthz answers the liveness probe and hands every other request to h.
func healthz(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			_, _ = w.Write([]byte("ok\n"))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// bounded cuts request bodies and closes the connection after a 401, so an
// unauthenticated client cannot keep a connection for its next guess.
func bounded(h http.Handler, maxBody int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		h.ServeHTTP(&closeOn401{ResponseWriter: w}, r)
	})
}

type closeOn401 struct{ http.ResponseWriter }

func (c *closeOn401) WriteHeader(code int) {
	if code == http.StatusUnauthorized {
		c.Header().Set("Connection", "close")
	}
	c.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (c *closeOn401) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// tracker knows every open connection, its client and whether it is busy.
// When a client is at its cap, or the server at its own, the oldest
// connection not serving a request (never used, or idle between requests)
// is closed to make room; if every one is busy, the newcomer is refused.
type tracker struct {
	limits  Limits
	mu      sync.Mutex
	byConn  map[net.Conn]*entry
	perHost map[string]int
	seq     uint64
}

type entry struct {
	host string
	busy bool
	seq  uint64 // order of arrival or of the last request's end
}

func (t *tracker) admit(c net.Conn) bool {
	host := hostOf(c.RemoteAddr())
	t.mu.Lock()
	var evict []net.Conn
	ok := true
	if t.perHost[host] >= t.limits.PerClient {
		if v := t.oldestIdle(host); v != nil {
			evict = append(evict, v)
			t.forget(v)
		} else {
			ok = false
		}
	}
	if ok && len(t.byConn) >= t.limits.MaxConns {
		if v := t.oldestIdle(""); v != nil {
			evict = append(evict, v)
			t.forget(v)
		} else {
			ok = false
		}
	}
	if ok {
		t.seq++
		t.byConn[c] = &entry{host: host, seq: t.seq}
		t.perHost[host]++
	}
	t.mu.Unlock()
	for _, v := range evict {
		_ = v.Close()
	}
	return ok
}

// oldestIdle is the least recently used connection not serving a request,
// of host (any host when empty). Called with mu held.
func (t *tracker) oldestIdle(host string) net.Conn {
	var best net.Conn
	var bestSeq uint64
	for c, e := range t.byConn {
		if e.busy || (host != "" && e.host != host) {
			continue
		}
		if best == nil || e.seq < bestSeq {
			best, bestSeq = c, e.seq
		}
	}
	return best
}

// forget drops c from the books. Called with mu held.
func (t *tracker) forget(c net.Conn) {
	e, ok := t.byConn[c]
	if !ok {
		return
	}
	delete(t.byConn, c)
	if t.perHost[e.host]--; t.perHost[e.host] <= 0 {
		delete(t.perHost, e.host)
	}
}

func (t *tracker) state(c net.Conn, s http.ConnState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.byConn[c]
	switch {
	case s == http.StateClosed || s == http.StateHijacked:
		t.forget(c)
	case !ok:
	case s == http.StateActive:
		e.busy = true
	case s == http.StateIdle:
		t.seq++
		e.busy, e.seq = false, t.seq
	}
}

func hostOf(a net.Addr) string {
	if a == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// listener admits each accepted connection through the tracker.
type listener struct {
	net.Listener
	t *tracker
}

func (l *listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.t.admit(c) {
			return c, nil
		}
		_ = c.Close()
	}
}
