package sources

import (
	"context"
	"errors"
	"slices"

	"github.com/claimdeck/claimdeck/model"
)

// BulkTask names one task of a bulk action and, when it was not applied,
// why.
type BulkTask struct {
	Source string     `json:"source"`
	Task   string     `json:"task"`
	Key    string     `json:"key,omitempty"`
	Code   model.Code `json:"code,omitempty"`
	Reason string     `json:"reason,omitempty"`
}

// BulkPreview is what a bulk action would do, before anything is done: how
// many tasks, on which sources, and which would be refused and why.
type BulkPreview struct {
	Action  model.Action   `json:"action"`
	Count   int            `json:"count"`
	Sources map[string]int `json:"sources"`
	Apply   []BulkTask     `json:"apply"`
	Refused []BulkTask     `json:"refused"`
	// seen are the tasks of Apply as they were read: each is applied only
	// if it still has that version.
	seen []*model.Task
}

// BulkSummary is how a bulk action ended. Stopped lists the tasks not
// tried because the action was stopped midway.
type BulkSummary struct {
	Action  model.Action `json:"action"`
	Applied []BulkTask   `json:"applied"`
	Refused []BulkTask   `json:"refused"`
	Failed  []BulkTask   `json:"failed"`
	Stopped []BulkTask   `json:"stopped,omitempty"`
}

// Err is the summary's outcome as one error: nil when every task was
// applied, else the worst outcome (a failure over a refusal, which carries
// the first refusal's code).
func (s BulkSummary) Err() error {
	switch {
	case len(s.Failed) > 0:
		return model.Errorf(model.CodeAPIError, string(s.Action), "", "%d of the tasks failed", len(s.Failed))
	case len(s.Refused) > 0:
		return model.Errorf(s.Refused[0].Code, string(s.Action), "", "%d of the tasks were refused", len(s.Refused))
	case len(s.Stopped) > 0:
		return model.Errorf(model.CodeConflict, string(s.Action), "", "stopped with %d tasks not tried", len(s.Stopped))
	}
	return nil
}

func bulkTask(t *model.Task, err error) BulkTask {
	b := BulkTask{Source: t.Source, Task: t.ID}
	if k := t.DisplayKey(); k != t.ID {
		b.Key = k
	}
	if err != nil {
		b.Code, b.Reason = model.CodeOf(err), err.Error()
	}
	return b
}

// PreviewBulk sorts tasks, as the operator sees them now, into those a
// bulk action would apply to and those it would refuse, by the rules of a
// single action (Desk.Precheck) plus one of its own: a bulk
// action never touches a claim a person holds, which is taken over or
// released one at a time. req is the action without Seen.
func (d *Desk) PreviewBulk(req Request, tasks []*model.Task) BulkPreview {
	p := BulkPreview{Action: req.Action, Count: len(tasks), Sources: map[string]int{}, Apply: []BulkTask{}, Refused: []BulkTask{}}
	for _, t := range tasks {
		p.Sources[t.Source]++
		r := req
		r.Seen = t
		err := d.check(t.Source, r)
		if err == nil && t.Claim().Holder == model.HolderHuman {
			err = model.Errorf(model.CodeConflict, string(req.Action), t.ID, "held by %s: a person's claim is acted on one at a time", t.Claim().Name)
		}
		if err == nil {
			err = d.Precheck(t, req)
		}
		if err != nil {
			p.Refused = append(p.Refused, bulkTask(t, err))
			continue
		}
		p.Apply = append(p.Apply, bulkTask(t, nil))
		p.seen = append(p.seen, t)
	}
	return p
}

// ApplyBulk applies a previewed bulk action task by task, each through
// Apply (journaled, and conditional on the version in the preview), so a
// task changed since the preview is refused and named. Cancelling ctx
// stops it between tasks. progress, when not nil, is told after each.
func (d *Desk) ApplyBulk(ctx context.Context, source func(name string) Source, p BulkPreview, req Request, progress func(done, total int)) BulkSummary {
	// The preview's refusals stand: nothing is tried on them.
	s := BulkSummary{Action: p.Action, Applied: []BulkTask{}, Refused: slices.Clone(p.Refused), Failed: []BulkTask{}}
	for i, t := range p.seen {
		if ctx.Err() != nil {
			for _, rest := range p.seen[i:] {
				s.Stopped = append(s.Stopped, bulkTask(rest, nil))
			}
			break
		}
		r := req
		r.Seen = t
		var err error
		if src := source(t.Source); src == nil {
			err = model.Errorf(model.CodeMisconfigured, string(req.Action), t.ID, "source %q is not open", t.Source)
		} else {
			_, err = d.Apply(ctx, src, r)
		}
		switch code := model.CodeOf(err); {
		case err == nil:
			s.Applied = append(s.Applied, bulkTask(t, nil))
		case errors.Is(err, context.Canceled), code == model.CodeAPIError:
			s.Failed = append(s.Failed, bulkTask(t, err))
		default:
			s.Refused = append(s.Refused, bulkTask(t, err))
		}
		if progress != nil {
			progress(i+1, len(p.seen))
		}
	}
	return s
}
