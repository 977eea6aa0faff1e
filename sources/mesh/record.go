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
	"time"
)

// recordRetention is how long a sent notification is remembered. A claim
// stuck for a month has been dealt with by a human long since.
const recordRetention = 30 * 24 * time.Hour

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
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &r.sent); err != nil {
		return nil, fmt.Errorf("sweep record %s: %w", path, err)
	}
	return r, nil
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
