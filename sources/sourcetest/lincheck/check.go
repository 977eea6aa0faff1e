package lincheck

import (
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/anishathalye/porcupine"
)

// Report is the verdict on a history.
type Report struct {
	Tasks   int          // tasks (partitions) checked
	Ops     int          // operations in the history
	Kinds   map[Kind]int // operations by kind
	Pending int          // operations whose outcome is unknown
	Granted int          // claims and claim-nexts answered with a task
	// Illegal names the tasks whose history no order of the protocol
	// explains; Unknown those the search gave up on (Rules.Timeout).
	Illegal []string
	Unknown []string

	rules   Rules
	illegal [][]porcupine.Operation // the illegal partitions, for Visualize
}

// Linearizable reports whether every task's history was proven
// linearizable.
func (r Report) Linearizable() bool { return len(r.Illegal) == 0 && len(r.Unknown) == 0 }

func (r Report) String() string {
	var kinds []string
	for k, n := range r.Kinds {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(kinds)
	verdict := "linearizable"
	switch {
	case len(r.Illegal) > 0:
		verdict = fmt.Sprintf("NOT linearizable: %d tasks (%s)", len(r.Illegal), strings.Join(first(r.Illegal, 5), ", "))
	case len(r.Unknown) > 0:
		verdict = fmt.Sprintf("undecided: the search gave up on %d tasks (%s)", len(r.Unknown), strings.Join(first(r.Unknown, 5), ", "))
	}
	return fmt.Sprintf("%d operations on %d tasks (%s; %d with unknown outcome): %s",
		r.Ops, r.Tasks, strings.Join(kinds, ", "), r.Pending, verdict)
}

func first(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// Check proves each task's history linearizable against the protocol.
func Check(ops []Op, r Rules) Report {
	rep := Report{Ops: len(ops), Kinds: map[Kind]int{}, rules: r}
	end := int64(0)
	for _, o := range ops {
		rep.Kinds[o.Kind]++
		if o.Result == Unknown {
			rep.Pending++
		}
		if o.Result == OK && (o.Kind == Claim || o.Kind == ClaimNext) {
			rep.Granted++
		}
		end = max(end, o.Call.UnixNano(), o.Return.UnixNano())
	}
	end++ // a pending operation returns after everything else: never, as far as the history can tell
	parts, lost := partition(ops, end)
	tasks := make([]string, 0, len(parts))
	for t := range parts {
		tasks = append(tasks, t)
	}
	sort.Strings(tasks)
	rep.Tasks = len(tasks)

	m := r.model()
	verdicts := make([]porcupine.CheckResult, len(tasks))
	var wg sync.WaitGroup
	work := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range work {
				history := parts[tasks[i]]
				v := porcupine.CheckOperationsTimeout(m, history, r.Timeout)
				if v == porcupine.Illegal && len(lost) > 0 {
					// A claim-next whose answer was lost may have taken
					// this task: with them all, the verdict is the one
					// the whole history would get.
					history = append(slices.Clone(history), in(tasks[i], lost)...)
					v = porcupine.CheckOperationsTimeout(m, history, r.Timeout)
				}
				parts[tasks[i]] = history
				verdicts[i] = v
			}
		})
	}
	for i := range tasks {
		work <- i
	}
	close(work)
	wg.Wait()
	for i, t := range tasks {
		switch verdicts[i] {
		case porcupine.Illegal:
			rep.Illegal = append(rep.Illegal, t)
			rep.illegal = append(rep.illegal, parts[t])
		case porcupine.Unknown:
			rep.Unknown = append(rep.Unknown, t)
		}
	}
	return rep
}

// partition splits a history by task. A claim-next that found nothing
// joins every task; one whose answer was lost comes back as lost.
func partition(ops []Op, end int64) (map[string][]porcupine.Operation, []porcupine.Operation) {
	parts := map[string][]porcupine.Operation{}
	var everywhere, lost []porcupine.Operation
	add := func(task string, o *Op, seen *Seen) {
		ret := o.Return.UnixNano()
		hi := ret
		if o.Pending() {
			ret, hi = end, never
		}
		c := &call{op: o, lo: o.Call.UnixNano(), hi: hi, seen: seen}
		p := porcupine.Operation{ClientId: o.Client, Input: c, Call: c.lo, Output: c, Return: ret, Metadata: task}
		switch {
		case task != "":
			parts[task] = append(parts[task], p)
		case o.Result == None:
			everywhere = append(everywhere, p)
		default:
			lost = append(lost, p)
		}
	}
	for i := range ops {
		o := &ops[i]
		switch {
		case o.Kind == Read:
			for j := range o.Seen {
				add(o.Seen[j].Task, o, &o.Seen[j])
			}
		case len(o.Seen) > 0:
			add(o.Seen[0].Task, o, &o.Seen[0])
		case o.Kind == ClaimNext && o.Result != OK && o.Result != Unknown && o.Result != None:
			// refused before it chose a task: nothing to check
		default:
			add(o.Task, o, nil)
		}
	}
	for t := range parts {
		parts[t] = append(parts[t], in(t, everywhere)...)
	}
	return parts, lost
}

// in copies operations into task's partition.
func in(task string, ops []porcupine.Operation) []porcupine.Operation {
	out := slices.Clone(ops)
	for i := range out {
		out[i].Metadata = task
	}
	return out
}

func (r Rules) model() porcupine.Model {
	nm := porcupine.NondeterministicModel{
		Init: func() []any { return []any{state{}} },
		Step: func(s, in, _ any) []any {
			next := r.step(s.(state), *in.(*call))
			out := make([]any, len(next))
			for i, n := range next {
				out[i] = n
			}
			return out
		},
		Equal:             func(a, b any) bool { return a.(state) == b.(state) },
		DescribeOperation: func(in, _ any) string { return in.(*call).String() },
		DescribeState:     func(s any) string { return s.(state).String() },
	}
	return nm.ToModel()
}

// Visualize writes Porcupine's HTML view of the illegal tasks' histories
// (at most ten) to path: the longest order the protocol allows, and where
// it stops.
func (r Report) Visualize(path string) error {
	if len(r.illegal) == 0 {
		return nil
	}
	var all []porcupine.Operation
	for _, p := range r.illegal[:min(len(r.illegal), 10)] {
		all = append(all, p...)
	}
	m := r.rules.model()
	m.Partition = func(h []porcupine.Operation) [][]porcupine.Operation {
		byTask := map[string][]porcupine.Operation{}
		var order []string
		for _, o := range h {
			t := o.Metadata.(string)
			if byTask[t] == nil {
				order = append(order, t)
			}
			byTask[t] = append(byTask[t], o)
		}
		out := make([][]porcupine.Operation, len(order))
		for i, t := range order {
			out[i] = byTask[t]
		}
		return out
	}
	_, info := porcupine.CheckOperationsVerbose(m, all, r.rules.Timeout)
	return porcupine.VisualizePath(m, info, path)
}
