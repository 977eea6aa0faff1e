package model

import "slices"

// Needs is what a human or reviewer action needs from whoever asks, at
// every door: the dashboard's forms, the claimdeck command's flags, the
// ntask grammar and MCP's tool arguments read it, and the desk enforces
// it, so no door asks for more or less.
type Needs struct {
	Reason bool // a reason is required (the worker or the log reads it)
	Target bool // a target agent, or ANY (hand-off)
	// Priorities are the words a priority may be given in; none, the
	// action takes no priority.
	Priorities []string
	// Confirm: a person at a terminal is asked y/N first. A tool call or
	// an ntask command is its own confirmation.
	Confirm bool
}

// HandoffPriorities are seed 001's hand-off priority words.
var HandoffPriorities = []string{"normal", "urgent", "critical"}

// HumanActions are the actions a person or reviewer applies through the
// desk, in the order the doors list them.
var HumanActions = []Action{
	ActionTakeover, ActionForceRelease, ActionHandoff, ActionCancel,
	ActionApprove, ActionRework, ActionUnblock,
	ActionComplete, ActionReview, ActionBlock, ActionRelease,
}

// Needs is the one answer to "what does this action need?".
func (a Action) Needs() Needs {
	switch a {
	case ActionCancel, ActionRework, ActionBlock:
		return Needs{Reason: true, Confirm: true}
	case ActionHandoff:
		return Needs{Target: true, Priorities: HandoffPriorities, Confirm: true}
	}
	return Needs{Confirm: true}
}

// Known reports whether the desk applies a: one of HumanActions, or a
// reap (ntask reap and the sweep, which no person asks for by hand).
func (a Action) Known() bool { return a == ActionReap || slices.Contains(HumanActions, a) }
