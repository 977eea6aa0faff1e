package cmdutil

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/notion"
	"github.com/claimdeck/claimdeck/sources/notion/notionemu"
)

// openNotion opens a notion source. The token comes from the config or,
// better, from the file token_file or the variable token_env names.
func openNotion(ctx context.Context, cfg *Config, sc SourceConfig) (sources.Source, error) {
	token, err := sc.secret("token", sc.Token, sc.TokenEnv, sc.TokenFile)
	if err != nil {
		return nil, err
	}
	// A trail key configured but empty would sign with another key than
	// the team's, and the trail would not be read back: refused.
	var trailKey string
	if sc.TrailKeyEnv != "" {
		if trailKey = os.Getenv(sc.TrailKeyEnv); strings.TrimSpace(trailKey) == "" {
			return nil, model.Errorf(model.CodeMisconfigured, "open", "", "source %s: $%s (trail_key_env) is empty: set it to the team's trail key, or drop trail_key_env", sc.Name, sc.TrailKeyEnv)
		}
	}
	nc := notion.Config{
		Name: sc.Name, Token: token, DatabaseID: sc.DatabaseID, Preset: sc.Schema, BaseURL: sc.BaseURL,
		Version: sc.NotionAPIVersion(), Workspace: sc.Workspace,
		DataSourceID: sc.DataSourceID, DataSource: sc.DataSource, Timeout: sc.Timeout, Budget: sc.CommandBudget,
		HandoffQueueDB: sc.HandoffQueue, Rate: sc.Rate, Settle: sc.Settle, Lease: firstSet(sc.Lease, cfg.Lease),
		Grace: cfg.Grace, OperatorUser: sc.OperatorUser, TrailKey: trailKey,
	}
	if sc.Schema == "custom" || len(sc.Properties) > 0 || len(sc.Statuses) > 0 || len(sc.Optional) > 0 {
		// A team's own database: a preset (ntask unless schema names
		// another) with properties renamed and statuses reworded.
		base := sc.Schema
		if base == "custom" {
			base = notion.PresetNtask
		}
		m, err := notion.Custom{Base: base, Properties: sc.Properties, Statuses: sc.Statuses, Optional: sc.Optional}.Build()
		if err != nil {
			return nil, model.Errorf(model.CodeMisconfigured, "open", "", "source %s: %v", sc.Name, err)
		}
		nc.Mapping = &m
	}
	return notion.Open(ctx, nc)
}

// todayDB names the emulator's database set up as today's notion-task
// skill does; `schema: ntask` reads it.
const TodayDB = "ntask-today"

// emulatorWorkspace is an emulator with one token and a database per
// preset, as `claimdeck notion-emulator` and the demo serve it.
type EmulatorWorkspace struct {
	Srv   *notionemu.Server
	Token string
	Dbs   map[string]string // preset (or "handoff-queue") → database id
}

func NewEmulatorWorkspace(limit notionemu.RateLimit) (*EmulatorWorkspace, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	w := &EmulatorWorkspace{Srv: notionemu.New(notionemu.Options{RateLimit: &limit}), Token: "secret_emu_" + hex.EncodeToString(b), Dbs: map[string]string{}}
	w.Srv.AddToken(w.Token)
	for name, schema := range map[string]notionemu.DatabaseSchema{
		notion.PresetNtask: notionemu.PresetNtask(), notion.PresetClaimProtocol: notionemu.PresetClaimProtocol(),
		notion.PresetMeshHandoff: notionemu.PresetMeshHandoff(), "handoff-queue": notionemu.PresetHandoffQueue(),
		TodayDB: notionemu.PresetToday(),
	} {
		id, err := w.Srv.CreateDatabase(schema, w.Token)
		if err != nil {
			return nil, err
		}
		w.Dbs[name] = id
	}
	return w, nil
}

// serve listens on addr and serves until ctx ends; the returned address is
// where it listens.
func (w *EmulatorWorkspace) Serve(ctx context.Context, addr string) (string, <-chan error, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, model.Wrap(model.CodeMisconfigured, "notion-emulator", "", err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Srv.Serve(ctx, ln) }()
	return ln.Addr().String(), done, nil
}

// demoNotionTransport carries the demo source's requests; nil (the
// default transport) but in tests, which hold each request to Notion's
// published API description.
var DemoNotionTransport http.RoundTripper

// openNotionDemo starts an emulator on loopback with an empty ntask
// database and returns a source over it, and a function that stops the
// emulator. The demo's simulated agents and dashboard share the token and
// so its rate limiter, as they would share an integration.
func OpenNotionDemo(ctx context.Context, dir string, lease time.Duration) (sources.Source, func(), error) {
	_ = dir // the emulator keeps everything in memory
	w, err := NewEmulatorWorkspace(notionemu.RateLimit{PerSecond: 40, Burst: 20})
	if err != nil {
		return nil, nil, model.Wrap(model.CodeAPIError, "demo", "", err)
	}
	sctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	addr, done, err := w.Serve(sctx, "127.0.0.1:0")
	if err != nil {
		stop()
		return nil, nil, err
	}
	halt := func() { stop(); <-done }
	src, err := notion.Open(ctx, notion.Config{
		Name: "demo-notion", Token: w.Token, DatabaseID: w.Dbs[notion.PresetNtask], BaseURL: "http://" + addr,
		Rate: 30, Settle: 150 * time.Millisecond, Lease: lease, ReconcileEvery: 30 * time.Second,
		Transport: DemoNotionTransport,
	})
	if err != nil {
		halt()
		return nil, nil, err
	}
	return src, halt, nil
}

// openNotionDemoSource is openNotionDemo for the demo command: closing the
// source stops the emulator.
func OpenNotionDemoSource(ctx context.Context, dir string, lease time.Duration) (sources.Source, error) {
	src, stop, err := OpenNotionDemo(ctx, dir, lease)
	if err != nil {
		return nil, err
	}
	return demoNotion{Source: src.(*notion.Source), stop: stop}, nil
}

type demoNotion struct {
	*notion.Source
	stop func()
}

func (d demoNotion) Close() error {
	err := d.Source.Close()
	d.stop()
	return err
}
