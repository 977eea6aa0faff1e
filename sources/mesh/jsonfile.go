package mesh

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/claimdeck/claimdeck/sources"
)

// stateFile is a small JSON file several claimdeck processes share — a
// cron `sweep`, a dashboard, `node watch` — read whole, changed under an
// exclusive flock of its ".lock" sibling, and replaced atomically, so a
// crash mid-write leaves the old file rather than a truncated one.
type stateFile struct {
	path  string
	what  string // for errors: "sweep record", "node health record"
	limit int64
}

// load decodes the file into v; a missing file leaves v as it is. A
// corrupt file is an error rather than a reason to start over.
func (f stateFile) load(v any) error {
	data, _, err := sources.ReadShared(f.path, sources.SharedRead{What: f.what, Limit: f.limit})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s %s: %s", f.what, f.path, sources.ContentProblem(err, data))
	}
	return nil
}

// hold takes the file across processes; it blocks while another process
// holds it, and release lets it go.
func (f stateFile) hold() (release func(), err error) {
	lf, err := os.OpenFile(f.path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%s lock: %w", f.what, err)
	}
	for {
		err = syscall.Flock(int(lf.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		lf.Close()
		return nil, fmt.Errorf("%s lock: %w", f.what, err)
	}
	return func() { lf.Close() }, nil // closing drops the flock
}

// save replaces the file with v, 0600: it names nodes and tasks, never
// tokens, but it is nobody else's business either.
func (f stateFile) save(v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.path), ".state-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), f.path)
}
