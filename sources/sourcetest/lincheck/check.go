package lincheck

import (
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

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
	ops = slices.Clone(ops)
	slices.SortStableFunc(ops, func(a, b Op) int { return a.Call.Compare(b.Call) })
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
	for t, cands := range r.attribute(ops, lost) {
		if parts[t] != nil {
			parts[t] = append(parts[t], in(t, cands)...)
		}
	}
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
				verdicts[i] = porcupine.CheckOperationsTimeout(m, parts[tasks[i]], r.Timeout)
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
// joins every task; one whose answer was lost comes back as lost. A
// create whose answer was lost joins every task no create made.
func partition(ops []Op, end int64) (map[string][]porcupine.Operation, []porcupine.Operation) {
	parts := map[string][]porcupine.Operation{}
	var everywhere, lost, creates []porcupine.Operation
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
		case o.Kind == Create:
			creates = append(creates, p)
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
	for t, p := range parts {
		// A claim-next that found nothing only says something about a
		// task while it can change: not before its first operation, not
		// after a finish answered ok (final states stay final).
		from, to := int64(never), int64(never)
		created := false
		for _, q := range p {
			c := q.Input.(*call)
			from = min(from, q.Call)
			created = created || c.op.Kind == Create
			if c.op.Kind == Finish && c.op.Result == OK && final(c.op.Outcome) {
				to = min(to, q.Return)
			}
		}
		if !created {
			// a create whose answer was lost made the task, before the
			// task was first seen
			for _, q := range creates {
				if q.Call <= from {
					q.Metadata = t
					parts[t] = append(parts[t], q)
				}
			}
		}
		for _, q := range everywhere {
			if q.Return >= from && q.Call <= to {
				q.Metadata = t
				parts[t] = append(parts[t], q)
			}
		}
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
// (the three shortest) to path: the longest order the protocol allows, and where
// it stops.
func (r Report) Visualize(path string) error {
	if len(r.illegal) == 0 {
		return nil
	}
	var all []porcupine.Operation
	smallest := slices.Clone(r.illegal)
	slices.SortFunc(smallest, func(a, b []porcupine.Operation) int { return len(a) - len(b) })
	for _, p := range smallest[:min(len(smallest), 3)] {
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

// attributionSlack is how long after its agent's next call a lost claim may
// still have landed: a server finishes a request its client died in.
const attributionSlack = time.Second

// attribute finds, for each task, the claims whose answer was lost that
// took it: each claim in its trail (every entry any read showed; a list
// may show only the latest) by an agent that no answered claim
// explains becomes one claim of unknown outcome by that agent, at an
// instant within the windows of the agent's lost claim-nexts that reach
// the trail's time (a killed call's window ends at its agent's next call,
// plus attributionSlack). One agent cannot claim one task twice within a
// lease, so one trail entry is one claim. A claim the trail does not show
// is taken to have not landed.
func (r Rules) attribute(ops []Op, lost []porcupine.Operation) map[string][]porcupine.Operation {
	trails := map[string][]Event{}
	type claimAt struct {
		task, agent string
		lo, hi      int64
	}
	var answered []claimAt
	next := map[*Op]int64{}
	last := map[int]*Op{}
	for i := range ops {
		o := &ops[i]
		if p := last[o.Client]; p != nil {
			next[p] = o.Call.UnixNano()
		}
		last[o.Client] = o
		if o.Kind == Read {
			for _, s := range o.Seen {
				for _, e := range s.Trail {
					if !slices.Contains(trails[s.Task], e) {
						trails[s.Task] = append(trails[s.Task], e)
					}
				}
			}
		}
		if (o.Kind == Claim || o.Kind == ClaimNext) && o.Result == OK && len(o.Seen) > 0 {
			answered = append(answered, claimAt{o.Seen[0].Task, o.Agent, o.Call.UnixNano(), o.Return.UnixNano()})
		}
	}
	res := int64(r.Resolution)
	out := map[string][]porcupine.Operation{}
	for task, trail := range trails {
		for _, e := range trail {
			if e.Action != "claim" && e.Action != "rescue" {
				continue
			}
			at := e.At.UnixNano()
			if slices.ContainsFunc(answered, func(a claimAt) bool {
				return a.task == task && a.agent == e.Actor && a.lo <= at+res && at <= a.hi
			}) {
				continue
			}
			var one *call
			var ret int64
			for _, p := range lost {
				c := p.Input.(*call)
				upper, ok := next[c.op]
				if ok {
					upper += int64(attributionSlack)
				} else {
					upper = p.Return
				}
				if c.op.Agent != e.Actor || c.lo > at+res || at > upper {
					continue
				}
				if one == nil {
					o := *c.op
					o.Task = task
					one = &call{op: &o, lo: c.lo, hi: upper}
					ret = p.Return
				}
				one.lo, one.hi = min(one.lo, c.lo), max(one.hi, upper)
				ret = max(ret, min(p.Return, upper))
			}
			if one != nil {
				out[task] = append(out[task], porcupine.Operation{ClientId: one.op.Client, Input: one, Call: one.lo, Output: one, Return: ret, Metadata: task})
			}
		}
	}
	return out
}
