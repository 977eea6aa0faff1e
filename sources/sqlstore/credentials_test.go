package sqlstore

import (
	"context"
	"errors"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// immutable makes path unwritable even by root for the rest of the test,
// or skips where chattr is not allowed.
func immutable(t *testing.T, path string) {
	t.Helper()
	if out, err := exec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
		t.Skipf("chattr +i is not available here: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("chattr", "-i", path).Run() })
}

// Credentials the server refuses, and a database that is not there, are
// MISCONFIGURED from a real PostgreSQL: a retry cannot fix them.
func TestRefusedCredentialsAreMisconfigured(t *testing.T) {
	base, err := url.Parse(pgDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ what, user, db, says string }{
		{"a role the server does not know", "no_such_role_cd", "postgres", sources.ErrCredentials.Error()},
		{"a database that does not exist", "postgres", "no_such_db_cd", "does not exist"},
	} {
		u := *base
		u.User = url.UserPassword(c.user, "hunter2-secret")
		u.Path = "/" + c.db
		_, err := Open(context.Background(), Config{Name: "gov", Driver: "postgres", DSN: u.String(), Table: freshTable()})
		if model.CodeOf(err) != model.CodeMisconfigured || !strings.Contains(err.Error(), c.says) ||
			errors.Is(err, sources.ErrCredentials) != (c.user != "postgres") {
			t.Errorf("%s: %v, want MISCONFIGURED saying %q", c.what, err, c.says)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2-secret") {
			t.Errorf("%s: the error shows the password: %v", c.what, err)
		}
	}
}

// A SQLite file nobody may write is read (list works) and refuses writes
// as MISCONFIGURED. The file is made immutable (chattr +i), which holds
// even for root.
func TestImmutableSQLiteFileIsReadableAndMisconfiguredForWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "queue.db")
	s := openSQLite(t, Config{Path: path, Create: true})
	task, err := s.Create(context.Background(), sources.NewTask{Title: "design-vpc-module"})
	if err != nil {
		t.Fatal(err)
	}
	created := task.ID
	s.Close()
	immutable(t, path)
	ro, err := Open(context.Background(), Config{Name: "local", Driver: "sqlite", Path: path, Create: true})
	if err != nil {
		t.Fatalf("open a read-only file: %v", err)
	}
	defer ro.Close()
	d, err := ro.Poll(context.Background(), "")
	if err != nil || len(d.Tasks) != 1 || d.Tasks[0].ID != created {
		t.Fatalf("list a read-only file: %v %+v", err, d.Tasks)
	}
	_, err = ro.Claim(context.Background(), created, sources.ClaimRequest{Agent: "agent-1"})
	if model.CodeOf(err) != model.CodeMisconfigured {
		t.Fatalf("claim on a read-only file: %v, want MISCONFIGURED", err)
	}
}
