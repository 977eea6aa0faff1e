package tui

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

// samePullOrder fails unless the Queue's fast sort puts tasks in exactly
// model.SortPullOrder's order.
func samePullOrder(t *testing.T, tasks []*model.Task) {
	t.Helper()
	p := &pane{kind: queueView}
	for _, task := range tasks {
		p.members = append(p.members, row{t: task})
	}
	want := slices.Clone(tasks)
	model.SortPullOrder(want)
	p.sortPullOrder()
	if got := rowKeys(p.members); !slices.Equal(got, keys(want)) {
		t.Fatal("the queue's order differs from model.SortPullOrder")
	}
}

func TestQueueSortIsExactlyModelPullOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	s := bigQueue(5000, rng)
	var tasks []*model.Task
	for _, src := range s.Sources {
		for _, task := range src.Tasks {
			if rng.IntN(10) == 0 {
				task.EditedAt = task.EditedAt.Add(time.Duration(rng.IntN(1000)))
			}
			tasks = append(tasks, task)
		}
	}
	samePullOrder(t, tasks)
}

// Values the packed keys cannot hold still sort exactly.
func TestQueueSortFallsBackForUnpackableValues(t *testing.T) {
	for name, odd := range map[string]func(*model.Task){
		"a zero edit time":    func(t *model.Task) { t.EditedAt = time.Time{} },
		"a huge priority":     func(t *model.Task) { t.Priority = 1 << 40 },
		"a negative priority": func(t *model.Task) { t.Priority = -1 << 20 },
	} {
		t.Run(name, func(t *testing.T) {
			tasks := bigQueue(500, rand.New(rand.NewPCG(9, 10))).Sources[0].Tasks
			odd(tasks[7])
			samePullOrder(t, tasks)
		})
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
