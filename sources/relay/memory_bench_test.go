package relay

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/webserver"
)

// bigQueue is n tasks of about 1.5 KB each on the wire (a description,
// a claim, a short history), as issue 47 measured them: 30,000 make a
// full answer of about 47 MB. The tasks share their strings, so the
// benchmark's own copy of them is small; the relay encodes each apart.
func bigQueue(n int) []*model.Task {
	desc := strings.Repeat("Rotate the certificates of the service and check every region answers. ", 15)
	now := time.Now()
	tasks := make([]*model.Task, n)
	for i := range tasks {
		id := "TASK-" + strconv.Itoa(i)
		t := &model.Task{Source: "local", ID: id, Key: id, Title: "Rotate the certificates of service " + id,
			Description: desc, RawStatus: "in_progress", Priority: 2, State: model.StateClaimed, Class: model.ClassStandard,
			CreatedAt: model.StampOf(now.Add(-time.Hour)), EditedAt: model.StampOf(now), Version: "17"}
		t.SetClaim(model.Claim{Holder: model.HolderAgent, Name: "agent-7", RunID: "run-7-3", Token: "0b8f6c1e-2f7a-4d55-9e0c-3b1a7d9c4e21",
			ClaimedAt: model.StampOf(now.Add(-time.Minute)), HeartbeatAt: model.StampOf(now), Expires: model.StampOf(now.Add(time.Hour))})
		var m model.More
		for k := range 3 {
			m.History = append(m.History, model.Event{At: now.Add(time.Duration(k) * time.Minute), Actor: "agent-7", Action: "heartbeat",
				Reason: "still rotating the certificates of region " + strconv.Itoa(k), Detail: "lease extended by twenty minutes"})
		}
		t.SetMore(m)
		tasks[i] = t
	}
	return tasks
}

// loaded is a relay server holding tasks as its hub's first read of
// source "local".
func loaded(srv *Server, tasks []*model.Task) {
	srv.take(hub.Snapshot{At: time.Now(), Sources: []hub.SourceState{{Name: "local", Status: hub.StatusOK,
		Updated: time.Now(), Health: hub.SourceHealth{Every: time.Hour}, Tasks: hub.TasksOf(tasks), Whole: true}}})
}

// writing counts the answers a handler began to write: the relay has
// built the answer by then, and a client that never reads holds it from
// there on.
type writing struct {
	http.ResponseWriter
	n     *atomic.Int64
	begun bool
}

func (w *writing) Write(b []byte) (int, error) {
	if !w.begun {
		w.begun = true
		w.n.Add(1)
	}
	return w.ResponseWriter.Write(b)
}

func (w *writing) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// footprint is the process's live heap after a collection, and its
// resident set after the freed memory went back to the system, in bytes.
func footprint() (heap, rss uint64) {
	runtime.GC()
	debug.FreeOSMemory()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	heap = s[0].Value.Uint64()
	status, _ := os.ReadFile("/proc/self/status")
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			rss = kb << 10
		}
	}
	return heap, rss
}

// What clients that ask for a full answer of 30,000 tasks and never read
// it cost the relay: its live heap and resident set after they asked,
// less before (MB, after a collection), with the relay served on
// 127.0.0.1 as `claimdeck relay` serves it. clients=0 is the floor,
// measured the same way in the same run. cold: the relay has answered
// nobody yet (its tasks' wire bytes are built by the first answer, and
// counted); warm: one client read a full answer first.
//
//	go test -run '^$' -bench UnreadFullAnswers -benchtime 3x -count 3 ./sources/relay/
func BenchmarkUnreadFullAnswers(b *testing.B) {
	tasks := bigQueue(30_000)
	for _, warm := range []bool{false, true} {
		for _, n := range []int{0, 20} {
			name := fmt.Sprintf("cold/clients=%d", n)
			if warm {
				name = fmt.Sprintf("warm/clients=%d", n)
			}
			b.Run(name, func(b *testing.B) {
				var heapMB, rssMB, answerMB float64
				for b.Loop() {
					h, r, size := unreadFullAnswers(b, tasks, n, warm)
					heapMB += h
					rssMB += r
					answerMB = size
				}
				b.ReportMetric(heapMB/float64(b.N), "heap-MB")
				b.ReportMetric(rssMB/float64(b.N), "rss-MB")
				b.ReportMetric(answerMB, "answer-MB")
			})
		}
	}
}

// unreadFullAnswers serves a relay holding tasks, has n clients ask for
// a full answer and read none of it, and returns how much the process's
// heap and resident set grew (MB), and the full answer's size (MB, when
// warm: a client read it).
func unreadFullAnswers(b *testing.B, tasks []*model.Task, n int, warm bool) (heapMB, rssMB, answerMB float64) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := NewServer(token)
	loaded(srv, tasks)
	var begun atomic.Int64
	handler := srv.Handler()
	web := webserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handler.ServeHTTP(&writing{ResponseWriter: w, n: &begun}, r)
	}), webserver.Limits{PerClient: 256, Write: 2 * time.Minute}) // as `claimdeck relay` serves
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- web.Serve(ctx, ln) }()
	request := "GET /v1/poll?source=local HTTP/1.1\r\nHost: relay\r\nAuthorization: Bearer " + token.Reveal() + "\r\n\r\n"
	if warm {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Write([]byte(request)); err != nil {
			b.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			b.Fatal(err)
		}
		answerMB = float64(resp.ContentLength) / 1e6
		resp.Body.Close()
		c.Close()
		for begun.Load() < 1 {
			time.Sleep(time.Millisecond)
		}
		begun.Store(0)
	}
	heap0, rss0 := footprint()
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write([]byte(request)); err != nil {
			b.Fatal(err)
		}
		conns[i] = c
	}
	for deadline := time.Now().Add(time.Minute); begun.Load() < int64(n); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d answers begun after a minute", begun.Load(), n)
		}
	}
	time.Sleep(300 * time.Millisecond) // every writer is stuck in its socket's buffers
	heap1, rss1 := footprint()
	for _, c := range conns {
		c.Close()
	}
	cancel()
	<-served
	return (float64(heap1) - float64(heap0)) / 1e6, (float64(rss1) - float64(rss0)) / 1e6, answerMB
}
