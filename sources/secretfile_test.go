package sources_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/sources"
)

// A secret file is read only while its owner alone may read it: 0640 and
// 0604 are refused naming the file and chmod 600, 0600 and 0400 are read,
// less one trailing newline; no refusal quotes the secret.
func TestReadSecretIsStrictAboutWhoMayRead(t *testing.T) {
	const secret = "postgres://app:s3cr3t-pw@db.internal/queue"
	dir := t.TempDir()
	path := filepath.Join(dir, "dsn")
	for _, mode := range []os.FileMode{0o640, 0o604, 0o644, 0o660} {
		if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		got, err := sources.ReadSecret("dsn_file", path)
		if !errors.Is(err, sources.ErrSecretExposed) || got != "" {
			t.Fatalf("mode %#o: read %q, %v; want refused", mode, got, err)
		}
		if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, "chmod 600") || strings.Contains(msg, "s3cr3t") {
			t.Fatalf("mode %#o: the refusal %q should name the file and chmod 600, never the secret", mode, msg)
		}
	}
	for _, mode := range []os.FileMode{0o600, 0o400} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		if got, err := sources.ReadSecret("dsn_file", path); err != nil || got != secret {
			t.Fatalf("mode %#o: read %q, %v; want the secret without its newline", mode, got, err)
		}
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := sources.ReadSecret("token_file", empty); err == nil || !strings.Contains(err.Error(), "is empty") {
		t.Fatalf("an empty file: %v, want refused as empty", err)
	}
}
