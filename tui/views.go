package tui

import (
	"cmp"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/theme"
)

// viewKind names the views; the number keys follow this order.
type viewKind int

const (
	queueView viewKind = iota
	leasesView
	staleView
	nodesView
	activityView
	parkedView // blocked, review and failed: work waiting on someone
	allView    // every task, whatever its state
	statsView  // throughput and times by source, agent and node
	viewCount
)

// viewSpec is everything about a view that is not how its rows are made:
// adding a view is a line here, its members in derive and its cells.
type viewSpec struct {
	title string
	name  string // its key's name in a config's keys:
	key   string
	help  string
	empty string // what an empty view says
	sorts []string
	cols  []column
}

var views = [viewCount]viewSpec{
	queueView: {title: "Queue", name: "queue", key: "1", help: "queue",
		empty: "No eligible tasks: the queue is empty or everything is claimed.",
		sorts: []string{"pull order", "oldest first", "newest first"},
		cols: []column{
			{title: "SOURCE", width: 8, drop: 2, whole: true, field: model.FieldSource}, {title: "KEY", width: 10, whole: true, field: model.FieldKey}, {title: "TITLE", field: model.FieldTitle},
			{title: "CLASS", width: 10, drop: 3, field: model.FieldClass}, {title: "PRI", width: 8, drop: 4, field: model.FieldPriority}, {title: "AGE", width: 4, right: true, field: model.FieldAge},
			{title: "RESERVED", width: 14, drop: 1, field: model.FieldReserved},
		}},
	leasesView: {title: "Leases", name: "leases", key: "2", help: "leases", empty: "No active leases.",
		sorts: []string{"time left", "claimed first", "agent"},
		cols: []column{
			{title: "SOURCE", width: 8, drop: 2, whole: true, field: model.FieldSource}, {title: "KEY", width: 10, whole: true, field: model.FieldKey}, {title: "TITLE", field: model.FieldTitle}, {title: "HOLDER", width: 6, drop: 6, field: model.FieldHolder},
			{title: "AGENT", width: 16, field: model.FieldAgent}, {title: "RUN", width: 8, drop: 4, field: model.FieldRun}, {title: "NODE", width: 8, drop: 3, field: model.FieldNode},
			{title: "CLAIMED", width: 7, right: true, drop: 5, field: model.FieldClaimed}, {title: "BEAT", width: 4, right: true, field: model.FieldBeat},
			{title: "LEFT", width: 7, right: true, field: model.FieldLeft}, {title: "LEASE", width: 10, drop: 1},
		}},
	staleView: {title: "Stale", name: "stale", key: "3", help: "stale", empty: "Nothing stale or escalated.",
		sorts: []string{"severity", "stuck longest", "source"},
		// WHY and NODE tell an expired lease from a DOWN node: they
		// outrank the title, which gives way first.
		cols: []column{
			{title: "SOURCE", width: 8, drop: 2, whole: true, field: model.FieldSource}, {title: "KEY", width: 10, whole: true, field: model.FieldKey},
			{title: "TITLE", drop: 3, field: model.FieldTitle}, {title: "LEVEL", width: 9},
			{title: "STUCK", width: 5, right: true}, {title: "LAST HOLDER", width: 18, drop: 1, whole: true}, {title: "NODE", width: 12, whole: true},
			{title: "WHY", width: 40, flexNext: true},
		}},
	nodesView: {title: "Nodes", name: "nodes", key: "4", help: "nodes", empty: "The mesh registry lists no nodes.",
		sorts: []string{"status", "name"},
		cols: []column{
			{title: "NODE", width: 16}, {title: "STATUS", width: 8}, {title: "SEEN", width: 4, right: true},
			{title: "FAILS", width: 5, right: true}, {title: "LATENCY", width: 7, right: true, drop: 2},
			{title: "TREND", width: sparkWidth, drop: 4},
			{title: "QUEUE", width: 5, right: true, drop: 3}, {title: "CLAIMED", width: 7, right: true, drop: 1},
			{title: "LAST ERROR"},
		}},
	activityView: {title: "Activity", name: "activity", key: "5", help: "activity", empty: "No activity yet.",
		sorts: []string{"newest first", "oldest first"},
		cols: []column{
			{title: "WHEN", width: 8}, {title: "SOURCE", width: 8, drop: 1}, {title: "TASK", width: 10},
			{title: "WHAT"},
		}},
	parkedView: {title: "Parked", name: "parked", key: "6", help: "parked",
		empty: "Nothing parked: no task is blocked, in review or failed.",
		sorts: []string{"review first, next check", "parked longest", "state"},
		cols: []column{
			{title: "SOURCE", width: 8, drop: 2, whole: true, field: model.FieldSource}, {title: "KEY", width: 10, whole: true, field: model.FieldKey}, {title: "STATE", width: 7, field: model.FieldState},
			{title: "TITLE", field: model.FieldTitle}, {title: "PARKED", width: 6, right: true, drop: 4, field: model.FieldParked}, {title: "REASON", width: 40, field: model.FieldReason},
			{title: "UNBLOCK", width: 30, drop: 1, field: model.FieldUnblock}, {title: "NEXT CHECK", width: 10, right: true, drop: 3, field: model.FieldNextCheck},
		}},
	allView: {title: "All", name: "all", key: "7", help: "all tasks", empty: "No tasks in any source.",
		sorts: []string{"state", "newest first", "pull order"},
		cols: []column{
			{title: "SOURCE", width: 8, drop: 2, whole: true, field: model.FieldSource}, {title: "KEY", width: 10, whole: true, field: model.FieldKey}, {title: "STATE", width: 8, field: model.FieldState},
			{title: "TITLE", field: model.FieldTitle}, {title: "HOLDER", width: 14, drop: 1, field: model.FieldAgent}, {title: "PRI", width: 8, drop: 3, field: model.FieldPriority},
			{title: "AGE", width: 4, right: true, field: model.FieldAge},
		}},
	statsView: {title: "Stats", name: "stats", key: "8", help: "stats", empty: "No numbers yet.",
		sorts: []string{"group"}, cols: statsColumns()},
}

// row is a task in a task view, with the filter's verdict on it as derive
// judged it.
type row struct {
	t    *model.Task
	pass bool
}

// by lifts a task comparison to rows.
func by(f func(a, b *model.Task) int) func(a, b row) int {
	return func(a, b row) int { return f(a.t, b.t) }
}

// pane is one view: its table, its sort orders, and the rows it shows.
// Task views hold members (the tasks that belong to the view, sorted) and
// shown (members passing the filter); the others hold their own rows.
type pane struct {
	kind  viewKind
	grid  grid
	sorts []string
	sort  int

	members []row
	shown   []row
	// kept is the task under the cursor when the pane's shown rows were
	// let go (leave, at each derive), for freshen to find again.
	kept *model.Task
	keys []pullKey // sort buffer, reused
	ties []tie
	// packed says keys hold the members' pull keys, in members' order:
	// derive packs them while it has each task at hand.
	packed bool
	// textBuf is sortText's key buffer, reused while small.
	textBuf []byte
	nodes   []model.Node
	acts    []activity
	stats   []statsRow

	// unsorted and unfiltered mark a pane whose rows must be redone before
	// it is drawn; only the pane on screen is kept fresh, so a snapshot costs
	// one sort, not five, and a filter keystroke no sort at all.
	unsorted, unfiltered bool
}

func newPanes(keys *KeyMap) [viewCount]*pane {
	var p [viewCount]*pane
	for k := range viewCount {
		p[k] = &pane{kind: k, unsorted: true, unfiltered: true, sorts: views[k].sorts}
		p[k].grid.setColumns(views[k].cols)
		p[k].pickLetters(keys)
	}
	return p
}

// pickLetters gives each sortable column the first letter of its title
// that no other column of the view and no key of the map has taken.
func (p *pane) pickLetters(keys *KeyMap) {
	taken := map[byte]bool{}
	for ci, c := range p.grid.cols {
		if c.field == model.FieldNone {
			continue
		}
		for i := range len(c.title) {
			ch := c.title[i]
			if ch >= 'A' && ch <= 'Z' && !taken[ch] && !keys.bound(string(ch)) {
				taken[ch], p.grid.letter[ci] = true, i
				break
			}
		}
	}
}

// sortLetter is the column whose sort letter is s, or -1.
func (p *pane) sortLetter(s string) int {
	for ci, li := range p.grid.letter {
		if li >= 0 && len(s) == 1 && p.grid.cols[ci].title[li] == s[0] {
			return ci
		}
	}
	return -1
}

// sortBy sorts the pane by column ci; the column it is already sorted by
// flips direction instead, as a header click does in a spreadsheet.
func (p *pane) sortBy(ci int) {
	g := &p.grid
	g.desc = ci == g.sortCol && !g.desc
	g.sortCol = ci
	p.unsorted = true
}

// sortName is what the header says the pane is sorted by.
func (p *pane) sortName() string {
	g := &p.grid
	if g.sortCol < 0 {
		return p.sorts[p.sort]
	}
	dir := "ascending"
	if g.desc {
		dir = "descending"
	}
	return strings.ToLower(g.cols[g.sortCol].title) + " " + dir
}

func (p *pane) len() int {
	switch p.kind {
	case statsView:
		return len(p.stats)
	case nodesView:
		return len(p.nodes)
	case activityView:
		return len(p.acts)
	}
	return len(p.shown)
}

// leave lets go of the rows a pane shows before a derive rebuilds its
// members: they may be the members themselves (no filter in force), and
// off screen they would hold the last snapshot's tasks alive until the
// pane is shown again. The task under the cursor is kept, for freshen.
func (p *pane) leave() {
	if p.shown != nil {
		p.kept, p.shown = p.selectedTask(), nil
	}
}

// selectedTask is the task under the pane's cursor, from its last freshen.
func (p *pane) selectedTask() *model.Task {
	if p.kind == nodesView || p.kind == activityView || p.kind == statsView || p.grid.cursor >= len(p.shown) {
		return nil
	}
	return p.shown[p.grid.cursor].t
}

// SetSize gives the pane its share of the screen.
func (p *pane) SetSize(w, h int) { p.grid.SetSize(w, h) }

// ShortHelp names the keys that mean something in this pane: the actions
// only where there are tasks to act on.
func (p *pane) ShortHelp(k KeyMap) []key.Binding {
	if p.kind == nodesView || p.kind == activityView {
		return short(k.Detail, k.Filter, k.Sort, k.Refresh, k.Help, k.Quit)
	}
	return k.ShortHelp()
}

// FullHelp is the key map's full help; every pane shares it.
func (p *pane) FullHelp(k KeyMap) [][]key.Binding { return k.FullHelp() }

// leftCompare puts the lease that runs out first on top; HUMAN claims
// (no expiry) go last.
func leftCompare(a, b *model.Task) int {
	ea, eb := a.Claim().Expires, b.Claim().Expires
	switch {
	case ea.IsZero() && eb.IsZero():
		return 0
	case ea.IsZero():
		return 1
	case eb.IsZero():
		return -1
	}
	return ea.Time().Compare(eb.Time())
}

func refCompare(a, b *model.Task) int {
	return cmp.Or(strings.Compare(a.Source, b.Source), strings.Compare(a.ID, b.ID))
}

// levelBroken ranks a task read from bad data above every rung: nothing
// can act on it until a human looks.
const levelBroken = model.LevelEscalated + 1

// rungWord names a stale row's severity in the LEVEL column and the top
// bar's alarm. A row in the Stale view below the first rung is a lease
// past the ceiling whose cut lease has not run out yet: suspicious.
func rungWord(lv model.Level) string {
	switch lv {
	case levelBroken:
		return "BROKEN"
	case model.LevelNone:
		return "SUSPECT"
	}
	return strings.ToUpper(lv.String())
}

// severity ranks a stale row: its ladder level, a broken task above all.
func severity(c model.Classification) model.Level {
	if c.Cause == model.CauseBroken {
		return levelBroken
	}
	return c.Level
}

// sortNodes orders the Nodes pane: DOWN first, or by name.
func (p *pane) sortNodes() {
	slices.SortFunc(p.nodes, func(a, b model.Node) int {
		if p.sort == 0 {
			if c := cmp.Compare(nodeRank(b.Status), nodeRank(a.Status)); c != 0 {
				return c
			}
		}
		return strings.Compare(a.Name, b.Name)
	})
}

func nodeRank(s model.NodeStatus) int {
	switch s {
	case model.NodeDown:
		return 3
	case model.NodeDegraded:
		return 2
	case model.NodeUnknown:
		return 1
	}
	return 0
}

// rowPen is what the table's rows are drawn with: the paints, the
// tasks' clock and the board the rows come from.
type rowPen struct {
	paints *paints
	pace   pace
	now    func() time.Time
	loc    *time.Location
	board  *board
}

// taskCells fills one row of a task pane.
func (pn rowPen) taskCells(p *pane, t *model.Task, cells []cell) {
	now := pn.now()
	ps := pn.paints
	cells[0] = cell{text: t.Source, paint: ps.source(t.Source)}
	if pn.board.sick[t.Source] {
		// Its last poll failed: the row is the last good data, maybe old.
		cells[0] = cell{text: "⚠ " + t.Source, paint: &ps.warn}
	}
	cells[1] = cell{text: t.DisplayKey()}
	switch p.kind {
	case queueView:
		cells[2] = cell{text: pn.board.waitingMark(t) + t.Title}
		cells[3] = cell{text: t.Class.String()}
		cells[4] = cell{text: model.PriorityName(t.Priority)}
		cells[5] = cell{text: pn.pace.ago(t.CreatedAt.Time(), now)}
		if r := t.Reserved(); r.Active(now) {
			until := ""
			if !r.Until.IsZero() {
				until = " " + pn.pace.span(r.Until.Sub(now))
			}
			cells[6] = cell{text: "→ " + r.For + until, paint: &ps.info}
		}
		if t.State == model.StateClaimed {
			// A dead holder's claim that next hands out again.
			cells[6] = cell{text: "rescue " + t.Claim().Name, paint: &ps.warn}
		}
	case leasesView:
		cells[2] = cell{text: t.Title}
		pn.leaseCells(t, cells[3:], now)
	case staleView:
		cells[2] = cell{text: t.Title}
		pn.staleCells(t, cells[3:])
	case parkedView:
		pn.parkedCells(t, cells, now)
	case allView:
		cells[2] = pn.stateCell(t)
		cells[3] = cell{text: t.Title}
		cells[4] = cell{text: t.Claim().Name}
		cells[5] = cell{text: model.PriorityName(t.Priority)}
		cells[6] = cell{text: pn.pace.ago(t.CreatedAt.Time(), now)}
	}
}

// leaseCells fills a Leases row after its title.
func (pn rowPen) leaseCells(t *model.Task, c []cell, now time.Time) {
	ps := pn.paints
	c[0] = cell{text: t.Claim().Holder.String()}
	if t.Claim().Holder == model.HolderHuman {
		c[0].paint = &ps.accent
	}
	c[1] = cell{text: t.Claim().Name}
	c[2] = cell{text: t.Claim().RunID}
	c[3] = cell{text: t.Claim().Node}
	c[4] = cell{text: pn.pace.ago(t.Claim().ClaimedAt.Time(), now)}
	c[5] = cell{text: pn.pace.ago(t.Claim().HeartbeatAt.Time(), now)}
	if t.Claim().Holder == model.HolderHuman || t.Claim().Expires.IsZero() {
		c[6] = cell{text: "—"}
		return
	}
	left := model.Remaining(t, now)
	c[6] = cell{text: pn.pace.clock(left)}
	lease := t.Claim().Granted() // the task's own lease, not the policy's
	if lease <= 0 {
		lease = pn.board.snap.Policy.Lease
	}
	c[7] = cell{text: bar(left, lease, 10), paint: &ps.barFull}
	if model.Health(t, now, pn.board.snap.Policy) == model.LeaseExpiring {
		c[6].paint, c[7].paint = &ps.warn, &ps.warn
	}
}

// staleCells fills a Stale row after its title.
func (pn rowPen) staleCells(t *model.Task, c []cell) {
	ps := pn.paints
	cl := pn.board.classes()[t]
	lv := severity(cl)
	c[1] = cell{text: pn.pace.span(cl.Stuck)}
	if lv == levelBroken {
		c[1].text = "—"
	}
	c[0] = cell{text: rungWord(lv), paint: &ps.levels[lv]}
	holder := t.Claim().Name
	if holder == "" {
		holder = t.ReservedFor()
	}
	c[2] = cell{text: holder}
	c[3] = cell{text: cl.Placement.Node}
	c[4] = cell{text: cl.Reason}
	if t.Problem() != "" {
		c[4].text = brokenFile(t.Problem())
	}
	if cl.Cause == model.CauseLeaseTooLong {
		// Suspicious before it is stale: the lease is judged as ending at
		// the ceiling, and the rescue keys are offered on it at once.
		c[4] = cell{text: ceilingWhy(t, pn.board.snap.Policy), paint: &ps.warn}
		if lv == model.LevelNone {
			c[0].paint = &ps.warn
		}
		if cl.Stuck == 0 {
			c[1].text = "—"
		}
	}
}

// ceilingWhy is a lease past the policy's ceiling as the WHY column reads
// it: how long the lease runs past the holder's last sign of life, against
// the ceiling, short enough for 80 columns (the detail has the date).
func ceilingWhy(t *model.Task, p model.Policy) string {
	alive, end := t.Claim().LastAlive(), t.Claim().Expires
	length := span(end.Time().Sub(alive)) // a Duration stops short of 300 years
	if end.Time().After(alive.AddDate(1, 0, 0)) {
		length = strconv.Itoa(end.Time().Year()-alive.Year()) + "y"
	}
	return "lease " + length + " > " + span(p.LeaseCeiling) + " ceiling"
}

// brokenFile is a broken task's problem as a narrow column shows it: the
// file's name first, its directory left out (the detail has the whole
// path), so a cut from the right takes the reason, never the name.
func brokenFile(problem string) string {
	path, why, ok := strings.Cut(problem, ": ")
	if !ok || !strings.ContainsRune(path, filepath.Separator) {
		return problem
	}
	return filepath.Base(path) + ": " + why
}

// parkedCells fills a Parked row.
func (pn rowPen) parkedCells(t *model.Task, cells []cell, now time.Time) {
	ps := pn.paints
	cells[2] = pn.stateCell(t)
	cells[3] = cell{text: t.Title}
	cells[4] = cell{text: pn.pace.ago(t.EditedAt.Time(), now)}
	cells[5] = cell{text: orDash(theme.Safe(t.More().Reason))}
	cells[6] = cell{text: orDash(theme.Safe(t.UnblockAction()))}
	cells[7] = cell{text: "—"}
	if at := t.NextCheckAt(); !at.IsZero() {
		if at.After(now) {
			cells[7] = cell{text: "in " + pn.pace.span(at.Sub(now))}
		} else {
			cells[7] = cell{text: "due " + pn.pace.span(now.Sub(at)), paint: &ps.warn}
		}
	}
}

// stateCell names a task's state, painted by how much it needs a human.
func (pn rowPen) stateCell(t *model.Task) cell {
	ps := pn.paints
	c := cell{text: t.State.String()}
	switch t.State {
	case model.StateBlocked, model.StateFailed, model.StateUnknown:
		c.paint = &ps.danger
	case model.StateReview:
		c.paint = &ps.warn
	case model.StateDone, model.StateCanceled:
		c.paint = &ps.muted
	}
	if t.Problem() != "" {
		c.text, c.paint = "BROKEN", &ps.danger
	}
	return c
}

// bar draws the lease left as a bar of width cells, scaled to the lease
// the claim was given (model.Claim.Granted).
func bar(left, lease time.Duration, width int) string {
	if lease <= 0 || left <= 0 {
		return strings.Repeat("░", width)
	}
	full := min(int(int64(width)*int64(left)/int64(lease)), width)
	return strings.Repeat("█", full) + strings.Repeat("░", width-full)
}

func (pn rowPen) nodeCells(n model.Node, cells []cell) {
	now := pn.now()
	ps := pn.paints
	cells[0] = cell{text: n.Name}
	status := cell{text: n.Status.String(), paint: &ps.ok}
	switch n.Status {
	case model.NodeDown:
		status.paint = &ps.danger
	case model.NodeDegraded, model.NodeUnknown:
		status.paint = &ps.warn
	}
	cells[1] = status
	cells[2] = cell{text: ago(n.LastSeen, now)}
	cells[3] = cell{text: strconv.Itoa(n.Failures)}
	if len(n.Latency) > 0 {
		cells[4] = cell{text: n.Latency[len(n.Latency)-1].Round(time.Millisecond).String()}
	}
	cells[5] = cell{text: sparkline(n.Latency, sparkWidth), paint: &ps.muted}
	cells[6] = cell{text: strconv.Itoa(n.QueueDepth)}
	cells[7] = cell{text: strconv.Itoa(len(n.ClaimedTasks))}
	if n.Status != model.NodeHealthy && n.LastErr != "" {
		cells[8] = cell{text: n.LastErr, paint: &ps.warn}
	}
}

// sparkWidth is how many of a node's latest pings the TREND column draws.
const sparkWidth = 12

var sparks = []rune("▁▂▃▄▅▆▇█")

// sparkFloor is the least latency the TREND column's top stands for, so
// that a millisecond of jitter on a fast node does not look like trouble.
const sparkFloor = 50 * time.Millisecond

// sparkline draws the last width latencies from zero up to the slowest of
// them (at least sparkFloor), so a node slowing down shows before it fails.
func sparkline(lat []time.Duration, width int) string {
	if len(lat) > width {
		lat = lat[len(lat)-width:]
	}
	if len(lat) == 0 {
		return ""
	}
	hi := max(slices.Max(lat), sparkFloor)
	out := make([]rune, len(lat))
	for i, d := range lat {
		out[i] = sparks[int(int64(max(d, 0))*int64(len(sparks)-1)/int64(hi))]
	}
	return string(out)
}

func (pn rowPen) activityCells(a activity, cells []cell) {
	ps := pn.paints
	cells[0] = cell{text: pn.pace.at(a.At, pn.now(), pn.loc, "15:04:05"), paint: &ps.muted}
	cells[1] = cell{text: a.Source, paint: ps.source(a.Source)}
	cells[2] = cell{text: a.Task}
	cells[3] = cell{text: a.What}
	if a.Failed {
		cells[3].paint = &ps.danger
	} else if a.Human {
		cells[3].paint = &ps.accent
	}
}
