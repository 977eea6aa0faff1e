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
own SQL keeps working. Running it twice is harmless.`,
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
			return a.out().json(map[string]any{"ok": true, "file": a.cfg.file, "config": showable(reflect.ValueOf(redacted(a.cfg)))})
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

// redacted copies the configuration with every secret replaced: tokens,
// and the password inside a DSN.
func redacted(c *Config) *Config {
	out := *c
	out.Sources = make([]SourceConfig, len(c.Sources))
	for i, s := range c.Sources {
		if s.Token != "" {
			s.Token = "[redacted]"
		}
		if s.DSN != "" {
			s.DSN = redactDSN(s.DSN)
		}
		out.Sources[i] = s
	}
	return &out
}

// redactDSN hides the password of a URL or key=value DSN.
func redactDSN(dsn string) string {
	if i := strings.Index(dsn, "://"); i >= 0 {
		rest := dsn[i+3:]
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			creds := rest[:at]
			if c := strings.IndexByte(creds, ':'); c >= 0 {
				return dsn[:i+3] + creds[:c] + ":[redacted]" + rest[at:]
			}
		}
	}
	fields := strings.Fields(dsn)
	for i, f := range fields {
		if strings.HasPrefix(strings.ToLower(f), "password=") {
			fields[i] = "password=[redacted]"
		}
	}
	if strings.Contains(dsn, "=") && !strings.Contains(dsn, "://") {
		return strings.Join(fields, " ")
	}
	return dsn
}
