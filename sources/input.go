package sources

import (
	"strings"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

// Bad input is refused the same way on every backend, before anything is
// written: each backend calls the Check of what it was given first, and
// the CLI calls the same Check before it opens a source. A refusal is
// MISCONFIGURED, never API_ERROR: retrying cannot fix it.

// refuse turns the first problem found into the MISCONFIGURED error.
func refuse(op, id string, problems ...error) error {
	for _, p := range problems {
		if _, ok := p.(*model.Error); ok {
			return p
		}
		if p != nil {
			return model.Errorf(model.CodeMisconfigured, op, id, "%v", p)
		}
	}
	return nil
}

// Check refuses a task no backend could store faithfully, or read back
// whole (model.CheckBounded).
func (n NewTask) Check(op string) error {
	return refuse(op, n.ID,
		model.CheckText("the id", n.ID), model.CheckBounded("the title", n.Title, model.MaxTitle),
		model.CheckBounded("the description", n.Description, model.MaxDescription), model.CheckText("the parent", n.Parent),
		model.CheckPriority(n.Priority))
}

// Check refuses an out-of-range lease, names that are not text, and an
// agent name a caller may not take (model.CheckCallerName: HUMAN:…,
// …@mcp-http, invisible characters).
func (c ClaimRequest) Check(op, id string) error {
	return refuse(op, id,
		model.CheckCallerName("the agent name", c.Agent), model.CheckText("the run id", c.RunID),
		model.CheckText("the node", c.Node), model.CheckLease(c.Lease), model.CheckText("the door", string(c.Door)))
}

// CheckHeartbeat refuses a heartbeat's out-of-range lease or bad token.
func CheckHeartbeat(op, id, token string, lease time.Duration) error {
	return refuse(op, id, model.CheckText("the lock token", token), model.CheckLease(lease))
}

// Check refuses an outcome whose texts are not text.
func (o Outcome) Check(op, id, token string) error {
	return refuse(op, id, model.CheckText("the lock token", token),
		model.CheckBounded("the reason", o.Reason, model.MaxReason), model.CheckBounded("the unblock action", o.UnblockAction, model.MaxReason),
		model.CheckBounded("the artifacts", o.Artifacts, model.MaxArtifacts), model.CheckText("the door", string(o.Door)))
}

// Check refuses a human action whose texts are not text.
func (h Human) Check(op, id string) error {
	return refuse(op, id, model.CheckName("the actor", h.Actor), model.CheckBounded("the reason", h.Reason, model.MaxReason),
		model.CheckText("the expected version", h.Expect))
}

// Check refuses a hand-off whose texts are not text or whose reservation
// is negative.
func (h Handoff) Check(op, id string) error {
	var neg, target error
	if h.For < 0 {
		neg = model.CheckLease(h.For)
	}
	if h.To != model.AnyAgent {
		target = model.CheckCallerName("the target agent", h.To)
	}
	return refuse(op, id, h.Human.Check(op, id), model.CheckText("the lock token", h.Token),
		target, model.CheckText("the hand-off priority", h.Priority), neg)
}

// Check refuses a note that is not text.
func (n Note) Check(op, id string) error {
	return refuse(op, id, model.CheckName("the author", n.Author), model.CheckBounded("the comment", n.Text, model.MaxComment))
}

// Check refuses an edit whose values are not text or out of range.
func (e Edit) Check(op, id string) error {
	var title, prio error
	if e.Title != nil {
		title = model.CheckBounded("the title", *e.Title, model.MaxTitle)
	}
	if e.Priority != nil {
		prio = model.CheckPriority(*e.Priority)
	}
	return refuse(op, id, model.CheckName("the actor", e.Actor), model.CheckText("the lock token", e.Token),
		model.CheckBounded("the reason", e.Reason, model.MaxReason), model.CheckText("the expected version", e.Expect), title, prio)
}

// CheckEvent is the check of claimdeck's own trail entry (Trail.Record)
// before anything is written: texts that are text, a name, an action and
// a result, within the trail's limits.
func CheckEvent(op, id string, e model.Event) error {
	if strings.TrimSpace(e.Action) == "" || strings.TrimSpace(e.Actor) == "" || strings.TrimSpace(e.Result) == "" {
		return model.Errorf(model.CodeMisconfigured, op, id, "a trail entry names who, what and how it ended")
	}
	return refuse(op, id, model.CheckName("the actor", e.Actor), model.CheckText("the action", e.Action),
		model.CheckBounded("the reason", e.Reason, model.MaxReason), model.CheckBounded("the detail", e.Detail, model.MaxComment),
		model.CheckText("the door", string(e.Door)), model.CheckText("the result", e.Result))
}
