package model

import "time"

// Action names a human (operator) action.
type Action string

// Human actions: the overrides a person applies through the desk.
const (
	ActionTakeover     Action = "takeover"
	ActionForceRelease Action = "force-release"
	ActionCancel       Action = "cancel"
	ActionHandoff      Action = "handoff"
	// ActionReap puts an agent's claim whose lease ended a grace ago back
	// in the queue (ntask 0.5's `reap`): a force-release held to the exact
	// version read, so a heartbeat or a new claim since refuses it.
	ActionReap Action = "reap"
)

// TaskBrief is the part of a task an audit record keeps as before/after.
type TaskBrief struct {
	State   string `json:"state"`
	Status  string `json:"status,omitempty"`
	Holder  string `json:"holder,omitempty"`
	Agent   string `json:"agent,omitempty"`
	RunID   string `json:"run_id,omitempty"`
	Expires string `json:"lease_expires,omitempty"`
	Version string `json:"version,omitempty"`
}

// Brief summarizes a task for an audit record. The lock token itself is
// left out: it is a capability, and a log is no place for one.
func Brief(t *Task) *TaskBrief {
	if t == nil {
		return nil
	}
	b := &TaskBrief{
		State:   t.State.String(),
		Status:  t.RawStatus,
		Holder:  t.Claim().Holder.String(),
		Agent:   t.Claim().Name,
		RunID:   t.Claim().RunID,
		Version: t.Version,
	}
	if !t.Claim().Expires.IsZero() {
		b.Expires = t.Claim().Expires.Time().UTC().Format(time.RFC3339)
	}
	return b
}

// AuditRecord is one human action: who, when, what, why, before and after,
// and how it ended.
type AuditRecord struct {
	At      time.Time  `json:"at"`
	Actor   string     `json:"actor"`
	Door    Door       `json:"door,omitempty"` // where the request came in
	Source  string     `json:"source"`
	Task    string     `json:"task"`
	Key     string     `json:"key,omitempty"` // the task's display key, when not its id
	Action  Action     `json:"action"`
	Reason  string     `json:"reason,omitempty"`
	Target  string     `json:"target,omitempty"` // hand-off target
	Before  *TaskBrief `json:"before,omitempty"`
	After   *TaskBrief `json:"after,omitempty"`
	Result  string     `json:"result"` // "applied" or the error code
	Error   string     `json:"error,omitempty"`
	Attempt string     `json:"attempt,omitempty"` // id tying "pending" to its outcome
	Pending bool       `json:"pending,omitempty"`
	// KeyFingerprint is the SSH key a person at door ssh was known by
	// (SHA256:…, as ssh-keygen -lf prints it).
	KeyFingerprint string `json:"key_fingerprint,omitempty"`
}
