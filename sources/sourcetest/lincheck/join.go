package lincheck

import (
	"slices"
	"time"
)

// Join reads the queues a move handed a task through as one: each task as
// the last of them shows it, with the trails of all of them, each entry
// once, in time order. A move copies a task's trail, so the target's
// trail holds the origin's; joining also keeps what only the origin
// wrote (a claim whose answer was lost just before the freeze). Pass the
// reads in the order the queues served: origin first.
func Join(reads ...[]Seen) []Seen {
	at := map[string]int{}
	var out []Seen
	for _, read := range reads {
		for _, s := range read {
			i, ok := at[s.Task]
			if !ok {
				at[s.Task] = len(out)
				out = append(out, s)
				continue
			}
			trail := out[i].Trail
			out[i] = s
			for _, e := range s.Trail {
				if !slices.ContainsFunc(trail, func(o Event) bool { return o.At.Equal(e.At) && o.Actor == e.Actor && o.Action == e.Action }) {
					trail = append(trail, e)
				}
			}
			slices.SortStableFunc(trail, func(a, b Event) int { return a.At.Compare(b.At) })
			out[i].Trail = trail
		}
	}
	return out
}

// JoinedRead is one read of every task as Join joins them, called at call
// and returned at ret: the history's last word on where each task is.
func JoinedRead(client int, call, ret time.Time, reads ...[]Seen) Op {
	return Op{Client: client, Kind: Read, Call: call, Return: ret, Result: OK, Seen: Join(reads...)}
}
