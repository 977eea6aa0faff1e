package serve

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/relay"
	"github.com/claimdeck/claimdeck/sources/webserver"
)

// relayPerClient is how many connections one address may hold on a
// relay: fifty dashboards on one host each hold a watch stream and a poll
// connection per source, with room to spare.
const relayPerClient = 256

// relayWrite bounds the writing of one answer: a full answer of a large
// source is tens of megabytes. The watch stream sets its own deadlines.
const relayWrite = 2 * time.Minute

func (a *app) relayCommand() *cobra.Command {
	var listen, tokenEnv string
	var maxFull int
	var stall time.Duration
	cmd := &cobra.Command{
		Use:   "relay --listen HOST:PORT",
		Short: "Read every source once for many dashboards: they poll the relay, not the database",
		Long: `relay reads every configured source (or --source) with one hub, exactly as
a dashboard does, and serves what it reads to the dashboards whose
configuration names it: fifty dashboards on one PostgreSQL then cost the
server one reader instead of fifty. A dashboard reads through the relay
when its source has relay: http://HOST:PORT (and the token in
$CLAIMDECK_RELAY_TOKEN, or the variable relay_token_env names); it still
opens the source itself, and every action (claim, release, cancel, …) goes
from the dashboard to the source under the dashboard's own actor: no action
passes through the relay, which carries no identity. When the relay cannot
read a source, or cannot be reached, the dashboard shows that source
degraded with the relay's message.

The relay opens its sources directly, even where the configuration names a
relay. Every request must carry the bearer token from --token-env (a random
one: openssl rand -hex 32). It speaks plain HTTP: keep it on loopback, or
put a TLS proxy or an SSH tunnel in front (docs/relay.md). It runs until
interrupted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if listen == "" {
				return model.Errorf(model.CodeMisconfigured, "relay", "", "--listen HOST:PORT is required (e.g. 127.0.0.1:7480)")
			}
			if maxFull < 0 || stall < 0 {
				return model.Errorf(model.CodeMisconfigured, "relay", "", "--max-full %d, --stall %s: want 0 (the default) or more", maxFull, stall)
			}
			token, err := cmdutil.RelayToken(tokenEnv, true)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			for i := range a.Cfg.Sources {
				a.Cfg.Sources[i].ListenPause = relay.ListenPause // one listener, for every dashboard
			}
			srcs, err := a.OpenAll(ctx) // never through a relay: this is the reader
			if err != nil {
				return err
			}
			defer cmdutil.CloseAll(srcs)
			h := hub.New(relay.HubConfig(a.ReadHub(a.Cfg.Policy(), cmdutil.DashboardEvery, srcs...)))
			srv := relay.New(relay.Config{Token: token, MaxFull: maxFull, Stall: stall})
			var running sync.WaitGroup
			defer running.Wait() // the hub stops polling before its sources close
			defer cancel()
			running.Go(func() { h.Run(ctx) })
			running.Go(func() { srv.Run(ctx, h) })
			ln, err := a.Listen("relay", listen)
			if err != nil {
				return err
			}
			names := make([]string, len(srcs))
			for i, s := range srcs {
				names[i] = s.Name()
			}
			if err := a.Out().JSON(map[string]any{"ok": true, "relay": "http://" + ln.Addr().String(), "sources": names, "token_env": tokenEnv}); err != nil {
				ln.Close()
				return err
			}
			web := webserver.New(srv.Handler(), webserver.Limits{PerClient: relayPerClient, Write: relayWrite})
			return model.Wrap(model.CodeAPIError, "relay", "", web.Serve(ctx, ln))
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "address to serve on, host required (e.g. 127.0.0.1:7480)")
	cmd.Flags().StringVar(&tokenEnv, "token-env", relay.DefaultTokenEnv, "the environment variable holding the bearer token dashboards present")
	cmd.Flags().IntVar(&maxFull, "max-full", 0, fmt.Sprintf("how many dashboards may be sent a full answer at once; more wait, then get 503 with Retry-After (0: %d)", relay.DefaultMaxFull))
	cmd.Flags().DurationVar(&stall, "stall", 0, fmt.Sprintf("drop a dashboard that takes less than one 256 KiB piece of an answer in this long (0: %s; raise it for slow links)", relay.DefaultStall))
	return cmd
}
