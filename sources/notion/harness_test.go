package notion

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/claimdeck/claimdeck/sources/notion/notionemu"
	"github.com/claimdeck/claimdeck/sources/notion/notionspec"
)

// emulator is a strict Notion emulator served over real HTTP on 127.0.0.1.
type emulator struct {
	// skew moves the emulator's clock ahead of ours (nanoseconds), so that
	// a test can let time pass for Notion's edit timestamps.
	skew  *atomic.Int64
	srv   *notionemu.Server
	url   string
	token string
	rt    http.RoundTripper
}

// newEmulator starts an emulator without its rate limit (the tests that
// need 429s turn it on) and registers a token of its own, so that the
// shared per-token limiters of different tests never meet.
func newEmulator(tb testing.TB) *emulator {
	tb.Helper()
	skew := new(atomic.Int64)
	srv := notionemu.New(notionemu.Options{
		RateLimit: &notionemu.RateLimit{},
		Now:       func() time.Time { return time.Now().Add(time.Duration(skew.Load())) },
	})
	ts := httptest.NewServer(srv)
	tb.Cleanup(ts.Close)
	token := "secret_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	srv.AddToken(token)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 128
	tb.Cleanup(tr.CloseIdleConnections)
	return &emulator{skew: skew, srv: srv, url: ts.URL, token: token, rt: published(tb, tr)}
}

// published holds every request a test sends to Notion's published API
// description: one outside it fails the test and is not sent. Benchmarks
// go unchecked, so that their figures are the source's cost alone.
func published(tb testing.TB, next http.RoundTripper) http.RoundTripper {
	tb.Helper()
	if _, bench := tb.(*testing.B); bench {
		return next
	}
	spec, err := notionspec.Load()
	if err != nil {
		tb.Fatal(err)
	}
	return spec.Transport(next, func(err error) { tb.Errorf("%v", err) })
}

// database creates a database shared with the emulator's token.
func (e *emulator) database(tb testing.TB, schema notionemu.DatabaseSchema) string {
	tb.Helper()
	id, err := e.srv.CreateDatabase(schema, e.token)
	if err != nil {
		tb.Fatal(err)
	}
	return id
}

// config is a source config pointed at the emulator: no client-side rate
// limit, fast retries, a short settle.
func (e *emulator) config(db, preset string) Config {
	return Config{
		Name: "notion-test", Token: e.token, DatabaseID: db, Preset: preset, BaseURL: e.url, Version: testVersion,
		Rate: -1, Settle: 20 * time.Millisecond, RetryBase: 5 * time.Millisecond, RetryMax: 50 * time.Millisecond, Transport: e.rt,
	}
}

func (e *emulator) open(tb testing.TB, cfg Config) *Source {
	tb.Helper()
	src, err := Open(context.Background(), cfg)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { _ = src.Close() })
	return src
}

// The optional properties claimdeck uses beside each seed's own, so that
// the conformance kit can check descriptions, classes, reasons and
// artifacts. claim-protocol keeps no lock_token column, so its tokens ride
// in claimed_by.
func withExtras(schema notionemu.DatabaseSchema, preset string) notionemu.DatabaseSchema {
	text := func(n string) notionemu.Property { return notionemu.Property{Name: n, Type: notionemu.TypeRichText} }
	date := func(n string) notionemu.Property { return notionemu.Property{Name: n, Type: notionemu.TypeDate} }
	class := func(n string) notionemu.Property {
		return notionemu.Property{Name: n, Type: notionemu.TypeSelect, Options: []string{"EXPEDITE", "FIXED_DATE", "STANDARD", "INTANGIBLE"}}
	}
	var extra []notionemu.Property
	switch preset {
	case PresetNtask:
		extra = []notionemu.Property{text("Description"), text("Create Key")}
	case PresetClaimProtocol:
		extra = []notionemu.Property{text("details"), class("class"), {Name: "priority", Type: notionemu.TypeNumber},
			text("run_id"), text("artifacts"), text("reason"), text("unblock_action"), date("next_check_at"), date("started_at"), text("create_key")}
	case PresetMeshHandoff:
		extra = []notionemu.Property{text("details"), class("class"), text("lock_token"), text("run_id"),
			text("artifacts"), text("reason"), text("unblock_action"), date("next_check_at"), text("create_key")}
	}
	schema.Properties = append(schema.Properties, extra...)
	return schema
}

func presetSchema(preset string) notionemu.DatabaseSchema {
	switch preset {
	case PresetClaimProtocol:
		return notionemu.PresetClaimProtocol()
	case PresetMeshHandoff:
		return notionemu.PresetMeshHandoff()
	}
	return notionemu.PresetNtask()
}

// advance moves the emulator's clock forward.
func (e *emulator) advance(d time.Duration) { e.skew.Add(int64(d)) }
