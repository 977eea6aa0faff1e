package notionemu

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

const testToken = "secret_test_token"

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 2, 1, 2, 15, 42, 123_000_000, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// harness is an emulator on a fake clock without a rate limit, holding one
// ntask database shared with testToken.
type harness struct {
	t     testing.TB
	srv   *Server
	clock *fakeClock
	db    string
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	clock := newFakeClock()
	srv := New(Options{Now: clock.Now, RateLimit: &RateLimit{}})
	srv.AddToken(testToken)
	db, err := srv.CreateDatabase(PresetNtask(), testToken)
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, srv: srv, clock: clock, db: db}
}

// response is a decoded answer from the emulator.
type response struct {
	Status int
	Header http.Header
	Body   map[string]any
}

// call sends an authenticated request with the Notion-Version header.
func (h *harness) call(method, path, body string) response {
	h.t.Helper()
	return h.send(method, path, body, map[string]string{
		"Authorization":  "Bearer " + testToken,
		"Notion-Version": NotionVersion,
	})
}

func (h *harness) send(method, path, body string, headers map[string]string) response {
	h.t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.srv.ServeHTTP(rec, req)
	data, _ := io.ReadAll(rec.Body)
	var decoded map[string]any
	if err := json.Unmarshal(data, &decoded); err != nil {
		h.t.Fatalf("%s %s: answer is not a JSON object: %v: %s", method, path, err, data)
	}
	return response{Status: rec.Code, Header: rec.Header(), Body: decoded}
}

// mustOK fails the test unless the emulator answered 200.
func (r response) mustOK(t testing.TB) response {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("status %d, want 200: %v", r.Status, r.Body)
	}
	return r
}

// wantError checks Notion's error object: {"object":"error","status":…,
// "code":…,"message":…}.
func (r response) wantError(t *testing.T, status int, code string) {
	t.Helper()
	if r.Status != status || r.Body["object"] != "error" || r.Body["code"] != code ||
		r.Body["status"] != float64(status) || r.Body["message"] == "" {
		t.Fatalf("got %d %v, want %d %s error object", r.Status, r.Body, status, code)
	}
}

// createTask creates an ntask page from a JSON properties object.
func (h *harness) createTask(properties string) map[string]any {
	h.t.Helper()
	body := `{"parent":{"database_id":"` + h.db + `"},"properties":` + properties + `}`
	return h.call("POST", "/v1/pages", body).mustOK(h.t).Body
}

func titled(name string) string {
	return `{"Name":{"title":[{"text":{"content":` + quote(name) + `}}]}}`
}

func quote(s string) string {
	var b bytes.Buffer
	_ = json.NewEncoder(&b).Encode(s)
	return strings.TrimSpace(b.String())
}

// prop digs a property's type-specific value out of a page object.
func prop(page map[string]any, name string) any {
	p := page["properties"].(map[string]any)[name].(map[string]any)
	return p[p["type"].(string)]
}

// titles lists the plain-text titles of a query's results, in order.
func titles(list map[string]any) []string {
	var out []string
	for _, r := range list["results"].([]any) {
		t := prop(r.(map[string]any), "Name").([]any)
		name := ""
		for _, part := range t {
			name += part.(map[string]any)["plain_text"].(string)
		}
		out = append(out, name)
	}
	return out
}
