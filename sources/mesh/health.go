package mesh

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

// HealthReport is seed 001's answer to `POST /hooks/health`.
type HealthReport struct {
	Node         string
	Status       string // "healthy" when the node is fine
	LastTaskAt   time.Time
	QueueDepth   int
	ClaimedTasks []string
}

// healthWire is the report on the wire. Pointers tell a missing field from a
// zero one, so a required field that is absent is reported as such.
type healthWire struct {
	Node         *string  `json:"node"`
	Status       *string  `json:"status"`
	LastTaskAt   *string  `json:"last_task_at"`
	QueueDepth   *int     `json:"queue_depth"`
	ClaimedTasks []string `json:"claimed_tasks"`
}

// MarshalJSON writes the seed's shape; a zero LastTaskAt is null and no
// claims is [], never null, for the seed's JavaScript readers.
func (r HealthReport) MarshalJSON() ([]byte, error) {
	w := healthWire{Node: &r.Node, Status: &r.Status, QueueDepth: &r.QueueDepth, ClaimedTasks: r.ClaimedTasks}
	if !r.LastTaskAt.IsZero() {
		s := r.LastTaskAt.UTC().Format(time.RFC3339)
		w.LastTaskAt = &s
	}
	if w.ClaimedTasks == nil {
		w.ClaimedTasks = []string{}
	}
	return json.Marshal(w)
}

// ParseHealth reads a health response strictly but tolerantly: unknown
// fields are ignored, while a missing node or status, a field of the wrong
// type, a negative queue depth or a malformed time is an error naming the
// field.
func ParseHealth(data []byte) (HealthReport, error) {
	var w healthWire
	if err := json.Unmarshal(data, &w); err != nil {
		var typ *json.UnmarshalTypeError
		var syn *json.SyntaxError
		switch {
		case errors.As(err, &typ) && typ.Field == "":
			return HealthReport{}, fmt.Errorf("health response is a JSON %s, not an object", typ.Value)
		case errors.As(err, &typ):
			return HealthReport{}, fmt.Errorf("health response field %s: wrong type (%s)", typ.Field, typ.Value)
		case errors.As(err, &syn):
			return HealthReport{}, fmt.Errorf("health response is not JSON: %s at byte %d", syn.Error(), syn.Offset)
		}
		return HealthReport{}, fmt.Errorf("health response: %w", err)
	}
	switch {
	case w.Node == nil || strings.TrimSpace(*w.Node) == "":
		return HealthReport{}, errors.New("health response field node: missing")
	case w.Status == nil || strings.TrimSpace(*w.Status) == "":
		return HealthReport{}, errors.New("health response field status: missing")
	}
	r := HealthReport{Node: *w.Node, Status: *w.Status, ClaimedTasks: w.ClaimedTasks}
	if w.QueueDepth != nil {
		if *w.QueueDepth < 0 {
			return HealthReport{}, errors.New("health response field queue_depth: negative")
		}
		r.QueueDepth = *w.QueueDepth
	}
	if w.LastTaskAt != nil && *w.LastTaskAt != "" {
		t, err := time.Parse(time.RFC3339, *w.LastTaskAt)
		if err != nil {
			return HealthReport{}, errors.New("health response field last_task_at: not an RFC 3339 time")
		}
		r.LastTaskAt = t
	}
	return r, nil
}

// Healthy reports whether the node says it is healthy.
func (r HealthReport) Healthy() bool { return strings.EqualFold(r.Status, "healthy") }

// ReportFor builds the health report of the node named node, whose agents
// are listed, from the tasks of every configured source. A task counts as
// the node's when its claim names the node or one of its agents; HUMAN
// claims are nobody's node. QueueDepth is the number of tasks the node's
// agents could pull now; LastTaskAt is the latest sign of life of its claims.
func ReportFor(node string, agents []string, tasks []*model.Task, now time.Time) HealthReport {
	r := HealthReport{Node: node, Status: "healthy", ClaimedTasks: []string{}}
	for _, t := range tasks {
		if t.State == model.StateClaimed && t.Claim().Holder == model.HolderAgent && onNode(t, node, agents) {
			r.ClaimedTasks = append(r.ClaimedTasks, t.ID)
			if alive := t.Claim().LastAlive(); alive.After(r.LastTaskAt) {
				r.LastTaskAt = alive
			}
			continue
		}
		if pullable(t, agents, now) {
			r.QueueDepth++
		}
	}
	slices.Sort(r.ClaimedTasks)
	return r
}

func onNode(t *model.Task, node string, agents []string) bool {
	if t.Claim().Node != "" {
		return strings.EqualFold(t.Claim().Node, node)
	}
	return slices.ContainsFunc(agents, func(a string) bool { return strings.EqualFold(a, t.Claim().Name) })
}

func pullable(t *model.Task, agents []string, now time.Time) bool {
	if len(agents) == 0 {
		return model.Eligible(t, now)
	}
	return slices.ContainsFunc(agents, func(a string) bool { return model.EligibleFor(t, a, now) })
}
