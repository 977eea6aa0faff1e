//go:build faults

package faults

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/sources/notion/notionspec"
)

// publishedOnly puts a proxy in front of the emulator at addr that holds
// every request of the storm's agents to Notion's published API
// description: one outside it fails the test (and is answered 400, as
// Notion answers a malformed request). Each page write is held for hold
// before it goes on. It returns the proxy's address.
func publishedOnly(t *testing.T, addr, token, db string, hold time.Duration) string {
	t.Helper()
	spec, err := notionspec.Load()
	if err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(addr)
	if err != nil {
		t.Fatal(err)
	}
	var checked atomic.Int64
	fail := func(err error) { t.Errorf("%v", err) }
	props := notionspec.NewProperties()
	check := props.Handler(spec.Handler(httputil.NewSingleHostReverseProxy(target), fail), fail)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		checked.Add(1)
		if r.Method == http.MethodPatch && strings.HasPrefix(r.URL.Path, "/v1/pages/") {
			time.Sleep(hold)
		}
		check.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		proxy.Close()
		if checked.Load() == 0 {
			t.Error("no request of the storm went through the check of Notion's description")
		}
		t.Logf("notion: %d requests held to Notion's published API description, %d page properties to the data source's schema", checked.Load(), props.Checked())
		if props.Checked() == 0 {
			t.Error("no page property was held to the data source's schema")
		}
	})
	learnSchema(t, proxy.URL, token, db, spec.Version)
	return proxy.URL
}

// learnSchema reads the database's data source through the proxy, so
// that the schema is known before the first page write.
func learnSchema(t *testing.T, base, token, db, version string) {
	t.Helper()
	// The storm's emulator answers 429 and injected 5xx to these reads as
	// to any other: they are tried again, as a client would, before the
	// schema is called unknown.
	get := func(path string, into any) {
		for try := 1; ; try++ {
			req, _ := http.NewRequest(http.MethodGet, base+path, nil)
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Notion-Version", version)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500) && try < 20 {
				resp.Body.Close()
				time.Sleep(100 * time.Millisecond)
				continue
			}
			err = json.NewDecoder(resp.Body).Decode(into)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: HTTP %d %v", path, resp.StatusCode, err)
			}
			return
		}
	}
	var database struct {
		DataSources []struct{ ID string } `json:"data_sources"`
	}
	get("/v1/databases/"+db, &database)
	if len(database.DataSources) == 0 {
		t.Fatalf("database %s has no data source", db)
	}
	get("/v1/data_sources/"+database.DataSources[0].ID, &struct{}{})
}
