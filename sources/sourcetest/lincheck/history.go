package lincheck

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"
)

// Kind names an operation of the lease protocol.
type Kind string

// The operations a history records.
const (
	Create       Kind = "create"
	Claim        Kind = "claim"      // claim of a named task
	ClaimNext    Kind = "claim-next" // claim of the first eligible task
	Heartbeat    Kind = "heartbeat"
	Finish       Kind = "finish" // complete, block, review, cancel, fail by the holder
	Takeover     Kind = "takeover"
	ForceRelease Kind = "force-release"
	CancelTask   Kind = "cancel" // a human's cancel
	Handoff      Kind = "handoff"
	Read         Kind = "read" // get or list
)

// Results other than an error code.
const (
	OK      = "ok"
	None    = "none"    // a claim-next that found no eligible task
	Unknown = "unknown" // killed, or API_ERROR: it may have taken effect
)

// Op is one operation of a history, as one JSON line.
type Op struct {
	Client int    `json:"client"`          // who called: an agent's or operator's lane
	Kind   Kind   `json:"op"`              // what was called
	Task   string `json:"task,omitempty"`  // the task named, or answered for a claim-next
	Agent  string `json:"agent,omitempty"` // the claiming agent
	Token  string `json:"token,omitempty"` // the lock token the call names
	// Outcome is a finish's end state (done, blocked, review, canceled,
	// failed) or a hand-off's target agent (or ANY).
	Outcome string        `json:"outcome,omitempty"`
	Lease   time.Duration `json:"lease,omitempty"` // lease asked for; a hand-off's reservation
	Call    time.Time     `json:"call"`
	// Return is zero for an operation that never returned (its process
	// was killed).
	Return time.Time `json:"return,omitzero"`
	// Result is OK, None, Unknown, or the error code answered (CONFLICT,
	// LOST_LOCK, MISCONFIGURED, ...).
	Result string `json:"result"`
	// Seen is the task as the answer showed it: one for a write or a get,
	// every task for a list.
	Seen []Seen `json:"seen,omitempty"`
}

// Seen is a task as an answer showed it.
type Seen struct {
	Task    string    `json:"task"`
	State   string    `json:"state"`            // queued, claimed, blocked, review, done, canceled, failed
	Holder  string    `json:"holder,omitempty"` // AGENT or HUMAN
	Token   string    `json:"token,omitempty"`
	Expires time.Time `json:"expires,omitzero"` // on the backend's clock
	// Trail is the task's own record of claims, where the backend keeps
	// one: it tells which task a claim-next whose answer was lost took.
	Trail []Event `json:"trail,omitempty"`
}

// Event is one entry of a task's trail.
type Event struct {
	At     time.Time `json:"at"`
	Actor  string    `json:"actor"`
	Action string    `json:"action"` // claim and rescue are the ones read
}

// Pending reports whether the operation never returned.
func (o Op) Pending() bool { return o.Return.IsZero() }

// ReadHistory reads a history written as JSON lines, one Op per line,
// merged from any number of writers: it returns the operations in order of
// their call. A line that is not an operation is an error naming the line
// and what to fix; nothing is returned then.
func ReadHistory(r io.Reader) ([]Op, error) {
	var ops []Op
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		var o Op
		if err := json.Unmarshal(line, &o); err != nil {
			return nil, fmt.Errorf("history line %d: not an operation (%v): write one JSON object per line", n, err)
		}
		if err := o.check(); err != nil {
			return nil, fmt.Errorf("history line %d: %w", n, err)
		}
		ops = append(ops, o)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	slices.SortStableFunc(ops, func(a, b Op) int { return a.Call.Compare(b.Call) })
	return ops, nil
}

func (o Op) check() error {
	switch o.Kind {
	case Create, Claim, ClaimNext, Heartbeat, Finish, Takeover, ForceRelease, CancelTask, Handoff, Read:
	default:
		return fmt.Errorf("op %q is not one of create, claim, claim-next, heartbeat, finish, takeover, force-release, cancel, handoff, read", o.Kind)
	}
	if o.Call.IsZero() {
		return fmt.Errorf("%s has no call time", o.Kind)
	}
	if !o.Return.IsZero() && o.Return.Before(o.Call) {
		return fmt.Errorf("%s returned (%s) before it was called (%s)", o.Kind, o.Return.Format(time.RFC3339Nano), o.Call.Format(time.RFC3339Nano))
	}
	if o.Result == "" {
		return fmt.Errorf("%s has no result: give ok, none, unknown or the error code", o.Kind)
	}
	if o.Task == "" && o.Kind != ClaimNext && o.Kind != Read && !(o.Kind == Create && o.Result != OK) {
		return fmt.Errorf("%s names no task", o.Kind)
	}
	if o.Result == OK && (o.Kind == Claim || o.Kind == ClaimNext || o.Kind == Takeover) && (len(o.Seen) == 0 || o.Seen[0].Token == "") {
		return fmt.Errorf("%s answered ok shows no lock token", o.Kind)
	}
	if o.Lease < 0 {
		return fmt.Errorf("%s has a negative lease", o.Kind)
	}
	return nil
}

// WriteOp appends one operation as a JSON line.
func WriteOp(w io.Writer, o Op) error {
	b, err := json.Marshal(o)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
