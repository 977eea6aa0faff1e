package sqlstore

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

func TestDSNThatDoesNotConnect(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	_, err := Open(ctx, Config{Name: "gov", Driver: "postgres", DSN: "postgres://agent:s3cr3t-pw@127.0.0.1:1/queue?connect_timeout=2"})
	if err == nil {
		t.Fatal("opening a DSN nobody listens on succeeded")
	}
	if model.CodeOf(err) != model.CodeAPIError || !strings.Contains(err.Error(), "gov") {
		t.Fatalf("unreachable database: %v, want API_ERROR naming the source", err)
	}
	if strings.Contains(err.Error(), "s3cr3t-pw") {
		t.Fatalf("the password leaked into the error: %v", err)
	}
	_, err = Open(ctx, Config{Name: "gov", Driver: "postgres", DSN: "postgres://agent:s3cr3t-pw@[::1:5432/x"})
	if model.CodeOf(err) != model.CodeMisconfigured || strings.Contains(err.Error(), "s3cr3t-pw") {
		t.Fatalf("a DSN that does not parse: %v, want MISCONFIGURED without the password", err)
	}
}

func TestBadConfig(t *testing.T) {
	ctx := context.Background()
	for _, cfg := range []Config{
		{Driver: "mysql", Path: "x"},
		{Driver: "sqlite"},
		{Driver: "sqlite", Path: t.TempDir() + "/q.db", Table: "tasks; DROP TABLE users"},
		{Driver: "sqlite", Path: t.TempDir() + "/q.db", Table: "a.b.c"},
		{Driver: "sqlite", Path: t.TempDir() + "/q.db"}, // the table does not exist and Create is off
	} {
		if _, err := Open(ctx, cfg); model.CodeOf(err) != model.CodeMisconfigured {
			t.Errorf("Open(%+v) = %v, want MISCONFIGURED", cfg, err)
		}
	}
}

func TestTableWithoutSeedColumns(t *testing.T) {
	path := t.TempDir() + "/q.db"
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE governance_tasks (id TEXT PRIMARY KEY, title TEXT)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = Open(context.Background(), Config{Driver: "sqlite", Path: path})
	if model.CodeOf(err) != model.CodeMisconfigured {
		t.Fatalf("a table without seed 003's columns: %v, want MISCONFIGURED", err)
	}
	for _, col := range []string{"priority", "status", "assigned_worker", "created_at", "started_at"} {
		if !strings.Contains(err.Error(), col) {
			t.Errorf("the error does not name the missing column %s: %v", col, err)
		}
	}
}

func TestReadOnlyDatabaseUser(t *testing.T) {
	owner := openPG(t, Config{Create: true})
	defer owner.Close()
	ctx := context.Background()
	task, err := owner.Create(ctx, sources.NewTask{Title: "look, don't touch"})
	if err != nil {
		t.Fatal(err)
	}
	role := "reader_" + strings.TrimPrefix(owner.plainTable, "tasks_")
	for _, stmt := range []string{
		"CREATE ROLE " + role + " LOGIN",
		"GRANT SELECT ON " + owner.table + ", claimdeck_audit, claimdeck_tombstones TO " + role,
	} {
		if _, err := owner.db.exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_, _ = owner.db.exec(ctx, "REVOKE ALL ON "+owner.table+", claimdeck_audit, claimdeck_tombstones FROM "+role)
		_, _ = owner.db.exec(ctx, "DROP ROLE "+role)
	})
	dsn := strings.Replace(owner.cfg.DSN, "postgres@", role+"@", 1)
	ro, err := Open(ctx, Config{Name: "ro", Driver: "postgres", DSN: dsn, Table: owner.plainTable})
	if err != nil {
		t.Fatalf("a read-only user can still open and read: %v", err)
	}
	defer ro.Close()
	if d, err := ro.Poll(ctx, ""); err != nil || len(d.Tasks) != 1 {
		t.Fatalf("read-only poll: %d tasks, %v", len(d.Tasks), err)
	}
	_, err = ro.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "a"})
	if model.CodeOf(err) != model.CodeMisconfigured || !strings.Contains(err.Error(), "refuses writes") {
		t.Fatalf("claim as a read-only user: %v, want MISCONFIGURED saying writes are refused", err)
	}
}
