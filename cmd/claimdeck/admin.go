package main

import (
	"os"
	"reflect"
	"strings"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/sqlstore"
)

func (a *app) migrateCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Add claimdeck's lease columns, audit table and triggers to a SQL source",
		Long: `migrate prepares a seed 003 governance_tasks table for the full lease
protocol: lock token, lease expiry, heartbeat, holder kind, run id,
reservation, version and updated-at columns, an audit table, and triggers
that version every change (PostgreSQL also NOTIFYs listeners). The seed's
own SQL keeps working. Running it twice is harmless.

With --create, a database without the table (a team's first PostgreSQL)
gets seed 003's governance_tasks table made first, then migrated.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sc, err := pickSource(a.cfg, a.sourceName)
			if err != nil {
				return err
			}
			if sc.Kind != "sqlite" && sc.Kind != "postgres" {
				return model.Errorf(model.CodeMisconfigured, "migrate", "", "source %s is %s: only SQL sources are migrated", sc.Name, sc.Kind)
			}
			if a.cfg.readOnly(sc.Name) {
				return model.Errorf(model.CodeMisconfigured, "migrate", "", "source %q is read-only", sc.Name)
			}
			sc.makeTable = a.createFlag
			src, err := openSource(cmd.Context(), a.cfg, sc, true)
			if err != nil {
				return err
			}
			defer src.Close()
			store := src.(*sqlstore.Store)
			if err := store.Migrate(cmd.Context()); err != nil {
				return err
			}
			return a.out().json(map[string]any{"ok": true, "source": sc.Name, "migrated": store.Migrated()})
		},
	}
}

func (a *app) configCommand() *cobra.Command {
	cfg := &cobra.Command{Use: "config", Short: "Show the configuration"}
	cfg.AddCommand(&cobra.Command{
		Use:   "show",
		Short: "Print the configuration in effect, secrets redacted",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return a.out().json(map[string]any{"ok": true, "file": a.cfg.file, "config": redacted(a.cfg)})
		},
	})
	cfg.AddCommand(&cobra.Command{
		Use:   "path",
		Short: "Print where the configuration file is looked for",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := os.Stat(configPath())
			return a.out().json(map[string]any{"ok": true, "path": configPath(), "exists": err == nil})
		},
	})
	return cfg
}

// redacted is the configuration as `config show` prints it (showable) with
// every secret hidden: a field named like a secret (token, password, …)
// entirely, and every other string through model.Redact (DSN passwords,
// URL userinfo, token query parameters), so a field added later is
// covered too.
func redacted(c *Config) any {
	return redactValue("", showable(reflect.ValueOf(c)))
}

func redactValue(key string, v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = redactValue(k, e)
		}
	case []any:
		for i, e := range x {
			x[i] = redactValue(key, e)
		}
	case map[string]string:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = redactValue(k, e)
		}
		return out
	case string:
		if x != "" && model.SecretName(key) {
			return model.Redacted
		}
		if l := strings.ToLower(x); strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") {
			return model.RedactURL(x) // a webhook's query and path may be its credential
		}
		return model.Redact(x)
	}
	return v
}
