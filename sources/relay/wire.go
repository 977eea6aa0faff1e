package relay

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

// Answer is a poll's answer on the wire (gob: every string byte for byte,
// where JSON would replace bytes that are not UTF-8 in an id or version a
// dashboard acts on).
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

func wire(t *model.Task) Task {
	c, m := t.Claim(), t.More()
	return Task{T: *t, Claim: &c, More: &m} // zero parts cost gob nothing: it sends no zero field
}

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
