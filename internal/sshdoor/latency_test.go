package sshdoor

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// BenchmarkKeystrokeToScreen is the time from a key sent over loopback
// SSH to the first byte of the frame that shows it: the probe model
// counts keys on screen and draws nothing else, so any output after a key
// is that key's frame, drawn at the renderer's next tick. others is how many other sessions are open,
// idle, on the same door. p50 and p90 are over b.N keys; ns/op also holds
// pauses per key, so read only the percentiles.
func BenchmarkKeystrokeToScreen(b *testing.B) {
	for _, others := range []int{0, 19} {
		b.Run(fmt.Sprintf("others=%d", others), func(b *testing.B) {
			alice, aliceKey := newKey(b, "")
			td := startDoor(b, "alice oncall "+aliceKey+"\n", func(c *Config) { c.MaxSessions = others + 1 })
			c, err := td.dial(alice)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			for range others {
				t := openTerminal(b, c, 80, 24)
				waitFor(b, t.out.String, "person=alice")
			}
			s, err := c.NewSession()
			if err != nil {
				b.Fatal(err)
			}
			in, _ := s.StdinPipe()
			out, _ := s.StdoutPipe()
			if err := s.RequestPty("xterm-256color", 24, 80, gossh.TerminalModes{}); err != nil {
				b.Fatal(err)
			}
			if err := s.Shell(); err != nil {
				b.Fatal(err)
			}
			reads := make(chan time.Time, 1024)
			first := make(chan string, 1)
			go func() {
				buf := make([]byte, 64<<10)
				var seen strings.Builder
				for {
					n, err := out.Read(buf)
					if n > 0 {
						reads <- time.Now()
						if seen.Len() < 1<<16 {
							seen.Write(buf[:n])
							if strings.Contains(seen.String(), "keys=0") {
								select {
								case first <- seen.String():
								default:
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
			case <-time.After(15 * time.Second):
				b.Fatal("no first screen")
			}
			quiet(reads, 50*time.Millisecond)
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				// A person's key comes at any point of the renderer's frame
				// clock (60 a second); without this pause every key would
				// come at the same point, 3 ms after a frame.
				time.Sleep(rand.N(17 * time.Millisecond))
				sent := time.Now()
				if _, err := io.WriteString(in, "x"); err != nil {
					b.Fatal(err)
				}
				select {
				case at := <-reads:
					lat = append(lat, at.Sub(sent))
				case <-time.After(15 * time.Second):
					b.Fatalf("key %d never reached the screen", i)
				}
				quiet(reads, 3*time.Millisecond)
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-p50")
			b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds())/1000, "ms-p90")
		})
	}
}

// BenchmarkSSHRoundTrip is the floor under the keystroke: one request and
// its answer over the same loopback SSH connection, no program involved.
func BenchmarkSSHRoundTrip(b *testing.B) {
	alice, aliceKey := newKey(b, "")
	td := startDoor(b, "alice oncall "+aliceKey+"\n", nil)
	c, err := td.dial(alice)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ResetTimer()
	for range b.N {
		if _, _, err := c.SendRequest("keepalive@openssh.com", true, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// quiet drains reads until none has come for gap: the frame is over.
func quiet(reads <-chan time.Time, gap time.Duration) {
	for {
		select {
		case <-reads:
		case <-time.After(gap):
			return
		}
	}
}
