package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/mesh"
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
			token, err := relayToken(tokenEnv, true)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			for i := range a.cfg.Sources {
				a.cfg.Sources[i].listenPause = relay.ListenPause // one listener, for every dashboard
			}
			srcs, err := a.openAll(ctx) // never through a relay: this is the reader
			if err != nil {
				return err
			}
			defer closeAll(srcs)
			h := hub.New(relay.HubConfig(a.readHub(a.cfg.Policy(), dashboardEvery, srcs...)))
			srv := relay.NewServer(token)
			var running sync.WaitGroup
			defer running.Wait() // the hub stops polling before its sources close
			defer cancel()
			running.Go(func() { h.Run(ctx) })
			running.Go(func() { srv.Run(ctx, h) })
			ln, err := a.listen("relay", listen)
			if err != nil {
				return err
			}
			names := make([]string, len(srcs))
			for i, s := range srcs {
				names[i] = s.Name()
			}
			if err := a.out().json(map[string]any{"ok": true, "relay": "http://" + ln.Addr().String(), "sources": names, "token_env": tokenEnv}); err != nil {
				ln.Close()
				return err
			}
			web := webserver.New(srv.Handler(), webserver.Limits{PerClient: relayPerClient, Write: relayWrite})
			return model.Wrap(model.CodeAPIError, "relay", "", web.Serve(ctx, ln))
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "address to serve on, host required (e.g. 127.0.0.1:7480)")
	cmd.Flags().StringVar(&tokenEnv, "token-env", relay.DefaultTokenEnv, "the environment variable holding the bearer token dashboards present")
	return cmd
}

// relayToken is the relay's bearer token from $env. The relay itself
// (serving) also wants it random; a dashboard presents what it is given.
// The token is never printed: mesh.Token redacts itself.
func relayToken(env string, serving bool) (mesh.Token, error) {
	const howTo = "make one with: openssl rand -hex 32"
	if env == "" {
		return "", model.Errorf(model.CodeMisconfigured, "relay", "", "--token-env is empty: name the environment variable holding the relay's token (%s; %s)", relay.DefaultTokenEnv, howTo)
	}
	t := mesh.Token(os.Getenv(env))
	if !t.Set() {
		if serving {
			return "", model.Errorf(model.CodeMisconfigured, "relay", "", "$%s is empty or unset: the relay answers only requests that present its token (%s, and give the dashboards the same)", env, howTo)
		}
		return "", fmt.Errorf("$%s is empty or unset: set it to the relay's token (the one the relay was started with)", env)
	}
	if serving {
		if err := t.CheckStrength(); err != nil {
			return "", model.Errorf(model.CodeMisconfigured, "relay", "", "$%s: %v", env, err)
		}
	}
	return t, nil
}

// envName is what relay_token_env may hold: a variable's name in
// capitals, as every claimdeck variable is. A token pasted there instead
// (openssl's hex is lower case) is refused before config show prints it.
var envName = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)

// relayProblems checks a source's relay settings at configuration load:
// the address as relay.Wrap will read it, and the token variable's name
// (never its value, nor the value of a token pasted in its place).
func (s SourceConfig) relayProblems(where string) []string {
	if s.Relay == "" {
		return nil
	}
	var out []string
	where = fmt.Sprintf("%s (%s)", where, s.Name)
	if err := relay.CheckAddr(s.Relay); err != nil {
		out = append(out, where+": relay: "+err.Error())
	}
	if !envName.MatchString(s.RelayTokenEnv) {
		out = append(out, where+": relay_token_env is not an environment variable's name in capitals (want e.g. "+relay.DefaultTokenEnv+"; the token itself goes in that variable, never in the file)")
	}
	return out
}

// openForHub opens every source (or --source) as a hub reads it: through
// the relay its configuration names, if any; every write still goes to
// the source itself. A relayed source whose token variable is empty
// refuses the command, naming the variable.
func (a *app) openForHub(ctx context.Context) ([]sources.Source, error) {
	tokens := map[string]mesh.Token{}
	for _, sc := range a.cfg.Sources {
		if sc.Relay == "" || (a.sourceName != "" && sc.Name != a.sourceName) {
			continue
		}
		t, err := relayToken(sc.RelayTokenEnv, false)
		if err != nil {
			return nil, model.Errorf(model.CodeMisconfigured, "relay", "", "source %s reads through the relay at %s: %v", sc.Name, model.RedactURL(sc.Relay), err)
		}
		tokens[sc.Name] = t
	}
	srcs, err := a.openAll(ctx)
	if err != nil {
		return nil, err
	}
	for i, src := range srcs {
		t, relayed := tokens[src.Name()]
		if _, broken := src.(unavailable); !relayed || broken {
			continue
		}
		sc, _ := pickSource(a.cfg, src.Name())
		w, err := relay.Wrap(src, sc.Relay, t, sc.RelayTokenEnv)
		if err != nil { // checked at load; kept for a caller that did not load
			src.Close()
			srcs[i] = unavailable{name: sc.Name, err: model.Wrap(model.CodeMisconfigured, "relay", "", err)}
			continue
		}
		srcs[i] = w
	}
	return srcs, nil
}

// diagnoseRelay is the doctor's check of a source's relay: it answers
// GET /v1/sources, accepts the token, and reads a source of this name
// well; the line says so, with the read's status and time.
func diagnoseRelay(ctx context.Context, sc SourceConfig, r *sourceReport) {
	detail, err := relayLine(ctx, sc)
	if !r.add("relay", err, detail) {
		r.OK = false
	}
}

func relayLine(ctx context.Context, sc SourceConfig) (string, error) {
	at := model.RedactURL(sc.Relay)
	t, err := relayToken(sc.RelayTokenEnv, false)
	if err != nil {
		return "", err
	}
	client, err := relay.Wrap(nil, sc.Relay, t, sc.RelayTokenEnv)
	if err != nil {
		return "", err
	}
	views, err := client.Sources(ctx)
	if err != nil {
		return "", err
	}
	names := []string{}
	for _, v := range views {
		if v.Name != sc.Name {
			names = append(names, v.Name)
			continue
		}
		read := fmt.Sprintf("reads %s: %s, %d tasks", sc.Name, v.Status, v.Tasks)
		if v.Error != "" {
			read += " (" + model.Redact(v.Error) + ")"
		}
		if v.Updated.IsZero() {
			read += "; never read yet"
		} else {
			read += "; last read " + v.Updated.UTC().Format(time.RFC3339)
		}
		if v.Lagging {
			read += "; its reads lag (no answer from the source for three poll intervals)"
		}
		if v.Status != hub.StatusOK.String() || v.Lagging {
			return "", fmt.Errorf("%s is reachable and accepted the token, but %s", at, read)
		}
		return fmt.Sprintf("%s is reachable, accepted the token in $%s, %s", at, sc.RelayTokenEnv, read), nil
	}
	return "", fmt.Errorf("%s is reachable and accepted the token, but reads no source named %s (it reads %q): start it with the same configuration", at, sc.Name, names)
}
