package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/lockdir"
	"github.com/claimdeck/claimdeck/sources/sqlstore"
)

// openSource turns one configured source into a Source. Without create a
// missing SQLite file or lock directory is MISCONFIGURED: only migrate,
// --create, or a write to the embedded default queue makes one. A connect
// failure worth trying again (API_ERROR: refused, reset, timed out) is
// tried four times in all with backoff, as every idempotent call is.
func OpenSource(ctx context.Context, cfg *Config, sc SourceConfig, create bool) (sources.Source, error) {
	log, start := logOf(ctx), time.Now()
	log.Debug("opening source", "source", sc.Name, "kind", sc.Kind, "create", create)
	var src sources.Source
	var err error
	if sc.Kind == "notion" {
		src, err = openOnce(ctx, cfg, sc, create) // the Notion client retries within its own budget
	} else {
		src, err = Retrying(ctx, func() (sources.Source, error) { return openOnce(ctx, cfg, sc, create) })
	}
	if err != nil {
		log.Debug("source did not open", "source", sc.Name, "took", time.Since(start), "error", err)
		return nil, err
	}
	log.Debug("source open", "source", sc.Name, "took", time.Since(start))
	return sources.Follow(src, func(ctx context.Context, to string) (sources.Source, error) { return openMoved(ctx, cfg, to) }), nil
}

// openMoved opens the configured source a moved one names.
func openMoved(ctx context.Context, cfg *Config, name string) (sources.Source, error) {
	sc, err := PickSource(cfg, name)
	if err != nil {
		return nil, err
	}
	return OpenSource(ctx, cfg, sc, false)
}

func openOnce(ctx context.Context, cfg *Config, sc SourceConfig, create bool) (sources.Source, error) {
	switch sc.Kind {
	case "sqlite", "postgres":
		dsn, err := sc.secret("dsn", sc.DSN, sc.DSNEnv, sc.DSNFile)
		if err != nil {
			return nil, err
		}
		path := Expand(sc.Path)
		if sc.Kind == "sqlite" && cfg.Implicit {
			// The embedded queue lives in the data directory: this user's alone.
			if path == "" {
				return nil, NoHome("the embedded queue", "XDG_DATA_HOME", "a source")
			}
			if _, err := os.Stat(path); !create && errors.Is(err, os.ErrNotExist) {
				return notYetMade(ctx, cfg, sc)
			}
			if err := sources.PrivateDir("data directory", filepath.Dir(path)); err != nil {
				return nil, model.Wrap(model.CodeMisconfigured, "open", "", err)
			}
		}
		return sqlstore.Open(ctx, sqlstore.Config{
			Name: sc.Name, Driver: sc.Kind, Path: path, DSN: dsn, Table: sc.Table, Pool: sc.Pool,
			Lease: firstSet(sc.Lease, cfg.Lease), SeedTimeout: sc.SeedTimeout, Grace: cfg.Grace,
			// claimdeck's own table is made where it may create; a team's table
			// is changed only by `claimdeck migrate`.
			Create: (create && sc.Kind == "sqlite" && sc.Table == "") || sc.MakeTable, MustExist: !create,
			ListenPause: sc.ListenPause,
		})
	case "lockdir":
		// Seed 004's lease is an hour unless this source says otherwise.
		return lockdir.Open(lockdir.Config{Name: sc.Name, Path: Expand(sc.Path), TasksFile: Expand(sc.TasksFile), Lease: sc.Lease, MustExist: !create, Grace: cfg.Grace})
	case "notion":
		return openNotion(ctx, cfg, sc)
	}
	return nil, model.Errorf(model.CodeMisconfigured, "open", "", "source %s: kind %q is not available in this build", sc.Name, sc.Kind)
}

// notYetMade answers a read of the embedded queue before its first write
// made it: an empty queue, as an agent's first call expects, kept in a
// throwaway directory so the read still creates nothing where the queue
// will be. A configured path that does not exist stays MISCONFIGURED.
func notYetMade(ctx context.Context, cfg *Config, sc SourceConfig) (sources.Source, error) {
	dir, err := os.MkdirTemp("", "claimdeck-empty-")
	if err != nil {
		return nil, model.Wrap(model.CodeMisconfigured, "open", "", err)
	}
	src, err := sqlstore.Open(ctx, sqlstore.Config{Name: sc.Name, Driver: "sqlite", Path: filepath.Join(dir, "queue.db"),
		Lease: firstSet(sc.Lease, cfg.Lease), Grace: cfg.Grace, Create: true})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return emptyQueue{Source: src, dir: dir}, nil
}

// emptyQueue is the stand-in notYetMade opens; closing it removes it.
type emptyQueue struct {
	sources.Source
	dir string
}

func (q emptyQueue) Close() error {
	err := q.Source.Close()
	os.RemoveAll(q.dir)
	return err
}

func firstSet(ds ...time.Duration) time.Duration {
	for _, d := range ds {
		if d > 0 {
			return d
		}
	}
	return 0
}

// secret is a source's DSN or token (what): from the file named (read
// now, each time a source opens, so a running agent's next call picks up a
// new one), else the environment variable, else the configuration.
func (sc SourceConfig) secret(what, inline, env, file string) (string, error) {
	switch {
	case file != "":
		v, err := sources.ReadSecret(what+"_file", Expand(file))
		if err != nil {
			return "", model.Errorf(model.CodeMisconfigured, "open", "", "source %s: %v", sc.Name, err)
		}
		return v, nil
	case env != "":
		v := os.Getenv(env)
		if v == "" {
			return "", model.Errorf(model.CodeMisconfigured, "open", "", "source %s: $%s is empty", sc.Name, env)
		}
		return v, nil
	}
	return inline, nil
}

// secretProblems refuses a secret given two ways: which one counts would
// be a guess.
func (sc SourceConfig) secretProblems(where string) []string {
	var out []string
	if sc.DSNFile != "" && (sc.DSN != "" || sc.DSNEnv != "") {
		out = append(out, fmt.Sprintf("%s (%s): dsn_file with dsn or dsn_env: give the DSN one way", where, sc.Name))
	}
	if sc.TokenFile != "" && (sc.Token != "" || sc.TokenEnv != "") {
		out = append(out, fmt.Sprintf("%s (%s): token_file with token or token_env: give the token one way", where, sc.Name))
	}
	return out
}

// EnvDefaultSource names the source a command acts on when it names none,
// before the configuration's default_source: an agent's environment can
// pick one without a configuration of its own.
const EnvDefaultSource = "CLAIMDECK_DEFAULT_SOURCE"

// PickSource finds the source a command acts on: name (--source), else
// $CLAIMDECK_DEFAULT_SOURCE, else the configuration's default_source, else
// the only source. Every door picks through it, so adding a source to a
// configuration that names its default breaks no caller of the old one.
func PickSource(cfg *Config, name string) (SourceConfig, error) {
	return PickSourceBy(cfg, name, "--source")
}

// PickSourceBy is PickSource for a door whose caller names a source by
// given (ntask's $NTASK_SOURCE): the refusal says so.
func PickSourceBy(cfg *Config, name, given string) (SourceConfig, error) {
	from := given
	if name == "" {
		name, from = cfg.DefaultName()
	}
	if name == "" {
		if len(cfg.Sources) == 1 {
			return cfg.Sources[0], nil
		}
		names := make([]string, len(cfg.Sources))
		for i, s := range cfg.Sources {
			names[i] = s.Name
		}
		return SourceConfig{}, model.Errorf(model.CodeMisconfigured, "", "", "%d sources are configured (%s): choose one with %s, or name the one to use when none is given with $%s or default_source in the configuration",
			len(names), strings.Join(names, ", "), given, EnvDefaultSource)
	}
	for _, s := range cfg.Sources {
		if s.Name == name {
			return s, nil
		}
	}
	return SourceConfig{}, model.Errorf(model.CodeMisconfigured, "", "", "%s %q: no such source in the configuration", from, name)
}

// DefaultName is the source a command acts on when it names none, and
// where that name came from: $CLAIMDECK_DEFAULT_SOURCE, else
// default_source; "" when neither names one.
func (c *Config) DefaultName() (name, from string) {
	if name := strings.TrimSpace(os.Getenv(EnvDefaultSource)); name != "" {
		return name, "$" + EnvDefaultSource
	}
	if c.DefaultSource != "" {
		return c.DefaultSource, "default_source"
	}
	return "", ""
}

func (c *Config) ReadOnlyFor(source string) bool {
	if c.ReadOnly {
		return true
	}
	for _, s := range c.Sources {
		if s.Name == source {
			return s.ReadOnly
		}
	}
	return false
}
