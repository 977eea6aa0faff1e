package mesh

import (
	"maps"
	"regexp"
	"strings"
	"sync"
	"time"
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
	file stateFile // path "" keeps the record in memory only
	mu   sync.Mutex
	sent map[string]time.Time
}

// OpenRecord loads the record at path; a missing file is an empty record and
// an empty path keeps the record in memory only. A corrupt file is an error
// rather than a reason to notify everything again.
func OpenRecord(path string) (*Record, error) {
	r := &Record{file: stateFile{path: path, what: "sweep record", limit: maxRecordSize}, sent: map[string]time.Time{}}
	if path == "" {
		return r, nil
	}
	if err := r.file.load(&r.sent); err != nil {
		return nil, err
	}
	r.sent = microKeys(r.sent)
	return r, nil
}

// Hold takes the record for one sweep across processes — a cron `sweep`
// and a dashboard's --enforce share the file — and reloads what the others
// remembered, so that neither notifies what the other already did. It
// blocks while another process holds it; release lets it go.
func (r *Record) Hold() (release func(), err error) {
	if r.file.path == "" {
		return func() {}, nil
	}
	if release, err = r.file.hold(); err != nil {
		return nil, err
	}
	fresh := map[string]time.Time{}
	if err := r.file.load(&fresh); err != nil {
		release()
		return nil, err
	}
	r.mu.Lock()
	r.sent = microKeys(fresh)
	r.mu.Unlock()
	return release, nil
}

// nanoClaimTime is the claim time in a key written when claim times were
// kept to the nanosecond (before model.Stamp). They are kept to the
// microsecond now, so such a key is read in its microsecond form: a sweep
// after an upgrade does not notify a stuck claim a second time.
var nanoClaimTime = regexp.MustCompile(`(@\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.(\d{7,9})Z/`)

func microKeys(sent map[string]time.Time) map[string]time.Time {
	for key, at := range sent {
		m := nanoClaimTime.FindStringSubmatchIndex(key)
		if m == nil {
			continue
		}
		frac := strings.TrimRight(key[m[4]:m[4]+6], "0")
		if frac != "" {
			frac = "." + frac
		}
		micro := key[:m[3]] + frac + key[m[5]:]
		delete(sent, key)
		if at.After(sent[micro]) {
			sent[micro] = at
		}
	}
	return sent
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
	if r.file.path == "" {
		return nil
	}
	maps.DeleteFunc(r.sent, func(_ string, t time.Time) bool { return at.Sub(t) > recordRetention })
	return r.file.save(r.sent)
}
