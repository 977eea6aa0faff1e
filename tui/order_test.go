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
				task.EditedAt = task.EditedAt.Add(time.Duration(rng.IntN(1000)))
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

// Values the packed keys cannot hold still sort exactly.
func TestQueueSortFallsBackForUnpackableValues(t *testing.T) {
	for name, odd := range map[string]func(*model.Task){
		"a zero edit time":    func(t *model.Task) { t.EditedAt = time.Time{} },
		"a huge priority":     func(t *model.Task) { t.Priority = 1 << 40 },
		"a negative priority": func(t *model.Task) { t.Priority = -1 << 20 },
	} {
		t.Run(name, func(t *testing.T) {
			s := bigQueue(500, rand.New(rand.NewPCG(9, 10)))
			var tasks []*model.Task
			p := &pane{kind: queueView}
			for i, task := range s.Sources[0].Tasks {
				if i == 7 {
					odd(task)
				}
				tasks = append(tasks, task)
				p.members = append(p.members, row{t: task})
			}
			model.SortPullOrder(tasks)
			p.sortPullOrder()
			if got := rowKeys(p.members); !slices.Equal(got, keys(tasks)) {
				t.Fatal("the queue's order differs from model.SortPullOrder")
			}
		})
	}
}
