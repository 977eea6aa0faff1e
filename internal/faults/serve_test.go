//go:build faults

package faults

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestNodeServeUnderIdleConnections: `claimdeck node serve` runs with an
// open-file limit of 128; 125 idle connections from one client, held
// open by reconnecting, and unauthenticated requests from another, must
// leave authenticated pings answered.
func TestNodeServeUnderIdleConnections(t *testing.T) {
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Skip("prlimit is not installed")
	}
	conf := writeConfig(t, "  - name: q\n    kind: sqlite\n    path: DIR/queue.db\n")
	const token = "3f9c1a7e5b2d4f60a8c3e1b7d9f20465c8a1e3b5d7f90213" // strong enough to serve behind (mesh.Token.CheckStrength)
	srv := exec.Command("prlimit", "--nofile=128", claimdeck, "--config", conf, "node", "serve", "--name", "ALPHA", "--token-env", "FAULTS_NODE_TOKEN", "--listen", "127.0.0.1:0")
	srv.Env = append(os.Environ(), "FAULTS_NODE_TOKEN="+token)
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	var hello struct{ Listen string }
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err != nil || json.Unmarshal(line, &hello) != nil || hello.Listen == "" {
		t.Fatalf("node serve did not start: %v %s", err, line)
	}
	addr := hello.Listen
	// The idle client reconnects whenever the server drops one of its
	// connections, so it holds 125 for as long as the test runs.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
	for range 125 {
		go func() {
			for ctx.Err() == nil {
				c, err := d.DialContext(ctx, "tcp", addr)
				if err != nil {
					continue
				}
				stop := context.AfterFunc(ctx, func() { c.Close() })
				_, _ = io.Copy(io.Discard, c)
				stop()
				c.Close()
			}
		}()
	}
	guesser := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.3")}}
	for range 40 {
		if c, err := guesser.Dial("tcp", addr); err == nil {
			_, _ = io.WriteString(c, "POST /hooks/health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer guess\r\nContent-Length: 0\r\n\r\n")
			t.Cleanup(func() { c.Close() })
		}
	}
	// A ping must answer within the health poller's own timeout (10 s by
	// default); later, the dashboard counts it as failed.
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for i := range 10 {
		req, _ := http.NewRequest("POST", "http://"+addr+"/hooks/health", strings.NewReader(""))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("authenticated ping %d got no answer: %v", i, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("authenticated ping %d: HTTP %d", i, resp.StatusCode)
		}
	}
}
