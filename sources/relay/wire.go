package relay

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

// Answer is a poll's answer on the wire, in gob: every string goes byte
// for byte (a human's action names a task by its id and version exactly as
// read, where JSON would replace bytes that are not UTF-8), and a
// dashboard decodes a task in about a microsecond, against eleven for
// JSON (BenchmarkDecodeTask): fifty dashboards read every change.
type Answer struct {
	Full     bool
	Cursor   string
	Tasks    []Task
	Removed  []string
	Archived int
	// The relay's own view of the source: Loaded once it has read it;
	// Status, Updated, Err and Code as its hub holds them; Lagging by
	// hub.SourceState.Lagging at the relay, with the relay's poll
	// interval Every.
	Loaded  bool
	Status  int
	Updated time.Time
	Err     string
	Code    string
	Every   time.Duration
	Lagging bool
}

// Task is a task on the wire: its exported fields, and the claim and the
// seldom-filled rest a model.Task keeps behind pointers of its own.
type Task struct {
	T     model.Task
	Claim *model.Claim
	More  *model.More
}

// wire is t on the wire. Gob sends no zero field, so an empty claim or
// rest costs nothing.
func wire(t *model.Task) Task {
	c, m := t.Claim(), t.More()
	return Task{T: *t, Claim: &c, More: &m}
}

// task is the task a wire Task carries.
func (w *Task) task() *model.Task {
	t := w.T
	if w.Claim != nil {
		t.SetClaim(*w.Claim)
	}
	if w.More != nil {
		t.SetMore(*w.More)
	}
	return &t
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
