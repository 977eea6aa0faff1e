package notionemu

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

// Sixty-four clients create, claim, read, query and comment at once while
// the operator flips faults and the rate limit; run under -race.
func TestSixtyFourClientsAtOnce(t *testing.T) {
	h := newHarness(t)
	const clients, rounds = 64, 5
	var wg sync.WaitGroup
	errs := make(chan error, clients*rounds*4+50)
	for c := range clients {
		wg.Go(func() {
			// Failures are reported through errs: t.Fatal belongs to the test
			// goroutine.
			call := func(method, path, body string) (map[string]any, bool) {
				r := h.call(method, path, body)
				if r.Status != http.StatusOK {
					errs <- fmt.Errorf("%s %s: %d %v", method, path, r.Status, r.Body)
				}
				return r.Body, r.Status == http.StatusOK
			}
			agent := fmt.Sprintf("agent-%02d", c)
			page, ok := call("POST", "/v1/pages", `{"parent":{"database_id":"`+h.db+`"},"properties":`+titled(agent)+`}`)
			if !ok {
				return
			}
			id := page["id"].(string)
			for r := range rounds {
				token := fmt.Sprintf("%s-%d", agent, r)
				if _, ok := call("PATCH", "/v1/pages/"+id, `{"properties":{"Lock Token":{"rich_text":[{"text":{"content":"`+token+`"}}]},
					"Class":{"select":{"name":"C`+fmt.Sprint(r)+`"}}}}`); !ok {
					return
				}
				read, ok := call("GET", "/v1/pages/"+id, "")
				if !ok {
					return
				}
				if text := prop(read, "Lock Token").([]any)[0].(map[string]any)["plain_text"]; text != token {
					errs <- fmt.Errorf("%s read back %v, want %s", agent, text, token)
					return
				}
				call("POST", "/v1/databases/"+h.db+"/query", `{"filter":{"property":"Class","select":{"equals":"C1"}},"page_size":10}`)
				call("POST", "/v1/comments", `{"parent":{"page_id":"`+id+`"},"rich_text":[{"text":{"content":"`+token+`"}}]}`)
			}
		})
	}
	wg.Go(func() {
		for range 50 {
			_ = h.srv.Stats()
			h.srv.SetRateLimit(RateLimit{})
			if err := h.srv.SetFaults(Faults{Latency: time.Microsecond}); err != nil {
				errs <- err
			}
			h.clock.Advance(time.Second)
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	list := h.call("POST", "/v1/databases/"+h.db+"/query", `{"page_size":100}`).mustOK(t).Body
	if n := len(list["results"].([]any)); n != clients {
		t.Errorf("%d pages, want %d", n, clients)
	}
	want := clients*(1+rounds*4) + 1 // each client's create and rounds, then the final query
	if st := h.srv.Stats(); st.Requests != want || st.ByStatus[http.StatusOK] != want {
		t.Errorf("stats %d requests %v, want %d all 200", st.Requests, st.ByStatus, want)
	}
}
