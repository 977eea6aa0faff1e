package hub

import (
	"iter"
	"slices"

	"github.com/claimdeck/claimdeck/model"
)

// Tasks are a source's tasks as a snapshot holds them: the live ones in
// parts of partSize, then those only the archive holds. A part no change
// touched is shared with the snapshot before, so a poll that changed k of
// n tasks publishes at most k parts and a table of n/partSize pointers,
// where a copy of the whole list was n pointers: at 10,000 tasks and 100
// changed, BenchmarkPollMergePublish allocated 100 KB a poll that way,
// and the snapshots alive at once each held their own copy.
//
// Tasks are never written once published; read them with Len, All, At
// and AppendTo.
type Tasks struct {
	parts []*part
	live  int           // tasks in parts; every part but the last is full
	extra []*model.Task // the archive's others, after the live ones
}

const partShift = 5

// partSize is how many tasks a part holds: small enough that a change
// copies little, large enough that the table of parts stays small.
const partSize = 1 << partShift

type part [partSize]*model.Task

// TasksOf are tasks in the order given, for a snapshot built by hand
// (tests, tools).
func TasksOf(ts []*model.Task) Tasks {
	l := Tasks{live: len(ts)}
	for lo := 0; lo < len(ts); lo += partSize {
		p := new(part)
		copy(p[:], ts[lo:])
		l.parts = append(l.parts, p)
	}
	return l
}

// Len is how many tasks there are.
func (l Tasks) Len() int { return l.live + len(l.extra) }

// At is the i-th task, 0 ≤ i < Len.
func (l Tasks) At(i int) *model.Task {
	if i < l.live {
		return l.parts[i>>partShift][i&(partSize-1)]
	}
	return l.extra[i-l.live]
}

// All yields every task in order.
func (l Tasks) All() iter.Seq[*model.Task] {
	return func(yield func(*model.Task) bool) {
		for i, p := range l.parts {
			for _, t := range p[:min(partSize, l.live-i*partSize)] {
				if !yield(t) {
					return
				}
			}
		}
		for _, t := range l.extra {
			if !yield(t) {
				return
			}
		}
	}
}

// AppendTo appends every task, in order, to dst.
func (l Tasks) AppendTo(dst []*model.Task) []*model.Task {
	dst = slices.Grow(dst, l.Len())
	for i, p := range l.parts {
		dst = append(dst, p[:min(partSize, l.live-i*partSize)]...)
	}
	return append(dst, l.extra...)
}

// Same says whether two Tasks are one publish's: then they hold the same
// tasks, without looking at any. (Equal tasks published twice are not
// the Same; an idle poll publishes none.)
func (l Tasks) Same(m Tasks) bool {
	return l.live == m.live && len(l.extra) == len(m.extra) &&
		(len(l.parts) == 0 || &l.parts[0] == &m.parts[0]) &&
		(len(l.extra) == 0 || &l.extra[0] == &m.extra[0])
}

// publish is the slots' tasks as Tasks, with extra after them: the
// parts no put or drop touched since the last publish are shared with it.
func (s *slots) publish(extra []*model.Task) Tasks {
	n := len(s.live)
	parts := make([]*part, (n+partSize-1)>>partShift)
	for i := range parts {
		if i < len(s.pub) && !s.touched(i) {
			parts[i] = s.pub[i]
			continue
		}
		p := new(part)
		copy(p[:], s.live[i<<partShift:])
		parts[i] = p
	}
	s.pub = parts
	clear(s.dirty)
	return Tasks{parts: parts, live: n, extra: extra}
}

// touch notes that slot i changed since the last publish.
func (s *slots) touch(i int) {
	w := i >> (partShift + 6)
	if w >= len(s.dirty) {
		s.dirty = append(s.dirty, make([]uint64, w+1-len(s.dirty))...)
	}
	s.dirty[w] |= 1 << (uint(i>>partShift) & 63)
}

// touched says whether part i changed since the last publish.
func (s *slots) touched(i int) bool {
	w := i >> 6
	return w < len(s.dirty) && s.dirty[w]&(1<<(uint(i)&63)) != 0
}
