//go:build faults

package faults

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/claimdeck/claimdeck/sources/sourcetest/lincheck"
)

// histories records every operation the suite's agents and operators make,
// one JSON-lines file per lane (an agent, the drainer, the suite's own
// commands), merged and checked after the run.
type histories struct {
	dir   string
	mu    sync.Mutex
	lanes map[int]*os.File
}

// historyDir is where histories are kept: $FAULTS_HISTORIES (.ci/faults
// sets it) or a new directory, named in the log either way.
func historyDir(name string) (string, error) {
	root := os.Getenv("FAULTS_HISTORIES")
	if root == "" {
		return os.MkdirTemp("", "claimdeck-faults-history-"+name)
	}
	dir := filepath.Join(root, name)
	return dir, os.MkdirAll(dir, 0o755)
}

func (h *histories) write(o lincheck.Op) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	f := h.lanes[o.Client]
	if f == nil {
		var err error
		if f, err = os.Create(filepath.Join(h.dir, fmt.Sprintf("lane-%02d.jsonl", o.Client))); err != nil {
			return err
		}
		h.lanes[o.Client] = f
	}
	return lincheck.WriteOp(f, o)
}

// merged closes every lane and reads them back as one history.
func (h *histories) merged() ([]lincheck.Op, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var all bytes.Buffer
	for _, f := range h.lanes {
		if err := f.Close(); err != nil {
			return nil, err
		}
		b, err := os.ReadFile(f.Name())
		if err != nil {
			return nil, err
		}
		all.Write(b)
	}
	h.lanes = map[int]*os.File{}
	return lincheck.ReadHistory(&all)
}

// seenOf is a task as claimdeck's answer showed it.
func seenOf(t task) lincheck.Seen {
	s := lincheck.Seen{Task: t.PageID, State: t.State, Holder: t.ClaimedBy, Token: t.LockToken, Trail: t.History}
	if at, err := time.Parse(time.RFC3339, t.LockExpires); err == nil {
		s.Expires = at
	}
	return s
}

// outcome fills in what the answer said: killed or API_ERROR leave the
// outcome unknown (a write may have landed before the failure).
func outcome(o *lincheck.Op, a answer, killed bool) {
	switch {
	case killed:
		o.Return, o.Result = time.Time{}, lincheck.Unknown
	case a.OK && o.Kind == lincheck.ClaimNext && a.Task == nil:
		o.Result = lincheck.None
	case a.OK:
		o.Result = lincheck.OK
		if a.Task != nil {
			o.Seen = []lincheck.Seen{seenOf(*a.Task)}
			if o.Task == "" {
				o.Task = a.Task.PageID
			}
		}
		for _, t := range a.Tasks {
			o.Seen = append(o.Seen, seenOf(t))
		}
	case a.Error.Code == "API_ERROR" || a.Error.Code == "":
		o.Result = lincheck.Unknown
	default:
		o.Result = a.Error.Code
	}
}

// checkHistory proves the run's history linearizable, task by task, and
// saves Porcupine's view of any violation beside the history. resolution
// is how finely the backend's answers print times.
func (w *world) checkHistory(name string, resolution time.Duration) (lincheck.Report, time.Duration) {
	ops, err := w.hist.merged()
	if err != nil {
		w.t.Errorf("%s: reading the history in %s: %v", name, w.hist.dir, err)
		return lincheck.Report{}, 0
	}
	start := time.Now()
	rep := lincheck.Check(ops, lincheck.Rules{Grace: w.grace, Rescue: !w.noRescue, RescueByID: w.rescueByID, Lease: w.lease, Resolution: resolution, Timeout: 30 * time.Second})
	took := time.Since(start)
	w.t.Logf("%s history (%s, checked in %s): %s", name, w.hist.dir, took.Round(time.Millisecond), rep)
	if !rep.Linearizable() {
		html := filepath.Join(w.hist.dir, "violations.html")
		if err := rep.Visualize(html); err != nil {
			w.t.Errorf("%s: writing %s: %v", name, html, err)
		} else {
			w.t.Logf("%s: Porcupine's view of the violations: %s", name, html)
		}
	}
	return rep, took
}
