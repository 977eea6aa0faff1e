package sqlstore

import (
	"context"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/model"
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
