package sources

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestReadSharedRefusesWhatCouldHangOrRedirect(t *testing.T) {
	dir := t.TempDir()
	private := filepath.Join(dir, "private")
	if err := os.WriteFile(private, []byte("SECRET-CONTENT"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(private, link); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, 101), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path string
		follow     bool
		want       error
		says       string
	}{
		{"a FIFO answers at once and is refused", fifo, false, ErrSharedNotRegular, "named pipe"},
		{"a link to a private file is not followed", link, false, ErrSharedLink, "symbolic link"},
		{"a link to /dev/zero is not followed", zero, false, ErrSharedLink, "symbolic link"},
		{"/dev/zero through a followed link is not a regular file", zero, true, ErrSharedNotRegular, "a device"},
		{"a directory is not a regular file", dir, false, ErrSharedNotRegular, "a directory"},
		{"a file over the limit is refused, not cut", big, false, ErrSharedTooLarge, "101 bytes"},
		{"a missing file is fs.ErrNotExist", filepath.Join(dir, "none"), false, fs.ErrNotExist, "does not exist"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := ReadShared(c.path, SharedRead{What: "tasks file", Limit: 100, FollowLinks: c.follow})
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			msg := err.Error()
			if !strings.Contains(msg, c.path) || !strings.Contains(msg, "tasks file") || !strings.Contains(msg, c.says) {
				t.Errorf("%q should name the tasks file %s and say %q", msg, c.path, c.says)
			}
			if strings.Contains(msg, "SECRET") {
				t.Errorf("the error quotes the file: %q", msg)
			}
		})
	}
	data, fi, err := ReadShared(link, SharedRead{What: "token file", Limit: 100, FollowLinks: true})
	if err != nil || string(data) != "SECRET-CONTENT" || !fi.Mode().IsRegular() {
		t.Fatalf("a followed link to a regular file: %q, %v", data, err)
	}
	data, _, err = ReadShared(big, SharedRead{What: "x", Limit: 101})
	if err != nil || len(data) != 101 {
		t.Fatalf("a file of exactly the limit: %d bytes, %v", len(data), err)
	}
}

// FuzzContentProblem holds that the description of a parse error never
// repeats the document: a secret anywhere in it stays out of the message.
func FuzzContentProblem(f *testing.F) {
	for _, s := range []string{"[{\"id\": 1}", "- id: [x", "key: `v`", "[1, 2, {]", "{\"a\": tru}", "- {id: a}\n- : :\n", "\"just a string\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		const secret = "Zq9SECRETzz"
		data := []byte(doc + "\n" + secret + ": [" + secret + "\n")
		var v []map[string]any
		errs := []error{json.Unmarshal(data, &v), yaml.Unmarshal(data, &v)}
		for _, err := range errs {
			if err == nil {
				continue
			}
			if msg := ContentProblem(err, data); strings.Contains(msg, secret[:4]) {
				t.Fatalf("%q quotes the document", msg)
			}
		}
	})
}

func TestTheJournalIsNeverOpenedThroughALinkNorInADirectoryOthersCanWrite(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "bashrc")
	if err := os.WriteFile(target, []byte("# rc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "audit.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenJournal(link); !errors.Is(err, ErrSharedLink) || !strings.Contains(err.Error(), link) {
		t.Fatalf("a linked journal: %v", err)
	}
	if data, _ := os.ReadFile(target); string(data) != "# rc\n" {
		t.Fatalf("written through the link: %q", data)
	}
	open := t.TempDir()
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenJournal(filepath.Join(open, "audit.jsonl")); err == nil || !strings.Contains(err.Error(), "can be written by others") {
		t.Fatalf("a journal in a 0777 directory: %v", err)
	}
	j, err := OpenJournal(filepath.Join(dir, "mine.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	j.Close()
	if fi, _ := os.Stat(filepath.Join(dir, "mine.jsonl")); fi.Mode().Perm() != 0o600 {
		t.Fatalf("a new journal is %v, want 0600", fi.Mode().Perm())
	}
}
