package sources

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/claimdeck/claimdeck/model"
)

// maxJournal bounds what ReadJournal reads into memory.
const maxJournal = 1 << 30

// Journal is the local append-only JSON-lines log of human actions. Each
// action is written twice: once as pending before it is sent, once with its
// outcome, so that a crash in between still leaves a trace.
type Journal struct {
	mu   sync.Mutex
	f    *os.File
	path string
}

// OpenJournal opens (creating) the log at path for appending.
// Its directory must be this user's alone, and the log itself is never
// opened through a link: a planted audit.jsonl cannot steer the records
// (ids and reasons chosen by others) into a file of the user's.
func OpenJournal(path string) (*Journal, error) {
	if path == "" {
		return nil, errors.New("audit log: no path (audit_log in the configuration)")
	}
	if err := PrivateDir("audit log directory", filepath.Dir(path)); err != nil {
		return nil, err
	}
	f, err := OpenPrivate("audit log", path)
	if err != nil {
		return nil, err
	}
	return &Journal{f: f, path: path}, nil
}

// Path is where the journal lives.
func (j *Journal) Path() string { return j.path }

// Append writes one record and syncs it to disk.
func (j *Journal) Append(r model.AuditRecord) error {
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("audit log %s: %w", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("audit log %s: %w", j.path, err)
	}
	return nil
}

// Close closes the file.
func (j *Journal) Close() error { return j.f.Close() }

// ReadJournal reads every record of a journal file; a torn last line (a
// crash mid-write) is skipped, any other bad line is an error.
func ReadJournal(path string) ([]model.AuditRecord, error) {
	data, _, err := ReadShared(path, SharedRead{What: "audit log", Limit: maxJournal})
	if err != nil {
		return nil, err
	}
	var out []model.AuditRecord
	lines := bytes.Split(data, []byte{'\n'})
	for i, line := range lines {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r model.AuditRecord
		if err := json.Unmarshal(line, &r); err != nil {
			if i == len(lines)-1 {
				break // no newline after it: torn by a crash mid-write
			}
			return out, fmt.Errorf("audit log %s line %d: %w", path, i+1, err)
		}
		out = append(out, r)
	}
	return out, nil
}
