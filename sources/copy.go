package sources

import (
	"context"
	"sort"

	"github.com/claimdeck/claimdeck/model"
)

// Importer is implemented by sources that can take a task from another
// queue as it is: its state, its live claim (holder, run, node, token and
// lease expiry, so the holder's next heartbeat with the same token works)
// and its history. Import writes one task atomically and refuses with
// CONFLICT, writing nothing, when the target already has a task with its id.
type Importer interface {
	Import(ctx context.Context, t *model.Task) error
}

// CopyPlan is what `claimdeck copy` would move: every task of the origin
// with its history, in id order.
type CopyPlan struct {
	Tasks []*model.Task
}

// PlanCopy reads every task of from (a full poll, then each task fresh with
// its history) and checks that to can take them all: to must be an
// Importer, no task of from may be read from bad data, and to must hold no
// task with the id of one of them. A refusal names what to fix and nothing
// is written; tasks of to with other ids stay as they are.
func PlanCopy(ctx context.Context, from, to Source) (CopyPlan, error) {
	if _, ok := to.(Importer); !ok {
		return CopyPlan{}, model.Errorf(model.CodeMisconfigured, "copy", "", "source %s cannot take a copied queue: %s", to.Name(), cannotImport(to))
	}
	all, err := fullPoll(ctx, from)
	if err != nil {
		return CopyPlan{}, err
	}
	have, err := fullPoll(ctx, to)
	if err != nil {
		return CopyPlan{}, err
	}
	taken := make(map[string]bool, len(have))
	for _, t := range have {
		taken[t.ID] = true
	}
	var plan CopyPlan
	var clash []string
	for _, t := range all {
		if t.Problem != "" {
			return CopyPlan{}, model.Errorf(model.CodeMisconfigured, "copy", t.ID, "source %s: the task was read from bad data (%s): repair it before copying", from.Name(), t.Problem)
		}
		if taken[t.ID] {
			clash = append(clash, t.ID)
			continue
		}
		full, err := from.Get(ctx, t.ID)
		if err != nil {
			return CopyPlan{}, err
		}
		plan.Tasks = append(plan.Tasks, full)
	}
	if len(clash) > 0 {
		sort.Strings(clash)
		return CopyPlan{}, model.Errorf(model.CodeConflict, "copy", "", "source %s already holds %d task(s) with the same id (%s): nothing was copied; copy into a queue without them", to.Name(), len(clash), idList(clash))
	}
	sort.Slice(plan.Tasks, func(i, j int) bool { return plan.Tasks[i].ID < plan.Tasks[j].ID })
	return plan, nil
}

// Apply imports the plan's tasks into to, one atomic write each, and
// returns how many landed; it stops at the first refusal.
func (p CopyPlan) Apply(ctx context.Context, to Source) (int, error) {
	imp, ok := to.(Importer)
	if !ok {
		return 0, model.Errorf(model.CodeMisconfigured, "copy", "", "source %s cannot take a copied queue: %s", to.Name(), cannotImport(to))
	}
	for i, t := range p.Tasks {
		if err := imp.Import(ctx, t); err != nil {
			return i, err
		}
	}
	return len(p.Tasks), nil
}

func cannotImport(to Source) string {
	if !to.Caps().AtomicClaim {
		return "it has no conditional writes, so a task could not be written with its claim and history in one step (copy into SQLite, PostgreSQL or a lock directory)"
	}
	return "it does not write tasks with their claim and history (copy into SQLite, PostgreSQL or a lock directory)"
}

func fullPoll(ctx context.Context, s Source) ([]*model.Task, error) {
	d, err := s.Poll(ctx, "")
	if err != nil {
		return nil, err
	}
	if !d.Full {
		return nil, model.Errorf(model.CodeAPIError, "copy", "", "source %s: a poll without a cursor did not answer the whole queue", s.Name())
	}
	return d.Tasks, nil
}

func idList(ids []string) string {
	const most = 5
	s := ""
	for i, id := range ids {
		if i == most {
			return s + ", …"
		}
		if i > 0 {
			s += ", "
		}
		s += id
	}
	return s
}
