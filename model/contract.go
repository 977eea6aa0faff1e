package model

import (
	"fmt"
	"strings"
)

// contractStatus is each state's word in the ntask contract (seed 002):
// what every backend's JSON says, whatever the backend calls it natively.
// FAILED is seed 003's and seed 004's final state, which seed 002 lacks.
var contractStatus = [...]string{"UNKNOWN", "READY", "IN_PROGRESS", "BLOCKED", "REVIEW", "DONE", "FAILED", "CANCELED"}

// Contract is the state's status word in the ntask contract.
func (s State) Contract() string {
	if s < 0 || int(s) >= len(contractStatus) {
		return contractStatus[StateUnknown]
	}
	return contractStatus[s]
}

// statusWords are the other seeds' words for the same states: seed 000's
// OPEN/COMPLETED/CANCELLED, seed 003's pending/completed, Notion's title-case
// options.
var statusWords = map[string]State{
	"OPEN": StateQueued, "PENDING": StateQueued, "QUEUED": StateQueued, "BACKLOG": StateQueued,
	"CLAIMED": StateClaimed, "COMPLETED": StateDone, "COMPLETE": StateDone, "CANCELLED": StateCanceled,
}

// ParseStatus reads a status word as an agent or a person writes it: the
// contract's (READY, IN_PROGRESS, …, in any case, "In Progress" too), the
// normalized state names, or another seed's word for the same state.
func ParseStatus(word string) (State, error) {
	w := strings.ToUpper(strings.Join(strings.FieldsFunc(word, func(r rune) bool { return r == ' ' || r == '_' || r == '-' }), "_"))
	for i, c := range contractStatus {
		if c == w && i != int(StateUnknown) {
			return State(i), nil
		}
	}
	if s, ok := statusWords[w]; ok {
		return s, nil
	}
	return StateUnknown, fmt.Errorf("unknown status %q (want READY, IN_PROGRESS, BLOCKED, REVIEW, DONE, FAILED or CANCELED)", word)
}

// titleStatus is each state's word in ntask 0.4's contract
// (Schema/TaskStatus.swift at 75590fd): title case, as the Notion status
// options read. FAILED, which the skill lacks, reads "Failed".
var titleStatus = [...]string{"", "Ready", "In Progress", "Blocked", "Review", "Done", "Failed", "Canceled"}

// Title is the state's status word in ntask 0.4's contract; a task read
// from bad data keeps its raw word.
func (s State) Title(raw string) string {
	if s == StateUnknown || int(s) >= len(titleStatus) {
		return raw
	}
	return titleStatus[s]
}

// Title is the class's word in ntask 0.4's contract
// (Schema/TaskStatus.swift's ClassOfService).
func (c Class) Title() string {
	switch c {
	case ClassExpedite:
		return "Expedite"
	case ClassFixedDate:
		return "Fixed Date"
	case ClassIntangible:
		return "Intangible"
	}
	return "Standard"
}
