package hub

import (
	"hash/maphash"

	"github.com/claimdeck/claimdeck/model"
)

// slots hold a source's tasks in a slice, with an index of where each id
// is: a poll that changed k of n tasks writes k slots, and a publish
// copies the slice instead of walking a map of n.
//
// The index is a table of slot numbers, open-addressed with linear
// probing and kept at most half full; each entry is the slot plus one, 0
// being empty, and the id it stands for is the task's own. At 100,000
// tasks it is 1 MB where a map[string]int32, holding a copy of each id's
// header beside its number, was about 4 MB of a dashboard's 52 MB live.
type slots struct {
	live  []*model.Task
	seed  maphash.Seed
	index []int32
	// pub are the parts of live last published (publish), and dirty marks
	// the parts touched since, a bit each.
	pub   []*part
	dirty []uint64
}

// newSlots makes slots with room for n tasks.
func newSlots(n int) slots {
	return slots{live: make([]*model.Task, 0, n), seed: maphash.MakeSeed(), index: make([]int32, indexSize(n))}
}

// indexSize is the smallest power of two at least twice n, and at least 8.
func indexSize(n int) int {
	size := 8
	for size < 2*n {
		size <<= 1
	}
	return size
}

// home is where id's probe starts.
func (s *slots) home(id string) int {
	return int(maphash.String(s.seed, id) & uint64(len(s.index)-1))
}

// find is the index entry of id, or the empty entry where it would go.
func (s *slots) find(id string) (at int, found bool) {
	mask := len(s.index) - 1
	for at = s.home(id); ; at = (at + 1) & mask {
		switch v := s.index[at]; {
		case v == 0:
			return at, false
		case s.live[v-1].ID == id:
			return at, true
		}
	}
}

// task is the task id, or nil.
func (s *slots) task(id string) *model.Task {
	if at, ok := s.find(id); ok {
		return s.live[s.index[at]-1]
	}
	return nil
}

// put makes t the task t.ID, in its slot or in a new one, and returns
// the task it replaces (nil for a new one): one lookup where task and
// then put took two.
func (s *slots) put(t *model.Task) (old *model.Task) {
	if 2*(len(s.live)+1) > len(s.index) {
		s.rebuild(indexSize(len(s.live) + 1))
	}
	at, ok := s.find(t.ID)
	if ok {
		i := s.index[at] - 1
		old, s.live[i] = s.live[i], t
		s.touch(int(i))
		return old
	}
	s.live = append(s.live, t)
	s.index[at] = int32(len(s.live))
	s.touch(len(s.live) - 1)
	return nil
}

// rebuild makes the index anew at size entries.
func (s *slots) rebuild(size int) {
	s.index = make([]int32, size)
	for i, t := range s.live {
		at, _ := s.find(t.ID)
		s.index[at] = int32(i + 1)
	}
}

// drop removes the task id: the last task moves into its slot.
func (s *slots) drop(id string) {
	at, ok := s.find(id)
	if !ok {
		return
	}
	i, last := s.index[at]-1, len(s.live)-1
	if moved := s.live[last]; int(i) != last {
		to, _ := s.find(moved.ID)
		s.index[to], s.live[i] = i+1, moved
		s.touch(int(i))
	}
	s.touch(last)
	s.live[last] = nil
	s.live = s.live[:last]
	s.vacate(at)
}

// vacate empties the index entry at and moves back each later entry of
// its probe run that may stand there, so that every id stays reachable
// from its home without a marker for the removed one.
func (s *slots) vacate(at int) {
	mask := len(s.index) - 1
	for hole, next := at, at; ; {
		s.index[hole] = 0
		for {
			next = (next + 1) & mask
			v := s.index[next]
			if v == 0 {
				return
			}
			// The entry at next may fill the hole unless its home lies
			// cyclically in (hole, next]: then the hole is before its probe.
			if home := s.home(s.live[v-1].ID); (next-home)&mask >= (next-hole)&mask {
				s.index[hole] = v
				hole = next
				break
			}
		}
	}
}
