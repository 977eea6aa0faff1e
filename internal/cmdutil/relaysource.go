package cmdutil

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/mesh"
	"github.com/claimdeck/claimdeck/sources/relay"
)

// relayToken is the relay's bearer token from $env. The relay itself
// (serving) also wants it random; a dashboard presents what it is given.
// The token is never printed: mesh.Token redacts itself.
func RelayToken(env string, serving bool) (mesh.Token, error) {
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

// relayToken is the token a dashboard presents to sc's relay:
// relay_token_file's (read now), else relay_token_env's.
func (sc SourceConfig) relayToken() (mesh.Token, error) {
	if sc.RelayTokenFile == "" {
		return RelayToken(sc.RelayTokenEnv, false)
	}
	v, err := sources.ReadSecret("relay_token_file", Expand(sc.RelayTokenFile))
	return mesh.Token(v), err
}

// relayTokenAt is where relayToken reads it, as relay.Wrap takes it: the
// variable's name, or "file PATH".
func (sc SourceConfig) relayTokenAt() string {
	if sc.RelayTokenFile == "" {
		return sc.RelayTokenEnv
	}
	return "file " + Expand(sc.RelayTokenFile)
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
	if s.RelayTokenFile != "" {
		if s.RelayTokenEnv != "" {
			out = append(out, where+": relay_token_file with relay_token_env: give the relay's token one way")
		}
	} else if !envName.MatchString(s.RelayTokenEnv) {
		out = append(out, where+": relay_token_env is not an environment variable's name in capitals (want e.g. "+relay.DefaultTokenEnv+"; the token itself goes in that variable, never in the file)")
	}
	return out
}

// openForHub opens every source (or --source) as a hub reads it: through
// the relay its configuration names, if any; every write still goes to
// the source itself. A relayed source whose token variable is empty
// refuses the command, naming the variable.
func (a *Env) OpenForHub(ctx context.Context) ([]sources.Source, error) {
	tokens := map[string]mesh.Token{}
	for _, sc := range a.Cfg.Sources {
		if sc.Relay == "" || (a.SourceName != "" && sc.Name != a.SourceName) {
			continue
		}
		t, err := sc.relayToken()
		if err != nil {
			return nil, model.Errorf(model.CodeMisconfigured, "relay", "", "source %s reads through the relay at %s: %v", sc.Name, model.RedactURL(sc.Relay), err)
		}
		tokens[sc.Name] = t
	}
	srcs, err := a.OpenAll(ctx)
	if err != nil {
		return nil, err
	}
	for i, src := range srcs {
		t, relayed := tokens[src.Name()]
		if _, broken := src.(unavailable); !relayed || broken {
			continue
		}
		sc, _ := PickSource(a.Cfg, src.Name())
		w, err := relay.Wrap(src, sc.Relay, t, sc.relayTokenAt())
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
func DiagnoseRelay(ctx context.Context, sc SourceConfig, r *SourceReport) {
	detail, err := relayLine(ctx, sc)
	if !r.add("relay", err, detail) {
		r.OK = false
	}
}

func relayLine(ctx context.Context, sc SourceConfig) (string, error) {
	at := model.RedactURL(sc.Relay)
	t, err := sc.relayToken()
	if err != nil {
		return "", err
	}
	client, err := relay.Wrap(nil, sc.Relay, t, sc.relayTokenAt())
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
		return fmt.Sprintf("%s is reachable, accepted the token in %s, %s", at, relay.TokenAt(sc.relayTokenAt()), read), nil
	}
	return "", fmt.Errorf("%s is reachable and accepted the token, but reads no source named %s (it reads %q): start it with the same configuration", at, sc.Name, names)
}
