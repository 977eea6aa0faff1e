package ntask

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/model"
)

func TestLockStateWrittenPrivatelyAndReadBack(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	want := LockState{TaskID: "TASK-42", RunID: "run-1", LockToken: "1b4e28ba-2fa1-11d2-883f-0016d3cca427", LockExpires: "2026-02-18T10:15:00Z", PageID: "abc-123"}
	if err := SaveState(want); err != nil {
		t.Fatal(err)
	}
	path, _ := StatePath()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("the lock state has mode %v, want 0600", fi.Mode().Perm())
	}
	if di, _ := os.Stat(filepath.Dir(path)); di.Mode().Perm() != 0o700 {
		t.Fatalf("the state directory has mode %v, want 0700", di.Mode().Perm())
	}
	got, err := LoadState()
	if err != nil || got != want {
		t.Fatalf("read back %+v, %v; want %+v", got, err, want)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Fatalf("the write left %d files behind, want the state alone", len(entries))
	}
	if err := ClearState(); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadState(); err != ErrNoState {
		t.Fatalf("after clear: %v, want %v", err, ErrNoState)
	}
}

// A link at the state's name is not followed, and a file larger than any
// state is not read whole: both are MISCONFIGURED, naming what to do.
func TestLockStateRefusesLinksAndHugeFiles(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	dir := filepath.Join(home, ".openclaw", "state")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(home, "other.json")
	if err := os.WriteFile(elsewhere, []byte(`{"task_id":"TASK-1","lock_token":"1b4e28ba-2fa1-11d2-883f-0016d3cca427"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "current-task.json")
	if err := os.Symlink(elsewhere, path); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadState(); model.CodeOf(err) != model.CodeMisconfigured || !strings.Contains(err.Error(), "link") {
		t.Fatalf("a linked state: %v, want MISCONFIGURED naming the link", err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	huge := append([]byte(`{"task_id":"TASK-1","lock_token":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","x":"`), bytes.Repeat([]byte("a"), MaxStateSize)...)
	if err := os.WriteFile(path, append(huge, `"}`...), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadState(); model.CodeOf(err) != model.CodeMisconfigured || !strings.Contains(err.Error(), "larger") {
		t.Fatalf("a huge state: %v, want MISCONFIGURED saying it is too large", err)
	}
}

func TestParseStateRefusals(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{``, "not a JSON object"},
		{`[]`, "not a JSON object"},
		{`{"task_id":"","lock_token":"1b4e28ba-2fa1-11d2-883f-0016d3cca427"}`, "task_id is empty"},
		{`{"task_id":"TASK-1","lock_token":"stolen"}`, "lock_token is not a UUID"},
		{`{"task_id":"TASK-1\u0000","lock_token":"1b4e28ba-2fa1-11d2-883f-0016d3cca427"}`, "NUL"},
		{`{"task_id":"TASK-1","lock_token":"1b4e28ba-2fa1-11d2-883f-0016d3cca427"} {}`, "more than one"},
	} {
		if _, err := ParseState([]byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseState(%q) = %v, want an error saying %q", c.in, err, c.want)
		}
	}
}

func FuzzParseState(f *testing.F) {
	f.Add([]byte(`{"task_id":"TASK-42","run_id":"r","lock_token":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","lock_expires":"2026-02-18T10:15:00Z","page_id":"p"}`))
	f.Add([]byte(`{"task_id":"TASK-42"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseState(data)
		if err != nil {
			if s != (LockState{}) {
				t.Fatalf("a refused state came back with fields: %+v", s)
			}
			return
		}
		if s.TaskID == "" || s.LockToken == "" {
			t.Fatalf("an accepted state without a task or token: %+v", s)
		}
	})
}
