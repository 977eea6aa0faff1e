package tui

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

// The Queue's fast sort must be exactly the model's pull order, ties and
// zero edit times included.
func TestQueueSortIsExactlyModelPullOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	s := bigQueue(5000, rng)
	var tasks []*model.Task
	p := &pane{kind: queueView}
	for _, src := range s.Sources {
		for _, task := range src.Tasks {
			if rng.IntN(10) == 0 {
				task.EditedAt = time.Time{}
			}
			tasks = append(tasks, task)
			p.members = append(p.members, row{t: task})
		}
	}
	model.SortPullOrder(tasks)
	p.sortPullOrder()
	if got := rowKeys(p.members); !slices.Equal(got, keys(tasks)) {
		t.Fatal("the queue's order differs from model.SortPullOrder")
	}
}

func TestAnIdleSnapshotDoesNotRebuildTheViews(t *testing.T) {
	r := newRig(t)
	s := r.m.snap
	before := &r.m.panes[queueView].members[0]
	s.Sources[0].Updated = r.now
	r.m.Update(snapshotMsg(s))
	if &r.m.panes[queueView].members[0] != before || r.m.panes[queueView].unsorted {
		t.Fatal("a snapshot with the same task lists rebuilt the views")
	}
}
