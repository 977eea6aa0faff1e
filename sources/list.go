package sources

import (
	"context"

	"github.com/claimdeck/claimdeck/model"
)

// MoreUncounted is List's count of the tasks after the limit when the source
// read only one past it: more follow, how many was not read.
const MoreUncounted = -1

// List is `list`'s answer from one source: its tasks in state want
// (model.StateUnknown: every task) in pull order, at most limit of them (0:
// all), and how many more there are in that state (MoreUncounted: some). The
// first queued tasks (want model.StateQueued with a limit) are asked of the
// source as a first screen (PollOption.First), which a SQL source reads
// from its pull-order index, so that list --status READY --limit 20 costs
// the same on any queue; any other list, or a source that cannot answer a
// first screen cheaply, reads every task.
func List(ctx context.Context, src Source, want model.State, limit int) ([]*model.Task, int, error) {
	var opt []PollOption
	if want == model.StateQueued && limit > 0 {
		opt = append(opt, PollOption{First: limit + 1})
	}
	d, err := src.Poll(ctx, "", opt...)
	if err != nil {
		return nil, 0, err
	}
	out := Listed(d.Tasks, want)
	more := 0
	if limit > 0 && len(out) > limit {
		more = len(out) - limit
		if d.Partial {
			more = MoreUncounted
		}
		out = out[:limit]
	}
	return out, more, nil
}

// Listed is list's rule over tasks already read (of one source or of
// several): those in state want (model.StateUnknown: all), in pull order.
func Listed(tasks []*model.Task, want model.State) []*model.Task {
	out := []*model.Task{}
	for _, t := range tasks {
		if want == model.StateUnknown || t.State == want {
			out = append(out, t)
		}
	}
	model.SortPullOrder(out)
	return out
}
