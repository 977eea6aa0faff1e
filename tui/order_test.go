package tui

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/hub"
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
		for task := range src.Tasks.All() {
			// Microseconds apart within a second, so that the edit's
			// microsecond and the source, packed together, must both order.
			if rng.IntN(3) == 0 {
				task.EditedAt = model.StampOf(task.EditedAt.Time().Add(time.Duration(1+rng.IntN(3)) * time.Microsecond))
			}
			tasks = append(tasks, task)
		}
	}
	samePullOrder(t, tasks)
}

// Values the packed keys cannot hold still sort exactly.
func TestQueueSortFallsBackForUnpackableValues(t *testing.T) {
	for name, odd := range map[string]func(*model.Task){
		"a zero edit time":    func(t *model.Task) { t.EditedAt = 0 },
		"a huge priority":     func(t *model.Task) { t.Priority = 1 << 40 },
		"a negative priority": func(t *model.Task) { t.Priority = -1 << 20 },
	} {
		t.Run(name, func(t *testing.T) {
			tasks := bigQueue(500, rand.New(rand.NewPCG(9, 10))).Sources[0].Tasks.AppendTo(nil)
			odd(tasks[7])
			samePullOrder(t, tasks)
		})
	}
}

func TestAnIdleSnapshotDoesNotRebuildTheViews(t *testing.T) {
	r := newRig(t)
	s := r.m.board.snap
	before := &r.m.board.panes[queueView].members[0]
	s.Sources[0].Updated = r.now
	r.m.Update(snapshotMsg(s))
	if &r.m.board.panes[queueView].members[0] != before || r.m.board.panes[queueView].unsorted {
		t.Fatal("a snapshot with the same task lists rebuilt the views")
	}
}

// The Queue the dashboard shows after each snapshot is model.SortPullOrder
// of the eligible tasks: keys packed while merging, ties, a value the keys
// cannot hold arriving in a later snapshot, and sorts after an idle
// snapshot let the sort buffers go.
func TestTheQueueIsInPullOrderAfterEverySnapshot(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	s := bigQueue(9000, rng)
	m, err := New(Options{Hub: hub.New(hub.Config{}), Now: func() time.Time { return t0 }, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	for round := range 3 {
		next := s
		next.Sources = slices.Clone(s.Sources)
		for i := range next.Sources {
			tasks := next.Sources[i].Tasks.AppendTo(nil)
			for j := range tasks {
				if rng.IntN(5) == 0 {
					changed := *tasks[j]
					changed.EditedAt = model.StampOf(changed.EditedAt.Time().Add(time.Duration(rng.IntN(1000))))
					tasks[j] = &changed
				}
			}
			if round == 2 && i == 1 {
				odd := *tasks[3]
				odd.Priority = 1 << 40
				tasks[3] = &odd
			}
			next.Sources[i].Tasks = hub.TasksOf(tasks)
		}
		s = next
		m.Update(snapshotMsg(s))
		var want []*model.Task
		for _, src := range s.Sources {
			for task := range src.Tasks.All() {
				if model.Eligible(task, t0) {
					want = append(want, task)
				}
			}
		}
		model.SortPullOrder(want)
		q := m.board.panes[queueView]
		if got := rowKeys(q.shown); !slices.Equal(got, keys(want)) {
			t.Fatalf("snapshot %d: the Queue is not in pull order", round+1)
		}
		if len(want) <= maxKeptSort || cap(q.keys) == 0 {
			t.Fatalf("snapshot %d: %d queued, sort buffers of %d: the test no longer reaches the release", round+1, len(want), cap(q.keys))
		}
		if round == 0 {
			idle := s
			idle.Seq++
			m.Update(snapshotMsg(idle))
			if q.keys != nil || q.ties != nil {
				t.Fatal("an idle snapshot kept the Queue's sort buffers")
			}
		}
	}
}

// A queue loaded in bulk has runs of thousands of equal pull keys, ordered
// by source and id alone: short, long, shared-prefix and NUL-padded ids.
// (Ids are unique, as they are in a source, so the order is total.)
func TestQueueSortOrdersBulkTiesBySourceAndID(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	var tasks []*model.Task
	for i := range 3000 {
		id := []string{"TASK-", "a-rather-long-shared-prefix-", "", "x\x00"}[i%4] + strconv.Itoa(i*7919%3001) // unique: 3001 is prime
		if i%7 == 0 {
			id += "\x00"
		}
		tasks = append(tasks, &model.Task{Source: []string{"prod", "staging"}[rng.IntN(2)], ID: id, Key: id + "#" + strconv.Itoa(i),
			State: model.StateQueued, Class: model.ClassStandard, Priority: 2, CreatedAt: model.StampOf(t0), EditedAt: model.StampOf(t0)})
	}
	samePullOrder(t, tasks)
}

// radixSort orders any keys as a stable sort by keyLess's fields does:
// keys drawn from few values in each field, so that buckets, shared bytes
// and equal keys abound, at sizes around the insertion sort's bucket and
// well past it.
func TestRadixSortOrdersAsKeyLess(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	pick := func(vals ...uint64) uint64 { return vals[rng.IntN(len(vals))] }
	for _, n := range []int{0, 1, 2, flagBucket, flagBucket + 1, 300, 5000} {
		for range 20 {
			keys := make([]pullKey, n)
			for i := range keys {
				keys[i] = pullKey{key: pick(0, 1, 1<<8, 1<<56, 1<<63|7), sub: uint32(pick(0, 3, 1<<24, 1<<31)),
					id0: pick(0, 'T'<<56, 'T'<<56|1<<16), id1: pick(0, 5, 1<<40), idx: int32(i)}
			}
			want := slices.Clone(keys)
			slices.SortStableFunc(want, func(a, b pullKey) int {
				return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.sub, b.sub), cmp.Compare(a.id0, b.id0), cmp.Compare(a.id1, b.id1))
			})
			radixSort(keys)
			for i := range keys {
				if keys[i] != want[i] {
					t.Fatalf("%d keys: at %d %+v, want %+v", n, i, keys[i], want[i])
				}
			}
		}
	}
}
