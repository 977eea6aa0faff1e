package sources

import (
	"context"
	"errors"
	"slices"
	"sort"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

// Importer is implemented by sources that can take a task from another
// queue as it is: its state, its live claim (holder, run, node, token and
// lease expiry, so the holder's next heartbeat with the same token works),
// its history and what the origin carries beyond them (model.Carried).
// ImportAll writes every task or none: it refuses with CONFLICT, writing
// nothing, when the target already has a task with the id of one of them,
// and a failure part-way leaves the target as it was. done, when set, is
// told how many tasks are written so far.
//
// A lease end or a reservation end is written as HoldUntil rounds it to
// the store's resolution: never earlier than the origin kept it.
type Importer interface {
	ImportAll(ctx context.Context, ts []*model.Task, done func(n int)) error
}

// HoldUntil is the end of a lease or a reservation as a store that keeps
// times to res writes it: rounded up, never down. Rounded down, a claim
// copied from a finer store would end a fraction early in its new one, and
// a rescue could take a task whose lease still runs as its holder was told.
func HoldUntil(t time.Time, res time.Duration) time.Time {
	if t.IsZero() || res <= 0 {
		return t
	}
	if r := t.Truncate(res); !r.Equal(t) {
		return r.Add(res)
	}
	return t
}

// sameInstant says whether two times are one as stores of different
// resolutions keep it (within CoarsestTime).
func sameInstant(a, b time.Time) bool {
	d := a.Sub(b)
	return d > -CoarsestTime && d < CoarsestTime
}

// CoarsestTime is the coarsest resolution an Importer keeps times to
// (SQLite's milliseconds): a copied lease end is at most this much later
// than the origin's.
const CoarsestTime = time.Millisecond

// CopyPlan is what `claimdeck copy` would move: every task of the origin
// with its history, in id order, and the ones a copy before this one
// already moved (Resume).
type CopyPlan struct {
	Tasks []*model.Task
	// Already are the ids the target holds as the origin does, left
	// alone by a resumed copy.
	Already []string
}

// Progress is told how far a long step has come: what ("reading",
// "writing"), n of total.
type Progress func(what string, n, total int)

// PlanCopy reads every task of from (a full poll, then each task fresh with
// its history) and checks that to can take them all: to must be an
// Importer, no task of from may be read from bad data, and to must hold no
// task with the id of one of them — each id is looked up, so a finished
// task a poll leaves out counts too. With resume, a task to holds as from
// does (same state, holder, token and history: what an interrupted copy
// wrote) is left out of the plan instead. A refusal names what to fix and
// nothing is written; tasks of to with other ids stay as they are.
func PlanCopy(ctx context.Context, from, to Source, resume bool, progress Progress) (CopyPlan, error) {
	return planCopy(ctx, "copy", from, to, resume, progress)
}

// planCopy is PlanCopy for op (copy, move).
func planCopy(ctx context.Context, op string, from, to Source, resume bool, progress Progress) (CopyPlan, error) {
	from, to = Origin(from), Origin(to)
	if _, ok := to.(Importer); !ok {
		return CopyPlan{}, model.Errorf(model.CodeMisconfigured, op, "", "source %s cannot take a copied queue: %s", to.Name(), cannotImport(to))
	}
	all, err := fullPoll(ctx, from)
	if err != nil {
		return CopyPlan{}, err
	}
	if progress == nil {
		progress = func(string, int, int) {}
	}
	var plan CopyPlan
	var clash []string
	for i, t := range all {
		progress("reading", i, len(all))
		if t.More().Problem != "" {
			return CopyPlan{}, model.Errorf(model.CodeMisconfigured, op, t.ID, "source %s: the task was read from bad data (%s): repair it before copying", from.Name(), t.More().Problem)
		}
		full, err := from.Get(ctx, t.ID)
		if err != nil {
			return CopyPlan{}, err
		}
		there, err := to.Get(ctx, t.ID)
		switch {
		case errors.Is(err, model.ErrNoSuchTask):
			plan.Tasks = append(plan.Tasks, full)
		case err != nil:
			return CopyPlan{}, err
		case resume && sameCopy(full, there):
			plan.Already = append(plan.Already, t.ID)
		default:
			clash = append(clash, t.ID)
		}
	}
	progress("reading", len(all), len(all))
	if len(clash) > 0 {
		sort.Strings(clash)
		fix := op + " into a queue without them"
		switch {
		case !resume:
			fix += ", or --resume to skip the ones an interrupted copy wrote"
		case op != "copy":
			fix += " (a task the target holds exactly as the origin does is skipped; these differ)"
		}
		return CopyPlan{}, model.Errorf(model.CodeConflict, op, "", "source %s already holds %d task(s) with the same id (%s): nothing was copied; %s", to.Name(), len(clash), idList(clash), fix)
	}
	sort.Slice(plan.Tasks, func(i, j int) bool { return plan.Tasks[i].ID < plan.Tasks[j].ID })
	slices.Sort(plan.Already)
	return plan, nil
}

// sameCopy reports whether there is what copying t wrote: the same state,
// title, holder, token and history.
func sameCopy(t, there *model.Task) bool {
	if t.State != there.State || t.Title != there.Title || t.Claim().Name != there.Claim().Name ||
		t.Claim().Token != there.Claim().Token || len(t.More().History) != len(there.More().History) {
		return false
	}
	for i, e := range t.More().History {
		if o := there.More().History[i]; o.Actor != e.Actor || o.Action != e.Action || !sameInstant(o.At, e.At) {
			return false
		}
	}
	return true
}

// Apply imports the plan's tasks into to, all or none, and returns how many
// landed: all of them, or 0 with the error.
func (p CopyPlan) Apply(ctx context.Context, to Source, progress Progress) (int, error) {
	to = Origin(to)
	imp, ok := to.(Importer)
	if !ok {
		return 0, model.Errorf(model.CodeMisconfigured, "copy", "", "source %s cannot take a copied queue: %s", to.Name(), cannotImport(to))
	}
	done := func(n int) {
		if progress != nil {
			progress("writing", n, len(p.Tasks))
		}
	}
	if err := imp.ImportAll(ctx, p.Tasks, done); err != nil {
		return 0, err
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
