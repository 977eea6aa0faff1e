package notionemu

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

// Notion allows "an average of three requests per second" per integration
// and answers more with HTTP 429, code "rate_limited", and a Retry-After
// header "set as an integer number of seconds".
func TestRateLimitPerToken(t *testing.T) {
	h := newHarness(t)
	h.srv.AddToken("secret_other")
	h.srv.SetRateLimit(RateLimit{PerSecond: 3, Burst: 5})
	get := func(token string) response {
		return h.send("GET", "/v1/databases/"+h.db, "", map[string]string{
			"Authorization": "Bearer " + token, "Notion-Version": NotionVersion,
		})
	}
	for i := range 5 {
		if r := get(testToken); r.Status != http.StatusOK {
			t.Fatalf("request %d of the burst: %d %v", i, r.Status, r.Body)
		}
	}
	limited := get(testToken)
	limited.wantError(t, http.StatusTooManyRequests, "rate_limited")
	if wait, err := strconv.Atoi(limited.Header.Get("Retry-After")); err != nil || wait < 1 {
		t.Fatalf("Retry-After %q, want whole seconds ≥ 1", limited.Header.Get("Retry-After"))
	}
	// Another integration has its own budget (it sees 404: not shared).
	get("secret_other").wantError(t, http.StatusNotFound, "object_not_found")

	h.clock.Advance(time.Second) // three requests' worth refills
	for i := range 3 {
		if r := get(testToken); r.Status != http.StatusOK {
			t.Fatalf("request %d after a second: %d", i, r.Status)
		}
	}
	get(testToken).wantError(t, http.StatusTooManyRequests, "rate_limited")

	st := h.srv.Stats()
	if st.ByStatus[http.StatusTooManyRequests] != 2 || st.ByEndpoint[EndpointDatabaseRetrieve] != 11 || st.Requests != 11 {
		t.Errorf("stats %+v", st)
	}
	h.srv.ResetStats()
	if st := h.srv.Stats(); st.Requests != 0 || len(st.ByEndpoint) != 0 || len(st.ByStatus) != 0 {
		t.Errorf("stats after reset %+v", st)
	}
}

func TestRetryAfterCoversTheWait(t *testing.T) {
	l := newLimiter(RateLimit{PerSecond: 0.25, Burst: 1})
	now := time.Unix(0, 0)
	if _, ok := l.allow("t", now); !ok {
		t.Fatal("first request refused")
	}
	wait, ok := l.allow("t", now)
	if ok || wait != 4*time.Second {
		t.Fatalf("second request: ok %v wait %v, want refused for 4s", ok, wait)
	}
	if _, ok := l.allow("t", now.Add(wait)); !ok {
		t.Error("refused after waiting Retry-After")
	}
}

// Notion sheds load with HTTP 529 "service_overload" and fails now and then
// with 500 internal_server_error or 503 service_unavailable.
func TestInjectedFaults(t *testing.T) {
	h := newHarness(t)
	if err := h.srv.FailNext(2, StatusServiceOverload); err != nil {
		t.Fatal(err)
	}
	if err := h.srv.FailNext(1, http.StatusServiceUnavailable); err != nil {
		t.Fatal(err)
	}
	overloaded := h.call("GET", "/v1/databases/"+h.db, "")
	overloaded.wantError(t, StatusServiceOverload, "service_overload")
	if overloaded.Header.Get("Retry-After") == "" {
		t.Error("529 without Retry-After")
	}
	h.call("POST", "/v1/databases/"+h.db+"/query", "").wantError(t, StatusServiceOverload, "service_overload")
	h.call("GET", "/v1/databases/"+h.db, "").wantError(t, http.StatusServiceUnavailable, "service_unavailable")
	h.call("GET", "/v1/databases/"+h.db, "").mustOK(t)

	if err := h.srv.SetFaults(Faults{Rate: 1, Status: http.StatusInternalServerError}); err != nil {
		t.Fatal(err)
	}
	h.call("GET", "/v1/databases/"+h.db, "").wantError(t, http.StatusInternalServerError, "internal_server_error")
	if err := h.srv.SetFaults(Faults{}); err != nil {
		t.Fatal(err)
	}
	h.call("GET", "/v1/databases/"+h.db, "").mustOK(t)

	for _, bad := range []Faults{{Rate: 2, Status: 529}, {Rate: 0.5, Status: 404}, {Latency: -time.Second}} {
		if h.srv.SetFaults(bad) == nil {
			t.Errorf("SetFaults(%+v) accepted", bad)
		}
	}
	if h.srv.FailNext(1, http.StatusTeapot) == nil {
		t.Error("FailNext(418) accepted")
	}
	st := h.srv.Stats()
	if st.ByStatus[StatusServiceOverload] != 2 || st.ByStatus[http.StatusServiceUnavailable] != 1 || st.ByEndpoint[EndpointDatabaseQuery] != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestInjectedLatency(t *testing.T) {
	h := newHarness(t)
	if err := h.srv.SetFaults(Faults{Latency: 30 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	h.call("GET", "/v1/databases/"+h.db, "").mustOK(t)
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Errorf("answered in %v, want at least 30ms", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequestWithContext(ctx, "GET", "/v1/databases/"+h.db, nil)
	rec := httptest.NewRecorder()
	h.srv.ServeHTTP(rec, req)
	if rec.Code != http.StatusGatewayTimeout {
		t.Errorf("canceled request answered %d, want 504", rec.Code)
	}
}
