package notion

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/sources"
)

// reads counts what the source asks Notion to query and how many pages
// the answers carry, and keeps the filters it sent.
type reads struct {
	next    http.RoundTripper
	mu      sync.Mutex
	queries int
	pages   int
	filters []json.RawMessage
}

func (r *reads) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(req.URL.Path, "/query") {
		return r.next.RoundTrip(req)
	}
	var sent struct {
		Filter json.RawMessage `json:"filter"`
	}
	if req.GetBody != nil {
		if body, err := req.GetBody(); err == nil {
			_ = json.NewDecoder(body).Decode(&sent)
		}
	}
	res, err := r.next.RoundTrip(req)
	if err != nil {
		return res, err
	}
	raw, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(raw))
	var list struct {
		Results []json.RawMessage `json:"results"`
	}
	_ = json.Unmarshal(raw, &list)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.queries++
	r.pages += len(list.Results)
	r.filters = append(r.filters, sent.Filter)
	return res, nil
}

// reset returns the queries and pages counted so far and starts again.
func (r *reads) reset() (queries, pages int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	queries, pages = r.queries, r.pages
	r.queries, r.pages, r.filters = 0, 0, nil
	return queries, pages
}

func (r *reads) lastFilter() json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.filters) == 0 {
		return nil
	}
	return r.filters[len(r.filters)-1]
}

// post creates pages in a database from JSON property objects, eight at a
// time, with the emulator's clock where it is.
func (e *emulator) post(db string, props []string) error {
	work := make(chan string)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				req, _ := http.NewRequest("POST", e.url+"/v1/pages", strings.NewReader(`{"parent":{"database_id":"`+db+`"},"properties":`+p+`}`))
				req.Header.Set("Authorization", "Bearer "+e.token)
				req.Header.Set("Notion-Version", VersionCurrent)
				req.Header.Set("Content-Type", "application/json")
				res, err := e.rt.RoundTrip(req)
				if err == nil {
					_, _ = io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode != http.StatusOK {
						err = fmt.Errorf("create: %s", res.Status)
					}
				}
				if err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for _, p := range props {
		work <- p
	}
	close(work)
	wg.Wait()
	close(errs)
	return <-errs
}

// BenchmarkFirstLoadWithHistory is the dashboard's first full load, with
// its 24-hour window, of a database holding 1,000 live pages and 10,000
// finished two days ago: "uncounted" as the hub's first poll asks,
// "counted" as every later full poll (ReconcileEvery) asks. It reports
// the requests and pages Notion answers and the heap the delta holds.
// The emulator runs in the same process: B/op counts its allocations too
// (BENCHMARKS.md splits them with a memory profile).
func BenchmarkFirstLoadWithHistory(b *testing.B) {
	const live, finished = 1000, 10000
	emu := newEmulator(b)
	db := emu.database(b, withExtras(presetSchema(PresetNtask), PresetNtask))
	page := func(i int, status string) string {
		return fmt.Sprintf(`{"Name":{"title":[{"text":{"content":"task %05d"}}]},"Status":{"select":{"name":%q}},"Priority":{"number":%d}}`, i, status, i%5)
	}
	var old, now []string
	for i := range finished {
		old = append(old, page(i, []string{"DONE", "DONE", "DONE", "CANCELED", "FAILED"}[i%5]))
	}
	for i := range live {
		now = append(now, page(finished+i, []string{"READY", "READY", "BLOCKED", "REVIEW"}[i%4]))
	}
	emu.advance(-48 * time.Hour)
	if err := emu.post(db, old); err != nil {
		b.Fatal(err)
	}
	emu.skew.Store(0)
	if err := emu.post(db, now); err != nil {
		b.Fatal(err)
	}
	r := &reads{next: emu.rt}
	cfg := emu.config(db, PresetNtask)
	cfg.Transport = r
	src := emu.open(b, cfg)
	horizon := time.Now().Add(-24 * time.Hour)
	for _, c := range []struct {
		name string
		opt  sources.PollOption
	}{
		{"uncounted", sources.PollOption{FinishedAfter: horizon, Uncounted: true}},
		{"counted", sources.PollOption{FinishedAfter: horizon}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var queries, pages int
			var held uint64
			var ms runtime.MemStats
			b.ReportAllocs()
			for range b.N {
				r.reset()
				runtime.GC()
				runtime.GC() // and what sync.Pools kept through the first
				runtime.ReadMemStats(&ms)
				before := ms.HeapAlloc
				d, err := src.Poll(context.Background(), "", c.opt)
				if err != nil || len(d.Tasks) != live || (!c.opt.Uncounted && d.Archived != finished) {
					b.Fatalf("%v: %d tasks, %d archived", err, len(d.Tasks), d.Archived)
				}
				queries, pages = r.reset()
				b.StopTimer()
				runtime.GC()
				runtime.GC()
				runtime.ReadMemStats(&ms)
				held = max(held, ms.HeapAlloc-min(before, ms.HeapAlloc))
				runtime.KeepAlive(d)
				b.StartTimer()
			}
			b.ReportMetric(float64(queries), "requests/load")
			b.ReportMetric(float64(pages), "pages/load")
			b.ReportMetric(float64(held)/(1<<20), "MiB-held")
		})
	}
}
