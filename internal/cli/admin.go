package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/sqlstore"
)

func (a *app) migrateCommand() *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Add claimdeck's lease columns, audit table and triggers to a SQL source",
		Long: `migrate prepares a seed 003 governance_tasks table for the full lease
protocol: lock token, lease expiry, heartbeat, holder kind, run id,
reservation, version and updated-at columns, an audit table, and triggers
that version every change (PostgreSQL also NOTIFYs listeners). The seed's
own SQL keeps working. Running it twice is harmless. It prints what it
did: the columns it added and the statements it ran.

--dry-run prints the exact SQL it would run, as a script, and changes
nothing (a SQLite file is opened read-only).

With --create, a database without the table (a team's first PostgreSQL)
gets seed 003's governance_tasks table made first, then migrated.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			sc, err := cmdutil.PickSource(a.Cfg, a.SourceName)
			if err != nil {
				return err
			}
			if sc.Kind != "sqlite" && sc.Kind != "postgres" {
				return model.Errorf(model.CodeMisconfigured, "migrate", "", "source %s is %s: only SQL sources are migrated", sc.Name, sc.Kind)
			}
			if a.Cfg.ReadOnlyFor(sc.Name) && !dryRun {
				return model.Errorf(model.CodeMisconfigured, "migrate", "", "source %q is read-only", sc.Name)
			}
			plan, planErr := a.migrationPlan(ctx, sc)
			if dryRun {
				if planErr != nil {
					return planErr
				}
				_, err := io.WriteString(a.Stdout, migrationScript(sc, plan))
				return err
			}
			sc.MakeTable = a.CreateFlag
			src, err := cmdutil.OpenSource(ctx, a.Cfg, sc, true)
			if err != nil {
				return err
			}
			defer src.Close()
			store := sources.Origin(src).(*sqlstore.Store)
			ran, err := store.Apply(ctx, a.StderrProgress("migrate "+sc.Name))
			if err != nil {
				return err
			}
			applied := make([]string, len(ran.Statements))
			for i, st := range ran.Statements {
				applied[i] = strings.SplitN(st, "\n", 2)[0]
			}
			out := map[string]any{"ok": true, "source": sc.Name, "migrated": store.Migrated(),
				"statements": len(ran.Statements), "applied": applied}
			if planErr == nil {
				// What the table lacked before: Open may already have made
				// or migrated it (the embedded queue, --create).
				out["created_table"], out["added_columns"] = plan.CreateTable, plan.AddColumns
			}
			return a.Out().JSON(out)
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the SQL migrate would run, and change nothing")
	return cmd
}

// migrationPlan reads the source's schema, changing nothing, and returns
// what migrate would run (with --create, a missing table made first).
func (a *app) migrationPlan(ctx context.Context, sc cmdutil.SourceConfig) (sqlstore.Migration, error) {
	dsn := sc.DSN
	if sc.DSNEnv != "" {
		dsn = os.Getenv(sc.DSNEnv)
	}
	store, err := sqlstore.Open(ctx, sqlstore.Config{Name: sc.Name, Driver: sc.Kind, Path: cmdutil.Expand(sc.Path), DSN: dsn, Table: sc.Table, Inspect: true})
	if err != nil {
		return sqlstore.Migration{}, err
	}
	defer store.Close()
	return store.Plan(ctx, a.CreateFlag || (a.Cfg.Implicit && sc.Kind == "sqlite"))
}

// migrationScript is the plan as a SQL script for psql or sqlite3: the
// statements migrate runs, in one transaction.
func migrationScript(sc cmdutil.SourceConfig, m sqlstore.Migration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "-- claimdeck migrate --source %s (%s): %d statements, run in one transaction.\n", sc.Name, sc.Kind, len(m.Statements))
	if m.CreateTable {
		b.WriteString("-- Makes seed 003's table first (--create).\n")
	}
	if len(m.AddColumns) > 0 {
		fmt.Fprintf(&b, "-- Adds columns: %s.\n", strings.Join(m.AddColumns, ", "))
	} else {
		b.WriteString("-- Adds no columns: the table has them all; the rest is idempotent.\n")
	}
	b.WriteString("-- Dry run: nothing has been changed.\nBEGIN;\n\n")
	for _, st := range m.Statements {
		b.WriteString(st)
		b.WriteString(";\n\n")
	}
	b.WriteString("COMMIT;\n")
	return b.String()
}

func (a *app) configCommand() *cobra.Command {
	cfg := &cobra.Command{Use: "config", Short: "Show the configuration"}
	cfg.AddCommand(&cobra.Command{
		Use:   "show",
		Short: "Print the configuration in effect, secrets redacted",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return a.Out().JSON(map[string]any{"ok": true, "file": a.Cfg.File, "config": redacted(a.Cfg)})
		},
	})
	cfg.AddCommand(&cobra.Command{
		Use:   "path",
		Short: "Print where the configuration file is looked for",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := os.Stat(cmdutil.ConfigPath())
			return a.Out().JSON(map[string]any{"ok": true, "path": cmdutil.ConfigPath(), "exists": err == nil})
		},
	})
	return cfg
}

// redacted is the configuration as `config show` prints it (showable) with
// every secret hidden: a field named like a secret (token, password, …)
// entirely, and every other string through model.Redact (DSN passwords,
// URL userinfo, token query parameters), so a field added later is
// covered too.
func redacted(c *cmdutil.Config) any {
	return redactValue("", cmdutil.Showable(reflect.ValueOf(c)))
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
