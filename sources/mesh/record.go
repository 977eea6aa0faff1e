package mesh

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/claimdeck/claimdeck/sources"
)

// recordRetention is how long a sent notification is remembered. A claim
// stuck for a month has been dealt with by a human long since.
const recordRetention = 30 * 24 * time.Hour

// maxRecordSize bounds the sweep record: a line per notified task and level.
const maxRecordSize = 16 << 20

// Record remembers which notifications were sent, so that a sweep run twice
// (or by cron every few minutes) notifies each task once per level. With a
// path it survives restarts; the file holds task references and times,
// never tokens.
type Record struct {
	path string
	mu   sync.Mutex
	sent map[string]time.Time
}

// OpenRecord loads the record at path; a missing file is an empty record and
// an empty path keeps the record in memory only. A corrupt file is an error
// rather than a reason to notify everything again.
func OpenRecord(path string) (*Record, error) {
	r := &Record{path: path, sent: map[string]time.Time{}}
	if path == "" {
		return r, nil
	}
	data, _, err := sources.ReadShared(path, sources.SharedRead{What: "sweep record", Limit: maxRecordSize})
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &r.sent); err != nil {
		return nil, fmt.Errorf("sweep record %s: %s", path, sources.ContentProblem(err, data))
	}
	return r, nil
}

// Hold takes the record for one sweep across processes — a cron `sweep`
// and a dashboard's --enforce share the file — and reloads what the others
// remembered, so that neither notifies what the other already did. It
// blocks while another process holds it; release lets it go.
func (r *Record) Hold() (release func(), err error) {
	if r.path == "" {
		return func() {}, nil
	}
	f, err := os.OpenFile(r.path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sweep record lock: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("sweep record lock: %w", err)
	}
	release = func() { f.Close() } // closing drops the flock
	fresh, err := OpenRecord(r.path)
	if err != nil {
		release()
		return nil, err
	}
	r.mu.Lock()
	r.sent = fresh.sent
	r.mu.Unlock()
	return release, nil
}

// Has reports whether key was sent.
func (r *Record) Has(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.sent[key]
	return ok
}

// Put remembers key as sent at and saves the record.
func (r *Record) Put(key string, at time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent[key] = at
	if r.path == "" {
		return nil
	}
	maps.DeleteFunc(r.sent, func(_ string, t time.Time) bool { return at.Sub(t) > recordRetention })
	return r.save()
}

// save replaces the file atomically, so a crash mid-write leaves the old
// record rather than a truncated one.
func (r *Record) save() error {
	data, err := json.MarshalIndent(r.sent, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(r.path), ".sweep-*.tmp")
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
	return os.Rename(tmp.Name(), r.path)
}
