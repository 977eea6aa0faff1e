package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/notion"
	"github.com/claimdeck/claimdeck/sources/notion/notionemu"
)

// openNotion opens a notion source. The token comes from the config or,
// better, from the environment variable token_env names.
func openNotion(ctx context.Context, cfg *Config, sc SourceConfig) (sources.Source, error) {
	token := sc.Token
	if sc.TokenEnv != "" {
		token = os.Getenv(sc.TokenEnv)
		if token == "" {
			return nil, model.Errorf(model.CodeMisconfigured, "open", "", "source %s: $%s is empty", sc.Name, sc.TokenEnv)
		}
	}
	nc := notion.Config{
		Name: sc.Name, Token: token, DatabaseID: sc.DatabaseID, Preset: sc.Schema, BaseURL: sc.BaseURL,
		Version: sc.NotionVersion, Workspace: sc.Workspace,
		DataSourceID: sc.DataSourceID, DataSource: sc.DataSource, Timeout: sc.Timeout, Budget: sc.CommandBudget,
		HandoffQueueDB: sc.HandoffQueue, Rate: sc.Rate, Settle: sc.Settle, Lease: firstSet(sc.Lease, cfg.Lease),
		Grace: cfg.Grace, OperatorUser: sc.OperatorUser,
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
const todayDB = "ntask-today"

// emulatorWorkspace is an emulator with one token and a database per
// preset, as `claimdeck notion-emulator` and the demo serve it.
type emulatorWorkspace struct {
	srv   *notionemu.Server
	token string
	dbs   map[string]string // preset (or "handoff-queue") → database id
}

func newEmulatorWorkspace(limit notionemu.RateLimit) (*emulatorWorkspace, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	w := &emulatorWorkspace{srv: notionemu.New(notionemu.Options{RateLimit: &limit}), token: "secret_emu_" + hex.EncodeToString(b), dbs: map[string]string{}}
	w.srv.AddToken(w.token)
	for name, schema := range map[string]notionemu.DatabaseSchema{
		notion.PresetNtask: notionemu.PresetNtask(), notion.PresetClaimProtocol: notionemu.PresetClaimProtocol(),
		notion.PresetMeshHandoff: notionemu.PresetMeshHandoff(), "handoff-queue": notionemu.PresetHandoffQueue(),
		todayDB: notionemu.PresetToday(),
	} {
		id, err := w.srv.CreateDatabase(schema, w.token)
		if err != nil {
			return nil, err
		}
		w.dbs[name] = id
	}
	return w, nil
}

// serve listens on addr and serves until ctx ends; the returned address is
// where it listens.
func (w *emulatorWorkspace) serve(ctx context.Context, addr string) (string, <-chan error, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, model.Wrap(model.CodeMisconfigured, "notion-emulator", "", err)
	}
	done := make(chan error, 1)
	go func() { done <- w.srv.Serve(ctx, ln) }()
	return ln.Addr().String(), done, nil
}

func (a *app) notionEmulatorCommand() *cobra.Command {
	var listen string
	var rate float64
	var faults notionemu.Faults
	cmd := &cobra.Command{
		Use:   "notion-emulator",
		Short: "Serve a local Notion API emulator with a database per seed",
		Long: `notion-emulator serves the strict Notion API emulator claimdeck's tests use,
with one database per schema preset (ntask, claim-protocol, mesh-handoff),
one set up as today's notion-task skill does (ntask-today, read by schema
ntask) and a seed 001 Handoff Queue. The token to use and the database ids are
printed on stderr; point a notion source's base_url at the address.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w, err := newEmulatorWorkspace(notionemu.RateLimit{PerSecond: rate, Burst: 10})
			if err != nil {
				return model.Wrap(model.CodeAPIError, "notion-emulator", "", err)
			}
			if err := w.srv.SetFaults(faults); err != nil {
				return model.Wrap(model.CodeMisconfigured, "notion-emulator", "", err)
			}
			addr, done, err := w.serve(cmd.Context(), listen)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stderr, "notion emulator on http://%s\ntoken: %s\n", addr, w.token)
			for _, name := range []string{notion.PresetNtask, todayDB, notion.PresetClaimProtocol, notion.PresetMeshHandoff, "handoff-queue"} {
				fmt.Fprintf(a.stderr, "database %-15s %s\n", name, w.dbs[name])
			}
			fmt.Fprintf(a.stderr, "config:\n  - name: emu\n    kind: notion\n    base_url: http://%s\n    token_env: NOTION_TOKEN\n    database_id: %s\n    schema: ntask\n", addr, w.dbs[notion.PresetNtask])
			if err := <-done; err != nil && cmd.Context().Err() == nil {
				return model.Wrap(model.CodeAPIError, "notion-emulator", "", err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:7700", "address to serve on")
	cmd.Flags().Float64Var(&rate, "rate", notionemu.DefaultRateLimit.PerSecond, "requests per second per token before 429 (0: no limit)")
	cmd.Flags().Float64Var(&faults.Rate, "fault-rate", 0, "share of requests (0 to 1) answered with --fault-status instead, for fault drills")
	cmd.Flags().IntVar(&faults.Status, "fault-status", 503, "the status of injected faults (500, 502, 503, 504, 529)")
	cmd.Flags().DurationVar(&faults.Latency, "fault-latency", 0, "latency added to every request")
	cmd.Flags().BoolVar(&faults.Apply, "fault-apply", false, "let a faulted write take effect before its error, as a gateway timeout after Notion committed")
	return cmd
}

// demoNotionTransport carries the demo source's requests; nil (the
// default transport) but in tests, which hold each request to Notion's
// published API description.
var demoNotionTransport http.RoundTripper

// openNotionDemo starts an emulator on loopback with an empty ntask
// database and returns a source over it, and a function that stops the
// emulator. The demo's simulated agents and dashboard share the token and
// so its rate limiter, as they would share an integration.
func openNotionDemo(ctx context.Context, dir string, lease time.Duration) (sources.Source, func(), error) {
	_ = dir // the emulator keeps everything in memory
	w, err := newEmulatorWorkspace(notionemu.RateLimit{PerSecond: 40, Burst: 20})
	if err != nil {
		return nil, nil, model.Wrap(model.CodeAPIError, "demo", "", err)
	}
	sctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	addr, done, err := w.serve(sctx, "127.0.0.1:0")
	if err != nil {
		stop()
		return nil, nil, err
	}
	halt := func() { stop(); <-done }
	src, err := notion.Open(ctx, notion.Config{
		Name: "demo-notion", Token: w.token, DatabaseID: w.dbs[notion.PresetNtask], BaseURL: "http://" + addr,
		Rate: 30, Settle: 150 * time.Millisecond, Lease: lease, ReconcileEvery: 30 * time.Second,
		Transport: demoNotionTransport,
	})
	if err != nil {
		halt()
		return nil, nil, err
	}
	return src, halt, nil
}

// openNotionDemoSource is openNotionDemo for the demo command: closing the
// source stops the emulator.
func openNotionDemoSource(ctx context.Context, dir string, lease time.Duration) (sources.Source, error) {
	src, stop, err := openNotionDemo(ctx, dir, lease)
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
