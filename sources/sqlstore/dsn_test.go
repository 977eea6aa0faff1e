package sqlstore

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// A password with an unencoded '@' is refused where the DSN is parsed, as
// MISCONFIGURED naming the fix: dialled, its tail became a host name that
// every connect error printed.
func TestAnUnencodedAtInADSNPasswordIsRefusedUnshown(t *testing.T) {
	for _, dsn := range []string{
		"postgres://app:pa@ss@word@ZZ@127.0.0.1:1/q?connect_timeout=2",
		"postgres://app:pa@ssZZ@127.0.0.1:1,127.0.0.1:2/q?connect_timeout=2",
	} {
		_, err := Open(context.Background(), Config{Name: "gov", Driver: "postgres", DSN: dsn, Table: "t"})
		if model.CodeOf(err) != model.CodeMisconfigured || !strings.Contains(err.Error(), "%40") || strings.Contains(err.Error(), "ZZ") || strings.Contains(err.Error(), "ss@") {
			t.Errorf("%s: %v, want MISCONFIGURED naming %%40 and no part of the password", dsn, err)
		}
	}
}

// A weak password does not garble a connect error: the error keeps its
// words, because redaction reads the DSN's structure instead of
// searching the message for the password.
func TestAWeakPasswordDoesNotGarbleConnectErrors(t *testing.T) {
	_, err := Open(context.Background(), Config{Name: "gov", Driver: "postgres", DSN: "postgres://app:e@127.0.0.1:1/q?connect_timeout=2", Table: "t"})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1") || !strings.Contains(err.Error(), "refused") || !strings.Contains(err.Error(), "failed") {
		t.Fatalf("the connect error lost its words: %v", err)
	}
}

// A NUL in a task id is the caller's mistake, answered at once: PostgreSQL
// cannot hold one, and retrying cannot fix it.
func TestANulInATaskIDIsMisconfiguredOnEveryOperation(t *testing.T) {
	for name, open := range map[string]func(testing.TB, Config) *Store{"sqlite": openSQLite, "postgres": openPG} {
		t.Run(name, func(t *testing.T) {
			s := open(t, Config{Create: true})
			defer s.Close()
			ctx := context.Background()
			id := "T-1\x00; DROP"
			_, getErr := s.Get(ctx, id)
			_, claimErr := s.Claim(ctx, id, sources.ClaimRequest{Agent: "a"})
			_, finErr := s.Finish(ctx, id, "3669b0a9-7c1d-4f29-9149-c92b531e5c8e", sources.Outcome{State: model.StateDone})
			for op, err := range map[string]error{"get": getErr, "claim": claimErr, "finish": finErr} {
				if model.CodeOf(err) != model.CodeMisconfigured || name == "postgres" && !strings.Contains(err.Error(), "NUL") {
					t.Errorf("%s of an id with a NUL: %v, want MISCONFIGURED naming the NUL", op, err)
				}
			}
		})
	}
}

// A role without privileges on the table hears "permission denied", not
// that the table does not exist: PostgreSQL hides the columns of a table
// the role may not read.
func TestARoleWithoutPrivilegeIsToldPermissionDenied(t *testing.T) {
	owner := openPG(t, Config{Create: true})
	defer owner.Close()
	ctx := context.Background()
	role := fmt.Sprintf("cd_noaccess_%d", os.Getpid())
	if _, err := owner.db.exec(ctx, "DROP ROLE IF EXISTS "+role); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.db.exec(ctx, "CREATE ROLE "+role+" LOGIN"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = owner.db.exec(ctx, "DROP ROLE IF EXISTS "+role) })
	u, err := url.Parse(pgDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	_, err = Open(ctx, Config{Name: "gov", Driver: "postgres", DSN: u.String(), Table: owner.plainTable})
	if model.CodeOf(err) != model.CodeMisconfigured || !strings.Contains(err.Error(), "permission denied") || strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("open as a role without privileges: %v", err)
	}
}
