package cli_test

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

// A team's first PostgreSQL: an empty database. migrate names what to do;
// migrate --create makes seed 003's table and the rest, and the seed's own
// SQL and claimdeck both work on it.
func TestMigrateCreateOnAnEmptyPostgresDatabase(t *testing.T) {
	fresh, psql := freshPGDatabase(t, "fresh")

	dir := t.TempDir()
	c := &cmdtest.CLI{T: t, Conf: filepath.Join(dir, "config.yaml"), Dir: dir}
	conf := fmt.Sprintf("actor: alice\naudit_log: %s/audit.jsonl\nsources:\n  - name: team\n    kind: postgres\n    dsn: %s\n", dir, fresh)
	if err := os.WriteFile(c.Conf, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := c.Run(3, "migrate"); !strings.Contains(r.Error.Message, "migrate --create") {
		t.Fatalf("migrate on an empty database does not say how to make the table: %s", r.Error.Message)
	}
	if got := psql(fresh, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"); got != "0" {
		t.Fatalf("a refused migrate made %s tables", got)
	}
	c.Run(0, "--create", "migrate")
	c.Run(0, "--create", "migrate") // harmless twice
	created := c.Run(0, "create", "--title", "first task on the team's database")
	psql(fresh, "UPDATE governance_tasks SET assigned_worker = 'claude-chat-7K9X', status = 'in_progress', started_at = NOW() WHERE id = '"+created.Task.PageID+"' AND status = 'pending'")
	got := c.Run(0, "get", "--task", created.Task.PageID)
	if got.Task.Status != "IN_PROGRESS" || got.Task.Agent != "claude-chat-7K9X" {
		t.Fatalf("the seed's claim on the created table reads as %+v", got.Task)
	}
}

// freshPGDatabase makes an empty database on the throwaway cluster,
// dropped with the test, and returns its DSN with a psql runner.
func freshPGDatabase(t *testing.T, name string) (string, func(dsn, q string) string) {
	dsn := cmdtest.PGTestDSN(t)
	psql := func(dsn, q string) string {
		t.Helper()
		out, err := exec.Command("psql", dsn, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", q).CombinedOutput()
		if err != nil {
			t.Fatalf("psql %s: %v\n%s", q, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	db := fmt.Sprintf("claimdeck_%s_%d", name, os.Getpid())
	psql(dsn, "CREATE DATABASE "+db)
	t.Cleanup(func() { psql(dsn, "DROP DATABASE "+db+" WITH (FORCE)") })
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + db
	return u.String(), psql
}
