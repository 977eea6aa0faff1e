package notion

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
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

// A token Notion refuses is named as refused credentials, which pollers
// back off from instead of trying every few seconds.
func TestARefusedTokenIsRefusedCredentials(t *testing.T) {
	e := newEmulator(t)
	cfg := e.config(e.database(t, presetSchema(PresetNtask)), PresetNtask)
	cfg.Token = "secret_" + strings.Repeat("0", 32)
	_, err := Open(context.Background(), cfg)
	if !errors.Is(err, sources.ErrCredentials) || model.CodeOf(err) != model.CodeMisconfigured || strings.Contains(err.Error(), cfg.Token) {
		t.Fatalf("open with a refused token: %v", err)
	}
}
