//go:build faults

package faults

import (
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
func publishedOnly(t *testing.T, addr string, hold time.Duration) string {
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
	check := spec.Handler(httputil.NewSingleHostReverseProxy(target), func(err error) { t.Errorf("%v", err) })
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
		t.Logf("notion: %d requests held to Notion's published API description", checked.Load())
	})
	return proxy.URL
}
