package tui

import (
	"cmp"
	"slices"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/hub"
)

// board is the snapshot turned into rows: every task, each view's members
// sorted and filtered, the stale tasks' classifications, the marks and the
// Activity lines. It owns the performance tricks that keep a 100k queue
// quick (one pass that classifies, places and judges each task while it is
// in the cache; only the view on screen kept fresh) and knows nothing of
// keys, dialogs or drawing.
type board struct {
	now func() time.Time

	snap hub.Snapshot
	all  []*model.Task // every task of the snapshot, with action results on top
	// ranks are the snapshot's sources in PullCompare's order, for the
	// Queue's packed keys.
	ranks sourceRanks
	subs  model.SubtaskIndex
	// stale and staleClass are the stale tasks and their classifications
	// (from the snapshot) as of the last derive, in step; class indexes
	// them by task, built by classes() only when a view or filter asks, so
	// a snapshot applied under the Queue pays no map insert per stale claim.
	stale      []*model.Task
	staleClass []model.Classification
	class      map[*model.Task]model.Classification
	classReady bool
	sick       map[string]bool      // sources whose last poll failed: their rows are marked
	boundary   time.Time            // the next time a task changes view by the clock alone
	rungs      [levelBroken + 1]int // stale rows by severity, for the alarm in the top bar
	reviews    int                  // tasks waiting for a reviewer, for the top bar
	touched    int                  // keeps derive's touching loop from being optimized away
	derived    uint64               // derives so far: the root re-reads the stale claims after one
	// allBuilt says the All view's members hold the tasks of the last
	// derive; they are made only for a derive or freshen with All on screen.
	allBuilt bool

	panes  [viewCount]*pane
	active viewKind // the view on screen: the only one kept fresh

	flt model.Filter // the filter in force: the last one that parsed
	// judged says the rows' pass flags hold the filter's verdict: true
	// only during the freshen that follows derive, at derive's time.
	judged bool
	// scope is the one source every view shows (:source), "" for all.
	scope string
	// marks are the tasks an action applies to instead of the cursor's,
	// each as it was when marked: a bulk action applies only to that version.
	marks map[string]*model.Task
	// markFrom is the task (Ref) a ctrl-space range starts from: the last
	// one marked.
	markFrom string
	// results are what actions returned, shown at once over the snapshot
	// until the hub publishes one that has merged them (snapshot Seq ≥ the
	// recorded one); which version wins after that is the hub's rule.
	results map[string]actionResult
	acts    []activity // the Activity lines, oldest first
	// undo holds, for each narrowing keystroke, the rows the pane showed
	// before it, so that backspace puts them back instead of filtering the
	// whole view again; spare is a row buffer for the next narrowing.
	undo  []narrowing
	spare []row
}

// narrowing is a pane's rows under a filter, before a keystroke narrowed it.
type narrowing struct {
	flt  model.Filter
	kind viewKind
	rows []row
}

// maxUndo is how many narrowing keystrokes backspace can take back
// without filtering the view again.
const maxUndo = 16

// actionResult is an applied action's task and the snapshot that carries it.
type actionResult struct {
	after *model.Task
	seq   uint64
}

func newBoard(now func() time.Time, keys *KeyMap) *board {
	return &board{now: now, panes: newPanes(keys), class: map[*model.Task]model.Classification{},
		marks: map[string]*model.Task{}, sick: map[string]bool{}, results: map[string]actionResult{}}
}

func (b *board) pane() *pane { return b.panes[b.active] }

// take holds a new snapshot: sources, transitions and notices, then the
// rows when the tasks or the DOWN nodes changed.
func (b *board) take(s hub.Snapshot) {
	same := sameTasks(b.snap, s) && sameMesh(b.snap.Mesh, s.Mesh)
	nodesChanged := b.snap.Mesh != s.Mesh
	b.snap = s
	clear(b.sick)
	for i := range s.Sources {
		if s.Sources[i].Status == hub.StatusDegraded {
			b.sick[s.Sources[i].Name] = true
		}
	}
	for _, tr := range s.Transitions {
		b.addActivity(transitionActivity(tr))
	}
	for _, n := range s.Notices {
		b.addActivity(activity{At: n.At, Source: n.Source, Task: n.Task, Actor: cmp.Or(n.By, "sweep"), What: n.What, Failed: n.Failed})
	}
	if b.active == activityView {
		b.freshen(b.pane())
	}
	retired := false
	for ref, r := range b.results {
		if s.Seq >= r.seq {
			delete(b.results, ref)
			retired = true
		}
	}
	switch {
	case !same || retired:
		b.derive()
		return
	case nodesChanged:
		b.panes[nodesView].unsorted = true
		if b.active == nodesView {
			b.freshen(b.pane())
		}
	}
	// The tasks stand still: the sorts' buffers wait for the next change
	// unkept.
	b.releaseSortBuffers()
}

// releaseSortBuffers lets go of every big pane's sort buffers.
func (b *board) releaseSortBuffers() {
	for _, p := range b.panes {
		p.releaseSortBuffers()
	}
}

// sameMesh reports whether two meshes hold the same nodes DOWN, the only
// thing about them that moves a task between views.
func sameMesh(a, b *model.Mesh) bool {
	if a == b {
		return true
	}
	x, y := a.Nodes(), b.Nodes()
	if (a == nil) != (b == nil) || len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i].Name != y[i].Name || (x[i].Status == model.NodeDown) != (y[i].Status == model.NodeDown) {
			return false
		}
	}
	return true
}

// sameTasks reports whether two snapshots share every source's task list.
// The hub reuses a source's list until its tasks change, so an idle poll
// (only "updated Ns ago" moves) costs nothing here.
func sameTasks(a, b hub.Snapshot) bool {
	if len(a.Sources) != len(b.Sources) {
		return false
	}
	for i := range a.Sources {
		if !a.Sources[i].Tasks.Same(b.Sources[i].Tasks) {
			return false
		}
	}
	return true
}

// gather lays every source's tasks side by side, action results on top.
func (b *board) gather() {
	n := b.snap.Len()
	all := b.all[:0]
	if cap(all) < n {
		all = make([]*model.Task, 0, n)
	}
	for i := range b.snap.Sources {
		all = b.snap.Sources[i].Tasks.AppendTo(all)
	}
	if len(b.results) > 0 {
		for i, t := range all {
			if r, ok := b.results[t.Ref()]; ok {
				all[i] = r.after
			}
		}
	}
	b.all = all
}

// derive rebuilds every view from the snapshot: merge, classify, then sort
// and filter the view on screen (the others when they are shown).
func (b *board) derive() {
	now := b.now()
	b.gather()
	b.subs = model.SubtaskIndex{}
	for _, k := range []viewKind{queueView, leasesView, staleView, parkedView, allView} {
		p := b.panes[k]
		p.leave() // before the members are rebuilt: shown may be them
		p.members = p.members[:0]
	}
	// All holds every task: its rows are made only while it is on screen
	// (freshen makes them when it comes back), not kept at every derive
	// for a view nobody looks at (1.6 MB at 100,000 tasks).
	all := b.panes[allView]
	if b.allBuilt = b.active == allView; b.allBuilt {
		all.members = slices.Grow(all.members, len(b.all))
	} else {
		all.members = nil
	}
	var boundary time.Time
	b.stale, b.staleClass, b.classReady = b.stale[:0], b.staleClass[:0], false
	// The Queue's pull keys are packed here, while each task is in the
	// cache, rather than by the sort in a second pass over the heap.
	q := b.panes[queueView]
	q.keys, q.packed = q.keys[:0], q.sort == 0 && q.grid.sortCol < 0
	if q.packed {
		// Sized as the Queue was, when the last sort let its buffers go.
		q.keys = slices.Grow(q.keys, cap(q.members))
		names := make([]string, len(b.snap.Sources))
		for i := range b.snap.Sources {
			names[i] = b.snap.Sources[i].Name
		}
		b.ranks = rankSources(names)
	}
	var touched int
	b.rungs, b.reviews = [levelBroken + 1]int{}, 0
	// The filter is judged here too, while each task is in the cache; the
	// freshen below reads the verdicts instead of visiting 100k tasks again.
	judge := len(b.flt.Terms) > 0 || b.scope != ""
	for at, t := range b.all {
		if at%deriveBlock == 0 {
			block := b.all[at:min(at+deriveBlock, len(b.all))]
			touched += touchTasks(block)
			if judge {
				touched += touchText(block)
			}
		}
		b.subs.Add(t)
		c := b.snap.Classify(t, now)
		if ch := c.Changes; ch.After(now) && (boundary.IsZero() || ch.Before(boundary)) {
			boundary = ch
		}
		b.place(t, &c, now, judge)
	}
	b.boundary, b.touched = boundary, touched
	b.derived++
	for _, p := range b.panes {
		p.unsorted = true
	}
	b.judged = true // for this freshen only: a later one judges at its own time
	b.freshen(b.pane())
	b.judged = false
}

// appendDoubling appends v to s, doubling s when it is full. The views
// are rebuilt in place at every derive, so they grow only as the queue
// does, but at the first load they grow from nothing to 100,000 rows or a
// million: append's own growth (a quarter at a time past 256 elements)
// left four times their size behind as garbage, 328 MB at a million
// tasks, and the collector's goal and the peak rose with it. Doubling
// leaves at most their size.
func appendDoubling[T any](s []T, v T) []T {
	if len(s) == cap(s) {
		s = slices.Grow(s, max(len(s), 256))
	}
	return append(s, v)
}

// place adds a classified task to the views it belongs to; the filter is
// judged only for a task that joins the view on screen.
func (b *board) place(t *model.Task, c *model.Classification, now time.Time, judge bool) {
	var in [viewCount]bool
	in[allView], in[parkedView], in[staleView] = true, parked(t), c.Stale()
	switch {
	case t.Problem() != "":
	case b.snap.Pooled(t, now):
		in[queueView] = true
	case t.State == model.StateClaimed && t.Held():
		in[leasesView] = !c.Stale()
	}
	if t.State == model.StateReview {
		b.reviews++
	}
	r := row{t: t, pass: !judge || !in[b.active] || b.passes(t, c, now)}
	if b.allBuilt {
		b.panes[allView].members = append(b.panes[allView].members, r) // sized by derive
	}
	if in[parkedView] {
		b.panes[parkedView].members = appendDoubling(b.panes[parkedView].members, r)
	}
	if q := b.panes[queueView]; in[queueView] {
		if q.packed {
			k, ok := pack(t, len(q.members), b.ranks)
			q.keys, q.packed = appendDoubling(q.keys, k), ok
		}
		q.members = appendDoubling(q.members, r)
	}
	if in[leasesView] {
		b.panes[leasesView].members = appendDoubling(b.panes[leasesView].members, r)
	}
	if in[staleView] {
		b.panes[staleView].members = appendDoubling(b.panes[staleView].members, r)
		b.stale, b.staleClass = append(b.stale, t), append(b.staleClass, *c)
		b.rungs[severity(*c)]++
	}
}

// parked is work waiting on someone: blocked, in review or failed.
func parked(t *model.Task) bool {
	return t.State == model.StateBlocked || t.State == model.StateReview || t.State == model.StateFailed
}

// deriveBlock is how many tasks derive touches ahead of classifying them.
const deriveBlock = 32

// touchTasks reads a word from each cache line of a task that derive
// reads. Classifying a task takes long enough that the processor waits for
// each of its cache misses in turn; this loop is short, so the misses of a
// whole block overlap, and classifying then finds the lines in the cache.
func touchTasks(block []*model.Task) int {
	n := 0
	for _, t := range block {
		n += int(t.State) + t.Priority + int(t.EditedAt.Time().Unix()) + len(t.ReservedFor()) + len(t.Problem()) + len(t.Parent())
		if t.Held() { // the claim, where it has one
			n++
		}
		if t.State == model.StateClaimed && t.ID != "" {
			// A stale claim's id is hashed for its alarm: fetch its bytes too.
			n += int(t.ID[0])
		}
	}
	return n
}

// touchText reads the first and last byte of the texts a free word is
// matched on, for a block of tasks, so that their misses overlap.
func touchText(block []*model.Task) int {
	n := 0
	for _, t := range block {
		n += touchOneText(t)
	}
	return n
}

func touchOneText(t *model.Task) int {
	n := 0
	for _, s := range [...]string{t.Key, t.Title, t.ID} {
		if len(s) > 0 {
			n += int(s[0]) + int(s[len(s)-1])
		}
	}
	return n
}

// freshen sorts and filters a pane that is out of date, keeping the cursor
// on the same task where it can.
func (b *board) freshen(p *pane) {
	if !p.unsorted && !p.unfiltered {
		return
	}
	resort := p.unsorted
	p.unsorted, p.unfiltered = false, false
	clear(b.undo) // rows judged before this freshen no longer stand
	b.undo = b.undo[:0]
	keep := p.selectedTask()
	if p.shown == nil {
		keep = p.kept // its rows were let go at a derive
	}
	p.kept = nil
	if p.kind == allView && !b.allBuilt {
		p.members = slices.Grow(p.members[:0], len(b.all))
		for _, t := range b.all {
			p.members = append(p.members, row{t: t, pass: true})
		}
		b.allBuilt = true
	}
	switch p.kind {
	case nodesView:
		p.nodes = p.nodes[:0]
		nodes := b.snap.Mesh.Nodes()
		for i := range nodes {
			if matchNode(&nodes[i], b.flt) {
				p.nodes = append(p.nodes, nodes[i])
			}
		}
		p.sortNodes()
	case activityView:
		// b.acts is oldest first; the view's first order is newest first.
		p.acts = p.acts[:0]
		for i := range b.acts {
			if (b.scope == "" || b.acts[i].Source == b.scope) && matchActivity(&b.acts[i], b.flt) {
				p.acts = append(p.acts, b.acts[i])
			}
		}
		if p.sort == 0 {
			slices.Reverse(p.acts)
		}
	case statsView:
	default:
		if resort {
			p.sortTasks(b.classes)
		}
		switch dst := p.shown[:0]; {
		case len(b.flt.Terms) == 0 && b.scope == "":
			// Every row passes: the view shows its members themselves, not
			// a copy (1.2 MB for a queue of 75,000). derive lets go of
			// shown (leave) before it rebuilds the members in place.
			p.shown = p.members
		case sameRows(dst, p.members):
			p.shown = b.filterTasks(nil, p.members) // never into the members themselves
		default:
			p.shown = b.filterTasks(dst, p.members)
		}
	}
	p.grid.SetLen(p.len())
	if keep != nil {
		// Fields, not Ref(): no string built per row of 100k.
		for i, r := range p.shown {
			if r.t.ID == keep.ID && r.t.Source == keep.Source {
				p.grid.Select(i)
				break
			}
		}
	}
}

// refilterAll marks every pane to be filtered again and freshens the one
// on screen.
func (b *board) refilterAll() {
	for _, p := range b.panes {
		p.unfiltered = true
	}
	b.freshen(b.pane())
}

// sameRows reports whether two row slices share their array: a view's
// shown rows are its members when no filter is in force.
func sameRows(a, b []row) bool {
	return cap(a) > 0 && cap(b) > 0 && &a[:cap(a)][0] == &b[:cap(b)][0]
}

// filterTasks appends the rows of src that pass the filter to dst.
func (b *board) filterTasks(dst, src []row) []row {
	f := b.flt
	if len(f.Terms) == 0 && b.scope == "" {
		return append(dst, src...)
	}
	if b.judged {
		for _, r := range src {
			if r.pass {
				dst = append(dst, r)
			}
		}
		return dst
	}
	now, standing := b.now(), f.NeedsStanding()
	text := f.NeedsText()
	var c model.Classification
	for i, r := range src {
		if text && i%deriveBlock == 0 {
			// The words are matched on the tasks' fields: let a block's
			// cache misses overlap, as derive does.
			for _, r := range src[i:min(i+deriveBlock, len(src))] {
				b.touched += touchOneText(r.t)
			}
		}
		if standing {
			c = b.standing(r.t, now)
		}
		if b.passes(r.t, &c, now) {
			dst = append(dst, r)
		}
	}
	return dst
}

// passes reports whether a task is in the source in scope and passes the
// filter; c is its standing, read only when the filter needs it.
func (b *board) passes(t *model.Task, c *model.Classification, now time.Time) bool {
	return (b.scope == "" || t.Source == b.scope) && b.flt.Match(t, c, now)
}

// classes is the stale tasks' classifications by task, indexed at the
// first need after a derive.
func (b *board) classes() map[*model.Task]model.Classification {
	if !b.classReady {
		clear(b.class)
		for i, t := range b.stale {
			b.class[t] = b.staleClass[i]
		}
		b.classReady = true
	}
	return b.class
}

// standing is a task's classification: derive keeps the stale ones; a
// claim that is not stale is classified again only for its placement.
func (b *board) standing(t *model.Task, now time.Time) model.Classification {
	if c, ok := b.classes()[t]; ok {
		return c
	}
	if t.State == model.StateClaimed && t.Claim().Holder == model.HolderAgent {
		return b.snap.Classify(t, now)
	}
	return model.Classification{}
}

// setFilter puts a parsed filter in force. A filter that only narrows the
// one in force searches the rows on screen, not the whole snapshot; one
// that takes back the last narrowing puts its rows back.
func (b *board) setFilter(f model.Filter) {
	p := b.pane()
	fresh := !p.unsorted && !p.unfiltered && p.kind != nodesView && p.kind != activityView && p.kind != statsView
	narrower := fresh && f.Narrows(b.flt)
	prev := b.flt
	b.flt = f
	for _, q := range b.panes {
		q.unfiltered = true
	}
	n := len(b.undo)
	switch {
	case fresh && n > 0 && b.undo[n-1].kind == p.kind && slices.Equal(b.undo[n-1].flt.Terms, f.Terms):
		p.unfiltered = false
		// p.shown is a narrowed copy here, never the members: they are
		// shown only with no filter, and then nothing is on the undo stack
		// to step back to.
		b.spare, p.shown = p.shown[:0], b.undo[n-1].rows
		b.undo[n-1] = narrowing{}
		b.undo = b.undo[:n-1]
		p.grid.SetLen(len(p.shown))
	case narrower:
		p.unfiltered = false
		old := p.shown
		p.shown, b.spare = b.filterTasks(b.spare[:0], old), nil
		if n == maxUndo {
			b.undo[0] = narrowing{}
			b.undo = slices.Delete(b.undo, 0, 1)
		}
		b.undo = append(b.undo, narrowing{flt: prev, kind: p.kind, rows: old})
		p.grid.SetLen(len(p.shown))
	default:
		b.freshen(p)
	}
	// The first match is what the human typed for.
	p.grid.Select(0)
}
