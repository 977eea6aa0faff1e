package e2e

import (
	"bufio"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// BenchmarkSSHKeystrokeRealDashboard is a key over loopback SSH until the
// first byte of the frame that shows it, with the real dashboard served by
// a `claimdeck ssh` process over a SQLite queue of 200 tasks: keys
// alternate between two views (1 and 7), so every key changes the
// screen. The dashboard also redraws once a second (the clock, the
// countdowns): such a frame landing inside a key's window is counted as
// that key's, which can only shorten a figure; p50 and p90 are over b.N
// keys, ns/op holds the pauses between keys: read only the percentiles.
// Floor: BenchmarkSSHRoundTrip in internal/sshdoor.
func BenchmarkSSHKeystrokeRealDashboard(b *testing.B) {
	bin := binary(b)
	dir := b.TempDir()
	env := append(os.Environ(), "HOME="+filepath.Join(dir, "home"), "XDG_DATA_HOME="+filepath.Join(dir, "data"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	signer, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		b.Fatal(err)
	}
	sshPub, err := gossh.NewPublicKey(pub)
	if err != nil {
		b.Fatal(err)
	}
	keys := filepath.Join(dir, "keys")
	if err := os.WriteFile(keys, []byte("alice oncall "+string(gossh.MarshalAuthorizedKey(sshPub))), 0o600); err != nil {
		b.Fatal(err)
	}
	config := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(config, []byte("actor: lead\nsources:\n  - name: local\n    kind: sqlite\n    path: "+filepath.Join(dir, "queue.db")+"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	for i := range 200 {
		cmd := exec.Command(bin, "--config", config, "--create", "create", "--title", fmt.Sprintf("task %d", i))
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("create: %v\n%s", err, out)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	door := exec.Command(bin, "--config", config, "ssh", "--listen", addr, "--keys", keys)
	door.Env = env
	stdout, _ := door.StdoutPipe()
	if err := door.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { door.Process.Signal(os.Interrupt); door.Wait() })
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || !strings.Contains(line, `"ok":true`) {
		b.Fatalf("claimdeck ssh did not start: %q %v", line, err)
	}
	c, err := gossh.Dial("tcp", addr, &gossh.ClientConfig{User: "alice", Auth: []gossh.AuthMethod{gossh.PublicKeys(signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession()
	if err != nil {
		b.Fatal(err)
	}
	in, _ := s.StdinPipe()
	out, _ := s.StdoutPipe()
	if err := s.RequestPty("xterm-256color", 40, 120, gossh.TerminalModes{}); err != nil {
		b.Fatal(err)
	}
	if err := s.Shell(); err != nil {
		b.Fatal(err)
	}
	reads := make(chan time.Time, 4096)
	first := make(chan struct{})
	go func() {
		buf := make([]byte, 64<<10)
		var seen strings.Builder
		for {
			n, err := out.Read(buf)
			if n > 0 {
				reads <- time.Now()
				if seen.Len() < 1<<20 {
					seen.Write(buf[:n])
					if strings.Contains(seen.String(), "task 0") && strings.Contains(seen.String(), "shown") {
						select {
						case <-first:
						default:
							close(first)
						}
					}
				}
			}
			if err != nil {
				close(reads)
				return
			}
		}
	}()
	select {
	case <-first:
	case <-time.After(30 * time.Second):
		b.Fatal("the Queue never reached the session")
	}
	settle := func(gap time.Duration) {
		for {
			select {
			case <-reads:
			case <-time.After(gap):
				return
			}
		}
	}
	settle(200 * time.Millisecond)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		time.Sleep(mrand.N(17 * time.Millisecond)) // a key at any point of the frame clock
		key := "7"
		if i%2 == 1 {
			key = "1"
		}
		sent := time.Now()
		if _, err := io.WriteString(in, key); err != nil {
			b.Fatal(err)
		}
		select {
		case at := <-reads:
			lat = append(lat, at.Sub(sent))
		case <-time.After(15 * time.Second):
			b.Fatalf("key %d never reached the screen", i)
		}
		settle(30 * time.Millisecond)
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-p50")
	b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds())/1000, "ms-p90")
}
