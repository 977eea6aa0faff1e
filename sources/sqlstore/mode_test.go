package sqlstore

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/claimdeck/claimdeck/sources"
)

// The embedded queue holds every task and lock token: made in an existing
// directory, under the usual 022 umask, it and its WAL are 0600.
func TestASQLiteFileIsMadePrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "queue.db")
	st, err := Open(context.Background(), Config{Name: "local", Driver: "sqlite", Path: path, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Create(context.Background(), sources.NewTask{Title: "x"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s is %v, want 0600", filepath.Base(p), fi.Mode().Perm())
		}
	}
}
