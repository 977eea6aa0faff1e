package mesh

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/claimdeck/claimdeck/sources"
)

// A registry or sweep record planted as a FIFO or a link is refused at
// once, naming the file, and a private file behind a link is never read.
func TestPlantedMeshFilesAreRefusedNamingThem(t *testing.T) {
	dir := t.TempDir()
	private := filepath.Join(dir, "private.json")
	if err := os.WriteFile(private, []byte(`{"nodes": {"A": {"token": "PRIVATE-TOKEN"`), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(private, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want error
	}{{fifo, sources.ErrSharedNotRegular}, {link, sources.ErrSharedLink}} {
		_, _, err := LoadRegistry(c.path)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), "mesh registry "+c.path) || strings.Contains(err.Error(), "PRIVATE") {
			t.Errorf("registry %s: %v, want %v naming it", c.path, err, c.want)
		}
		_, err = OpenRecord(c.path)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), "sweep record "+c.path) {
			t.Errorf("sweep record %s: %v, want %v naming it", c.path, err, c.want)
		}
	}
	bad := filepath.Join(dir, "record.json")
	if err := os.WriteFile(bad, []byte(`{"PRIVATE-KEY": "x"`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenRecord(bad); err == nil || strings.Contains(err.Error(), "PRIVATE") || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("a torn sweep record: %v, want the line and no quote", err)
	}
}
