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

// ActionRow is one human or reviewer action as every door names it: the
// word of the claimdeck command, the MCP tool and the dashboard's : line,
// and the one line of help they all show. A new action is one row here
// (and its case in Needs when it needs more than a confirmation).
type ActionRow struct {
	Action Action
	// Word names the action at every door. The two releases share the
	// claimdeck command `release` (--force for someone else's claim); at
	// the dashboard and MCP "release" is the operator's force-release and
	// a person's own is "give-back".
	Word string
	Help string
}

// ActionRows are the human and reviewer actions, in the order the doors
// list them.
var ActionRows = []ActionRow{
	{ActionTakeover, "takeover", "Claim a task as HUMAN (operator; audited)"},
	{ActionForceRelease, "release", "Force-release a claimed task back to the queue (operator; audited)"},
	{ActionHandoff, "handoff", "Release a task and reserve it for one agent or ANY (operator; audited)"},
	{ActionCancel, "cancel", "Cancel a task, whoever holds it (operator; reason required; audited)"},
	{ActionApprove, "approve", "Approve a task in Review: Done (reviewer; audited)"},
	{ActionRework, "rework", "Send a task in Review back to the queue with what to change (reviewer; reason required; audited)"},
	{ActionUnblock, "unblock", "Unblock a blocked task: it returns to the queue (audited)"},
	{ActionComplete, "complete", "Mark your own claim done"},
	{ActionReview, "review", "Hand your own claim to review"},
	{ActionBlock, "block", "Park your own claim as blocked (reason required)"},
	{ActionRelease, "give-back", "Give your own claim back to the queue"},
}

// HumanActions are the actions a person or reviewer applies through the
// desk, in ActionRows' order.
var HumanActions = func() []Action {
	out := make([]Action, len(ActionRows))
	for i, r := range ActionRows {
		out[i] = r.Action
	}
	return out
}()

// Row is a's row in ActionRows; the zero row for an action no person asks
// for by hand (reap).
func (a Action) Row() ActionRow {
	for _, r := range ActionRows {
		if r.Action == a {
			return r
		}
	}
	return ActionRow{Action: a, Word: string(a)}
}

// ActionByWord is the action a door's word names, if any.
func ActionByWord(word string) (Action, bool) {
	for _, r := range ActionRows {
		if r.Word == word {
			return r.Action, true
		}
	}
	return "", false
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
