package hub

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/claimdeck/claimdeck/model"
)

// TestSlotsAgreeWithAMap puts and drops tasks at random, ids reused, and
// after every step asks the slots for every id a map of the same steps
// knows, and for ids it does not. Its index grows from empty and is emptied
// again, so probe runs wrap past the table's end and removals move entries
// back across it.
func TestSlotsAgreeWithAMap(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 1))
		s, want := newSlots(0), map[string]*model.Task{}
		ids := make([]string, 40+r.IntN(400))
		for i := range ids {
			ids[i] = fmt.Sprintf("TASK-%d", i)
		}
		for step := range 4000 {
			id := ids[r.IntN(len(ids))]
			// Mostly puts at first, then mostly drops, then even.
			if p := r.IntN(10); (step < 1500 && p < 7) || (step >= 1500 && step < 3000 && p < 2) || (step >= 3000 && p < 5) {
				task := &model.Task{ID: id, Title: fmt.Sprint(step)}
				if old := s.put(task); old != want[id] {
					t.Fatalf("seed %d step %d: put(%s) replaced %v, want %v", seed, step, id, old, want[id])
				}
				want[id] = task
			} else {
				s.drop(id)
				delete(want, id)
			}
			if len(s.live) != len(want) {
				t.Fatalf("seed %d step %d: %d live, want %d", seed, step, len(s.live), len(want))
			}
			for _, id := range ids {
				if got := s.task(id); got != want[id] {
					t.Fatalf("seed %d step %d: task(%s) = %v, want %v", seed, step, id, got, want[id])
				}
			}
			for i, task := range s.live {
				if at, ok := s.find(task.ID); !ok || s.index[at] != int32(i+1) {
					t.Fatalf("seed %d step %d: slot %d (%s) is not indexed", seed, step, i, task.ID)
				}
			}
		}
	}
}
