package webserver

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

const secret = "Bearer node-token"

func start(t *testing.T, l Limits) (string, *Server) {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != secret {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
			return
		}
		_, _ = io.WriteString(w, "pong")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := New(h, l)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String(), s
}

// dialFrom opens a connection from another loopback address, a client of
// its own.
func dialFrom(t *testing.T, from, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func ping(t *testing.T, addr string) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	req, _ := http.NewRequest("POST", "http://"+addr+"/hooks/health", nil)
	req.Header.Set("Authorization", secret)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("an authenticated ping got no answer: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(body) != "pong" {
		t.Fatalf("authenticated ping: HTTP %d %q", resp.StatusCode, body)
	}
}

// A client holding 125 idle connections, and another one's 125
// connections that never send a byte, leave authenticated pings answered:
// idle connections beyond a client's cap or the server's give way.
func TestIdleConnectionsCannotStarveAuthenticatedPings(t *testing.T) {
	addr, s := start(t, Limits{PerClient: 8, MaxConns: 32})
	for range 125 {
		dialFrom(t, "127.0.0.2", addr)
	}
	for range 125 {
		dialFrom(t, "127.0.0.1", addr)
	}
	for range 5 {
		ping(t, addr)
	}
	if n := s.Open(); n > 32 {
		t.Errorf("the server holds %d connections, over its cap of 32", n)
	}
}

// After a 401 the server closes the connection: a guesser must reconnect
// for every try and cannot sit on the connection.
func TestConnectionClosedAfter401(t *testing.T) {
	addr, _ := start(t, Limits{})
	c := dialFrom(t, "127.0.0.3", addr)
	if _, err := io.WriteString(c, "POST /hooks/health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong\r\nContent-Length: 0\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	all, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("the connection stayed open after a 401: %v", err)
	}
	if !strings.HasPrefix(string(all), "HTTP/1.1 401") {
		t.Fatalf("answer: %q", all)
	}
}

// A body over the limit is cut, not read into memory.
func TestBodiesAreBounded(t *testing.T) {
	addr, _ := start(t, Limits{MaxBody: 1024})
	req, _ := http.NewRequest("POST", "http://"+addr+"/", strings.NewReader(strings.Repeat("x", 4096)))
	req.Header.Set("Authorization", secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("a 4 KiB body against a 1 KiB limit: HTTP %d", resp.StatusCode)
	}
}

// A connection that sends half a request header is dropped after the
// header timeout; it cannot hold its slot forever.
func TestSlowHeadersAreDropped(t *testing.T) {
	addr, _ := start(t, Limits{ReadHeader: 200 * time.Millisecond})
	c := dialFrom(t, "127.0.0.4", addr)
	if _, err := io.WriteString(c, "POST /hooks/health HTTP/1.1\r\nHost: x\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.ReadAll(c); err != nil {
		t.Fatalf("a half-sent header kept its connection: %v", err)
	}
}

// A supervisor's probe gets 200 without the handler's credentials; a POST
// to the same path and every other path still go through the handler.
func TestHealthzAnswersWithoutCredentials(t *testing.T) {
	addr, _ := start(t, Limits{})
	for _, c := range []struct {
		method, path string
		want         int
	}{
		{http.MethodGet, "/healthz", http.StatusOK},
		{http.MethodHead, "/healthz", http.StatusOK},
		{http.MethodPost, "/healthz", http.StatusUnauthorized},
		{http.MethodGet, "/healthz/x", http.StatusUnauthorized},
		{http.MethodGet, "/", http.StatusUnauthorized},
	} {
		req, _ := http.NewRequest(c.method, "http://"+addr+c.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, resp.StatusCode, c.want)
		}
		if c.want == http.StatusOK && c.method == http.MethodGet && string(body) != "ok\n" {
			t.Errorf("GET /healthz: body %q", body)
		}
	}
}
