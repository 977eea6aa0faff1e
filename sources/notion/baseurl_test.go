package notion

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// A transport error names the base_url claimdeck dialled, never
// api.notion.com, which it did not.
func TestATransportErrorNamesTheConfiguredBaseURL(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	_, err = Open(context.Background(), Config{Name: "n", Token: "ntn_test", DatabaseID: "2f835e81-2bbb-81b6-9700-e18108a40b1f",
		Preset: "ntask", BaseURL: "http://" + addr, Rate: -1, RetryBase: time.Millisecond, RetryMax: time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), addr) || strings.Contains(err.Error(), "api.notion.com") {
		t.Fatalf("open against a closed base_url: %v", err)
	}
}
