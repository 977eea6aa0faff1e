// Package tui is the dashboard: one root Bubble Tea model over the hub's
// snapshots, with the five views (Queue, Leases, Stale, Nodes, Activity) as
// plain components, dialogs as a stack that sees keys first, and the human
// actions sent to the hub as commands.
//
// It never talks to a backend and decides nothing about tasks: it renders
// the snapshot it holds, reading each task's standing from
// Snapshot.Classify, and every wait (a snapshot, an action, the clock) is a
// tea.Cmd.
package tui

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"maps"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/stats"
	"github.com/claimdeck/claimdeck/theme"
)

// Options wire the dashboard. Hub is required; everything else has a
// default.
type Options struct {
	Hub *hub.Hub
	// ReadOnly refuses every action on every source; per-source read-only
	// comes from the hub's desk. Both are enforced by the desk too.
	ReadOnly bool
	// Styles are the theme's styles; nil builds them from Theme.
	Styles *theme.Styles
	Theme  theme.Options
	// Keys overrides the default key map: action name → keys (see
	// KeyMap.Rebind).
	Keys map[string][]string
	// Now is the clock; tests pin it so screens are stable.
	Now      func() time.Time
	Location *time.Location // for wall-clock times; default Local
	// Speed is how much faster than the wall clock the tasks' time runs
	// (the demo's --speed); task times are shown in theirs. 0 or 1: real time.
	Speed float64
	// Agents are known agent names offered for hand-offs besides those seen
	// holding tasks.
	Agents []string
	// Journal is the audit trail so far, shown in Activity.
	Journal []model.AuditRecord
	// Stats returns the fleet's numbers at a time (the Stats view); nil
	// leaves the view empty. It is called off the UI loop while the view is
	// on screen, once a second.
	Stats func(time.Time) stats.Report
	// ActionTimeout bounds one human action (default 30 s).
	ActionTimeout time.Duration
	// Alert rings for a new escalation or a node gone DOWN (opt-in: nil
	// rings nothing); Run builds it from Alerts when nil.
	Alert  func(Alarm)
	Alerts AlertOptions
	// Copy puts text on the clipboard; Run copies through the terminal
	// (OSC 52) when it is nil.
	Copy func(text string)
	// Filters are the saved filters :load brings back, by name.
	Filters map[string]string
	// SaveFilter keeps a filter under a name in the configuration file
	// (:save); nil: there is none to keep it in. It runs off the UI loop.
	SaveFilter func(name, expr string) error
	// ProgramOptions are added to Run's program (tea.WithInput,
	// tea.WithOutput, …), after its defaults.
	ProgramOptions []tea.ProgramOption
}

// maxActivity is how many Activity lines are kept (up to twice as many
// between trims).
const maxActivity = 5000

// activity is one line of the Activity view.
type activity struct {
	At     time.Time
	Source string
	Task   string
	Actor  string
	What   string
	Human  bool // a human action, not an observed transition
	Failed bool
}

// Model is the root model.
type Model struct {
	opts   Options
	hub    *hub.Hub
	keys   KeyMap
	styles *theme.Styles
	paints *paints
	now    func() time.Time
	loc    *time.Location
	pace   pace

	width, height int
	panes         [viewCount]*pane
	active        viewKind

	snap hub.Snapshot
	all  []*model.Task // every task of the snapshot, with action results on top
	subs model.SubtaskIndex
	// stale and staleClass are the stale tasks and their classifications
	// (from the snapshot) as of the last derive, in step; class indexes
	// them by task, built by classes() only when a view or filter asks, so
	// a snapshot applied under the Queue pays no map insert per stale claim.
	stale      []*model.Task
	staleClass []model.Classification
	class      map[*model.Task]model.Classification
	classReady bool
	sick       map[string]bool        // sources whose last poll failed: their rows are marked
	rang       map[uint64]model.Level // what has rung (ringKey), at which level
	ringHash   maphash.Hash
	ringing    []Alarm // new alarms waiting for the next ring
	acts       []activity
	boundary   time.Time            // the next time a task changes view by the clock alone
	rungs      [levelBroken + 1]int // stale rows by severity, for the alarm in the top bar
	touched    int                  // keeps derive's touching loop from being optimized away

	filter    lineEdit
	filtering bool
	// judged says the rows' pass flags hold the filter's verdict: true
	// only during the freshen that follows derive, at derive's time.
	judged    bool
	flt       model.Filter // the last filter that parsed
	filterErr string       // why the filter as typed does not parse
	// marks are the tasks an action applies to instead of the cursor's,
	// each as it was when marked: a bulk action applies only to that version.
	marks map[string]*model.Task
	// filters are the saved filters by name: the config's, and :save's.
	filters map[string]string
	// markFrom is the task (Ref) a ctrl-space range starts from: the last
	// one marked.
	markFrom string
	// scope is the one source every view shows (:source), "" for all.
	scope      string
	cmdline    lineEdit
	commanding bool
	cmdHistory []string
	cmdAt      int // where up/down stand in cmdHistory
	// archiveAsked: the kept filter brought history from the backends.
	archiveAsked bool
	bulk         *bulkRun                  // the bulk action under way
	pending      map[string]model.Action   // ref → action under way
	overrides    map[string]*actionOutcome // ref → applied result not yet polled
	dialogs      []dialog
	banner       string
	bannerIsErr  bool
	bannerAt     time.Time
	paused       bool
	quitting     bool
}

type actionOutcome struct {
	seen, after *model.Task
}

// New builds the dashboard's root model.
func New(o Options) (*Model, error) {
	if o.Hub == nil {
		return nil, fmt.Errorf("tui: no hub")
	}
	keys, err := DefaultKeyMap().Rebind(o.Keys)
	if err != nil {
		return nil, err
	}
	if err := validSavedFilters(o.Filters); err != nil {
		return nil, err
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Location == nil {
		o.Location = time.Local
	}
	if o.ActionTimeout <= 0 {
		o.ActionTimeout = 30 * time.Second
	}
	st := o.Styles
	if st == nil {
		st = theme.New(o.Theme.FromEnv())
	}
	panes := newPanes(&keys)
	m := &Model{
		opts: o, hub: o.Hub, keys: keys, styles: st, paints: newPaints(st), now: o.Now, loc: o.Location, pace: pace(o.Speed),
		panes: panes, filter: lineEdit{limit: 200}, class: map[*model.Task]model.Classification{}, marks: map[string]*model.Task{},
		filters: maps.Clone(o.Filters), sick: map[string]bool{}, rang: map[uint64]model.Level{},
		pending: map[string]model.Action{}, overrides: map[string]*actionOutcome{},
		width: 80, height: 24,
	}
	for _, r := range o.Journal {
		if !r.Pending {
			m.acts = append(m.acts, recordActivity(r))
		}
	}
	m.layout()
	m.syncKeys()
	return m, nil
}

// Run shows the dashboard until the user quits or ctx ends; it runs the
// hub for as long.
func Run(ctx context.Context, o Options) error {
	m, err := New(o)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if m.styles.NoColor {
		// termenv reads NO_COLOR as "no escape codes at all", which would
		// also drop the reverse video that marks the selected row: keep
		// attributes, the styles carry no colours.
		lipgloss.SetColorProfile(termenv.ANSI)
		m.paints = newPaints(m.styles) // taken under the old profile
	}
	if m.opts.Alert == nil {
		m.opts.Alert = o.Alerts.terminal(os.Stdout)
	}
	if m.opts.Copy == nil {
		out := termenv.NewOutput(os.Stdout)
		m.opts.Copy = func(s string) { out.Copy(s) }
	}
	done := make(chan struct{})
	go func() { o.Hub.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	popts := append([]tea.ProgramOption{tea.WithContext(ctx), tea.WithAltScreen(), tea.WithMouseCellMotion(), tea.WithReportFocus()},
		o.ProgramOptions...)
	_, err = tea.NewProgram(m, popts...).Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil // the caller ended the dashboard: not a failure
	}
	return err
}

// Messages.
type (
	snapshotMsg hub.Snapshot
	tickMsg     struct {
		stats *stats.Report
	}
	actionMsg struct {
		req   sources.Request
		after *model.Task
		err   error
	}
)

// Init starts draining snapshots and the one-second clock.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.waitSnapshot(), m.tick())
}

// waitSnapshot is the re-arming command that drains the hub's channel.
func (m *Model) waitSnapshot() tea.Cmd {
	ch := m.hub.Snapshots()
	return func() tea.Msg { return snapshotMsg(<-ch) }
}

// tick fires once a second so countdowns move without a poll.
func (m *Model) tick() tea.Cmd {
	report, now := m.opts.Stats, m.now
	if m.active != statsView {
		report = nil
	}
	return tea.Tick(time.Second, func(time.Time) tea.Msg {
		if report == nil {
			return tickMsg{}
		}
		r := report(now())
		return tickMsg{stats: &r}
	})
}

// Update handles one message. Dialogs see keys first.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.layout()
		return m, nil
	case snapshotMsg:
		m.applySnapshot(hub.Snapshot(msg))
		return m, tea.Batch(m.waitSnapshot(), m.ring())
	case trailMsg:
		m.gotTrail(msg)
	case tickMsg:
		if msg.stats != nil {
			m.setStats(*msg.stats)
		}
		if !m.boundary.IsZero() && !m.now().Before(m.boundary) {
			m.derive()
		}
		m.expireBanner()
		return m, tea.Batch(m.tick(), m.ring())
	case actionMsg:
		m.actionDone(msg)
		return m, nil
	case bulkProgressMsg, bulkDoneMsg:
		return m, m.bulkStep(msg)
	case archiveMsg:
		m.archiveDone(msg)
		return m, nil
	case savedMsg:
		m.saved(msg)
		return m, nil
	case statsMsg:
		m.setStats(stats.Report(msg))
		return m, nil
	case tea.BlurMsg:
		m.paused = true
		m.hub.Pause()
		return m, nil
	case tea.FocusMsg:
		m.paused = false
		m.hub.Resume()
		return m, nil
	case tea.MouseMsg:
		if len(m.dialogs) == 0 {
			m.mouse(msg)
		}
		return m, nil
	case tea.KeyMsg:
		return m, m.key(msg)
	}
	return m, nil
}

func (m *Model) key(msg tea.KeyMsg) tea.Cmd {
	if msg.String() == "ctrl+c" {
		m.quitting = true
		return tea.Quit
	}
	if n := len(m.dialogs); n > 0 {
		return m.dialogs[n-1].update(m, msg)
	}
	if m.filtering {
		return m.filterKey(msg)
	}
	if m.commanding {
		return m.commandKey(msg)
	}
	k := m.keys
	p := m.pane()
	was := m.active
	switch {
	case key.Matches(msg, k.Quit):
		m.quitting = true
		return tea.Quit
	case key.Matches(msg, k.Back) && m.bulk != nil:
		m.bulk.stop()
	case key.Matches(msg, k.Back) && len(m.marks) > 0:
		clear(m.marks)
		m.note("marks cleared")
		m.syncKeys()
	case key.Matches(msg, k.Back):
		m.banner = ""
		if m.filter.Value() != "" {
			m.filter.SetValue("")
			m.refilter()
			return m.askArchive()
		}
	case key.Matches(msg, k.Up):
		m.move(-1)
	case key.Matches(msg, k.Down):
		m.move(1)
	case key.Matches(msg, k.PageUp):
		m.move(-p.grid.rows())
	case key.Matches(msg, k.PageDown):
		m.move(p.grid.rows())
	case key.Matches(msg, k.Top):
		m.move(-p.len())
	case key.Matches(msg, k.Bottom):
		m.move(p.len())
	case key.Matches(msg, k.NextView):
		m.show((m.active + 1) % viewCount)
	case key.Matches(msg, k.PrevView):
		m.show((m.active + viewCount - 1) % viewCount)
	case viewKey(msg, k) >= 0:
		m.show(viewKey(msg, k))
	case key.Matches(msg, k.Sort):
		if p.grid.sortCol < 0 {
			p.sort = (p.sort + 1) % len(p.sorts)
		}
		p.grid.sortCol = -1 // back to the presets, where they were left
		p.unsorted = true
		m.freshen(p)
	case p.sortLetter(msg.String()) >= 0:
		p.sortBy(p.sortLetter(msg.String()))
		m.freshen(p)
	case key.Matches(msg, k.Filter):
		m.filtering = true
	case key.Matches(msg, k.Help):
		m.push(&helpDialog{})
	case key.Matches(msg, k.Refresh):
		m.note("refreshing every source…")
		return func() tea.Msg { m.hub.Refresh(); return nil }
	case key.Matches(msg, k.Detail):
		return m.openDetail()
	case key.Matches(msg, k.Command):
		m.commanding, m.cmdAt = true, len(m.cmdHistory)
	case key.Matches(msg, k.Palette):
		m.commanding, m.cmdAt = true, len(m.cmdHistory)
		m.push(newPalette())
	case key.Matches(msg, k.Mark):
		m.toggleMark()
	case key.Matches(msg, k.MarkAll):
		m.markShown()
	case key.Matches(msg, k.MarkRange):
		m.markRange()
	case key.Matches(msg, k.Claim):
		m.act(model.ActionTakeover)
	case key.Matches(msg, k.Release):
		m.act(model.ActionForceRelease)
	case key.Matches(msg, k.Cancel):
		m.act(model.ActionCancel)
	case key.Matches(msg, k.Handoff):
		m.act(model.ActionHandoff)
	case key.Matches(msg, k.Copy):
		if t := m.selected(); t != nil {
			return m.copyID(t)
		}
	default:
		for _, b := range []key.Binding{k.Claim, k.Release, k.Cancel, k.Handoff} {
			if m.readOnlyKey(msg, b) {
				break
			}
		}
	}
	if m.active == statsView && was != statsView {
		return m.loadStats()
	}
	return nil
}

// viewKey is the view a key opens, or -1.
func viewKey(msg tea.KeyMsg, k KeyMap) viewKind {
	return viewKind(slices.IndexFunc(k.viewKeys(), func(b key.Binding) bool { return key.Matches(msg, b) }))
}

// filterKey edits the filter; every keystroke re-filters the pane on
// screen. Enter keeps the filter, esc drops it.
func (m *Model) filterKey(msg tea.KeyMsg) tea.Cmd {
	switch msg.Type {
	case tea.KeyEnter:
		m.filtering = false
		return m.askArchive()
	case tea.KeyEsc:
		m.filtering = false
		m.filter.SetValue("")
		m.refilter()
		return m.askArchive()
	default:
		if m.filter.Update(msg) {
			m.refilter()
		}
	}
	return nil
}

func (m *Model) pane() *pane { return m.panes[m.active] }

func (m *Model) show(k viewKind) {
	m.active = k
	m.freshen(m.pane())
	m.syncKeys()
}

func (m *Model) move(delta int) {
	m.pane().grid.Move(delta)
	m.syncKeys()
}

func (m *Model) push(d dialog) { m.dialogs = append(m.dialogs, d) }

func (m *Model) pop() {
	if n := len(m.dialogs); n > 0 {
		m.dialogs = m.dialogs[:n-1]
	}
}

func (m *Model) note(s string) { m.banner, m.bannerIsErr, m.bannerAt = s, false, m.now() }

// fail shows an error banner; what it quotes from outside is redacted here.
func (m *Model) fail(s string) { m.banner, m.bannerIsErr, m.bannerAt = model.Redact(s), true, m.now() }

// How long a status message stays: a refusal long enough to be read
// twice, a note long enough to be seen.
const (
	noteLife  = 5 * time.Second
	errorLife = 30 * time.Second
)

// expireBanner clears a status message that has had its time.
func (m *Model) expireBanner() {
	life := noteLife
	if m.bannerIsErr {
		life = errorLife
	}
	if m.banner != "" && m.now().Sub(m.bannerAt) >= life {
		m.banner = ""
	}
}

// selected is the task under the cursor, or nil.
func (m *Model) selected() *model.Task { return m.selectedTask(m.pane()) }

// readOnly says whether actions on source are refused.
func (m *Model) readOnly(source string) bool {
	return m.opts.ReadOnly || m.hub.ReadOnly(source)
}

// syncKeys enables the action keys only where an action can be applied,
// so help never offers what the desk would refuse.
func (m *Model) syncKeys() {
	t := m.selected()
	m.keys.setActions(len(m.marks) > 0 || (t != nil && !m.readOnly(t.Source)))
}

// mouse: a click selects a row or a tab, the wheel scrolls.
func (m *Model) mouse(msg tea.MouseMsg) {
	p := m.pane()
	switch {
	case msg.Button == tea.MouseButtonWheelUp:
		p.grid.Move(-3)
	case msg.Button == tea.MouseButtonWheelDown:
		p.grid.Move(3)
	case msg.Button == tea.MouseButtonLeft && msg.Action == tea.MouseActionPress:
		if msg.Y == 0 {
			if k, ok := m.tabAt(msg.X); ok {
				m.show(k)
			}
			return
		}
		if i, ok := p.grid.rowAt(msg.Y - tableTop); ok {
			p.grid.Select(i)
		}
	default:
		return
	}
	m.syncKeys()
}

// applySnapshot takes a new snapshot: sources, transitions, then the
// views.
func (m *Model) applySnapshot(s hub.Snapshot) {
	same := sameTasks(m.snap, s) && sameMesh(m.snap.Mesh, s.Mesh)
	for _, n := range s.Mesh.Nodes() {
		if n.Status == model.NodeDown {
			m.watchDown(n.Name)
		}
	}
	nodesChanged := m.snap.Mesh != s.Mesh
	loaded := loading(m.snap) && !loading(s) && s.Len() >= releaseFrom
	m.snap = s
	clear(m.sick)
	for i := range s.Sources {
		if s.Sources[i].Status == hub.StatusDegraded {
			m.sick[s.Sources[i].Name] = true
		}
	}
	for _, tr := range s.Transitions {
		m.addActivity(transitionActivity(tr))
	}
	for _, n := range s.Notices {
		m.addActivity(activity{At: n.At, Source: n.Source, Task: n.Task, Actor: "sweep", What: n.What, Failed: n.Failed})
	}
	if m.active == activityView {
		m.freshen(m.pane())
	}
	if !same {
		m.derive()
	} else if nodesChanged {
		m.panes[nodesView].unsorted = true
		if m.active == nodesView {
			m.freshen(m.pane())
		}
	}
	if loaded {
		// Loading a big queue leaves the heap at twice what it holds (the
		// driver's rows, slices grown by doubling), and the collector keeps
		// those pages until the heap grows into them again. Give them back
		// once, off the UI loop, now that the views hold what they keep.
		go debug.FreeOSMemory()
	}
}

// releaseFrom is the number of tasks from which a finished load gives its
// spare memory back to the system.
const releaseFrom = 10_000

// loading reports whether a source is still connecting or loading.
func loading(s hub.Snapshot) bool {
	for i := range s.Sources {
		if s.Sources[i].Loading || s.Sources[i].Status == hub.StatusConnecting {
			return true
		}
	}
	return false
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
		x, y := a.Sources[i].Tasks, b.Sources[i].Tasks
		if len(x) != len(y) || len(x) > 0 && &x[0] != &y[0] {
			return false
		}
	}
	return true
}

// derive rebuilds every view from the snapshot: merge, classify, then sort
// and filter the view on screen (the others when they are shown).
func (m *Model) derive() {
	now := m.now()
	n := m.snap.Len()
	all := m.all[:0]
	if cap(all) < n {
		all = make([]*model.Task, 0, n)
	}
	for i := range m.snap.Sources {
		all = append(all, m.snap.Sources[i].Tasks...)
	}
	m.all = m.reconcile(all)
	m.subs = model.SubtaskIndex{}
	q, l, s := m.panes[queueView], m.panes[leasesView], m.panes[staleView]
	q.members, l.members, s.members = q.members[:0], l.members[:0], s.members[:0]
	pk, every := m.panes[parkedView], m.panes[allView]
	pk.members, every.members = pk.members[:0], every.members[:0]
	var boundary time.Time
	soonest := func(t time.Time) {
		if t.After(now) && (boundary.IsZero() || t.Before(boundary)) {
			boundary = t
		}
	}
	m.stale, m.staleClass, m.classReady = m.stale[:0], m.staleClass[:0], false
	// The Queue's pull keys are packed here, while each task is in the
	// cache, rather than by the sort in a second pass over the heap.
	q.keys, q.packed = q.keys[:0], q.sort == 0 && q.grid.sortCol < 0
	var touched int
	var rungs [levelBroken + 1]int
	// The filter is judged here too, while each task is in the cache; the
	// freshen below reads the verdicts instead of visiting 100k tasks again.
	judge := len(m.flt.Terms) > 0 || m.scope != ""
	for at, t := range m.all {
		if at%deriveBlock == 0 {
			block := m.all[at:min(at+deriveBlock, len(m.all))]
			touched += touchTasks(block)
			if judge {
				touched += touchText(block)
			}
		}
		m.subs.Add(t)
		c := m.snap.Classify(t, now)
		soonest(c.Changes)
		// Which views the task joins; the filter is judged only for a task
		// that joins the view on screen.
		var in [viewCount]bool
		in[allView], in[parkedView], in[staleView] = true, parked(t), c.Stale()
		switch {
		case t.Problem != "":
		case m.snap.Pooled(t, now):
			in[queueView] = true
		case t.State == model.StateClaimed && t.Claim.Held():
			in[leasesView] = !c.Stale()
		}
		r := row{t: t, pass: !judge || !in[m.active] || m.passes(t, &c, now)}
		every.members = append(every.members, r)
		if in[parkedView] {
			pk.members = append(pk.members, r)
		}
		if in[queueView] {
			if q.packed {
				k, ok := pack(t, len(q.members))
				q.keys, q.packed = append(q.keys, k), ok
			}
			q.members = append(q.members, r)
		}
		if in[leasesView] {
			l.members = append(l.members, r)
		}
		if in[staleView] {
			s.members = append(s.members, r)
			m.stale, m.staleClass = append(m.stale, t), append(m.staleClass, c)
			lv := severity(c)
			rungs[lv]++
			m.watchLevel(t, lv)
		}
	}
	m.boundary, m.touched, m.rungs = boundary, touched, rungs
	for _, p := range m.panes {
		p.unsorted = true
	}
	m.judged = true // for this freshen only: a later one judges at its own time
	m.freshen(m.pane())
	m.judged = false
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
		n += int(t.State) + t.Priority + int(t.EditedAt.Unix()) + len(t.Claim.Name) +
			int(t.Claim.Expires.Unix()) + len(t.ReservedFor()) + len(t.Problem) + len(t.Parent)
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

// reconcile lays action results over the snapshot until a poll shows them:
// the row changes at once, and the next poll has the last word.
func (m *Model) reconcile(all []*model.Task) []*model.Task {
	if len(m.overrides) == 0 {
		return all
	}
	for i, t := range all {
		if len(m.overrides) == 0 {
			break
		}
		o := m.overrides[t.Ref()]
		if o == nil {
			continue
		}
		if t.Version == o.seen.Version {
			all[i] = o.after
		} else {
			delete(m.overrides, t.Ref())
		}
	}
	return all
}

// freshen sorts and filters a pane that is out of date, keeping the cursor
// on the same task where it can.
func (m *Model) freshen(p *pane) {
	if !p.unsorted && !p.unfiltered {
		return
	}
	resort := p.unsorted
	p.unsorted, p.unfiltered = false, false
	keep := m.selectedTask(p)
	switch p.kind {
	case nodesView:
		p.nodes = p.nodes[:0]
		nodes := m.snap.Mesh.Nodes()
		for i := range nodes {
			if matchNode(&nodes[i], m.flt) {
				p.nodes = append(p.nodes, nodes[i])
			}
		}
		p.sortNodes()
	case activityView:
		// m.acts is oldest first; the view's first order is newest first.
		p.acts = p.acts[:0]
		for i := range m.acts {
			if (m.scope == "" || m.acts[i].Source == m.scope) && matchActivity(&m.acts[i], m.flt) {
				p.acts = append(p.acts, m.acts[i])
			}
		}
		if p.sort == 0 {
			slices.Reverse(p.acts)
		}
	case statsView:
	default:
		if resort {
			p.sortTasks(m.classes)
		}
		p.shown = m.filterTasks(p.shown[:0], p.members)
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
	if p == m.pane() {
		m.syncKeys()
	}
}

// selectedTask is the task under a pane's cursor, from its last freshen.
func (m *Model) selectedTask(p *pane) *model.Task {
	if p.kind == nodesView || p.kind == activityView || p.kind == statsView || p.grid.cursor >= len(p.shown) {
		return nil
	}
	return p.shown[p.grid.cursor].t
}

// filterTasks appends the rows of src that pass the filter to dst.
func (m *Model) filterTasks(dst, src []row) []row {
	f := m.flt
	if len(f.Terms) == 0 && m.scope == "" {
		return append(dst, src...)
	}
	if m.judged {
		for _, r := range src {
			if r.pass {
				dst = append(dst, r)
			}
		}
		return dst
	}
	now, standing := m.now(), f.NeedsStanding()
	text := f.NeedsText()
	var c model.Classification
	for i, r := range src {
		if text && i%deriveBlock == 0 {
			// The words are matched on the tasks' fields: let a block's
			// cache misses overlap, as derive does.
			for _, r := range src[i:min(i+deriveBlock, len(src))] {
				m.touched += touchOneText(r.t)
			}
		}
		if standing {
			c = m.standing(r.t, now)
		}
		if m.passes(r.t, &c, now) {
			dst = append(dst, r)
		}
	}
	return dst
}

// passes reports whether a task is in the source in scope and passes the
// filter; c is its standing, read only when the filter needs it.
func (m *Model) passes(t *model.Task, c *model.Classification, now time.Time) bool {
	return (m.scope == "" || t.Source == m.scope) && m.flt.Match(t, c, now)
}

// classes is the stale tasks' classifications by task, indexed at the
// first need after a derive.
func (m *Model) classes() map[*model.Task]model.Classification {
	if !m.classReady {
		clear(m.class)
		for i, t := range m.stale {
			m.class[t] = m.staleClass[i]
		}
		m.classReady = true
	}
	return m.class
}

// standing is a task's classification: derive keeps the stale ones; a
// claim that is not stale is classified again only for its placement.
func (m *Model) standing(t *model.Task, now time.Time) model.Classification {
	if c, ok := m.classes()[t]; ok {
		return c
	}
	if t.State == model.StateClaimed && t.Claim.Holder == model.HolderAgent {
		return m.snap.Classify(t, now)
	}
	return model.Classification{}
}

// refilter applies an edited filter. A keystroke that only narrows the
// filter searches the rows on screen, not the whole snapshot. A filter that
// does not parse leaves the last one in force and says what to fix.
func (m *Model) refilter() {
	f, err := model.ParseFilter(m.filter.Value())
	m.filterErr = ""
	if err != nil {
		m.filterErr = err.Error()
		return
	}
	p := m.pane()
	narrower := f.Narrows(m.flt) && !p.unsorted && !p.unfiltered && p.kind != nodesView && p.kind != activityView
	m.flt = f
	for _, q := range m.panes {
		q.unfiltered = true
	}
	if narrower {
		p.unfiltered = false
		p.shown = m.filterTasks(p.shown[:0], p.shown)
		p.grid.SetLen(len(p.shown))
		p.grid.Select(0)
		m.syncKeys()
		return
	}
	m.freshen(p)
	// The first match is what the human typed for.
	p.grid.Select(0)
	m.syncKeys()
}

// agentNode is the node an agent was last seen claiming on, or "".
func (m *Model) agentNode(agent string) string {
	for _, t := range m.all {
		if t.Claim.Node != "" && strings.EqualFold(t.Claim.Name, agent) {
			return t.Claim.Node
		}
	}
	return ""
}

// knownAgents are the hand-off targets on offer: configured agents and
// those seen holding or reserved for tasks, sorted, capped.
func (m *Model) knownAgents() []string {
	seen := map[string]bool{}
	var out []string
	add := func(name string) {
		if name != "" && name != model.AnyAgent && !strings.HasPrefix(name, model.HumanPrefix) && !seen[name] && len(out) < 200 {
			seen[name] = true
			out = append(out, name)
		}
	}
	for _, a := range m.opts.Agents {
		add(a)
	}
	for _, r := range m.panes[leasesView].members {
		add(r.t.Claim.Name)
	}
	for _, r := range m.panes[staleView].members {
		add(r.t.Claim.Name)
	}
	slices.Sort(out)
	return append([]string{model.AnyAgent}, out...)
}

func (m *Model) addActivity(a activity) {
	m.acts = append(m.acts, a)
	if len(m.acts) >= 2*maxActivity {
		// Trim in bulk, so a burst of transitions costs a copy now and
		// then, not one per line.
		m.acts = slices.Delete(m.acts, 0, len(m.acts)-maxActivity)
	}
	m.panes[activityView].unsorted = true
}

func recordActivity(r model.AuditRecord) activity {
	what := string(r.Action)
	if r.Target != "" {
		what += " → " + r.Target
	}
	if r.Reason != "" {
		what += " (" + r.Reason + ")"
	}
	failed := r.Result != "applied"
	if failed {
		what += " refused: " + r.Error
	}
	return activity{At: r.At, Source: r.Source, Task: cmp.Or(r.Key, r.Task), Actor: r.Actor, What: r.Actor + " " + what, Human: true, Failed: failed}
}

func transitionActivity(tr hub.Transition) activity {
	t := tr.After
	if t == nil {
		t = tr.Before
	}
	a := activity{At: tr.At, Source: t.Source, Task: t.DisplayKey(), Actor: t.Claim.Name}
	switch {
	case tr.Before == nil:
		a.What = "appeared as " + t.State.String()
	case tr.After == nil:
		a.What = "removed"
	case tr.Before.State != tr.After.State:
		a.What = tr.Before.State.String() + " → " + tr.After.State.String()
	default:
		a.What = "changed"
	}
	if t.Claim.Held() {
		a.What += " by " + t.Claim.Holder.String() + " " + t.Claim.Name
	} else if tr.Before != nil && tr.Before.Claim.Held() {
		a.What += " (was " + tr.Before.Claim.Name + ")"
	}
	if r := t.ReservedFor(); r != "" && (tr.Before == nil || tr.Before.ReservedFor() != r) {
		a.What += ", reserved for " + r
	}
	return a
}

// act starts an action on the marked tasks, or else on the selected one.
func (m *Model) act(a model.Action) {
	switch {
	case m.bulk != nil:
		m.fail("a bulk action is under way (esc stops it)")
	case len(m.marks) > 0:
		m.startBulk(a)
	default:
		m.startAction(a)
	}
}

// startAction opens the first dialog of an action on the selected task.
func (m *Model) startAction(a model.Action) { m.startActionOn(m.selected(), a) }

// startActionOn opens the first dialog of an action on t.
func (m *Model) startActionOn(t *model.Task, a model.Action) {
	if t == nil {
		return
	}
	if t.Problem != "" {
		m.fail("cannot act on " + t.DisplayKey() + ": " + t.Problem)
		return
	}
	if _, busy := m.pending[t.Ref()]; busy {
		m.fail(t.DisplayKey() + " already has an action under way")
		return
	}
	req := sources.Request{Action: a, Seen: t}
	switch a {
	case model.ActionCancel:
		m.push(newReasonForm(req, m.styles))
	case model.ActionForceRelease:
		m.push(newReleaseForm(req))
	case model.ActionHandoff:
		m.push(newHandoffForm(req, m.knownAgents(), m.styles))
	default:
		m.push(&confirmDialog{req: req})
	}
}

// send marks the row pending and applies the action off the UI loop.
func (m *Model) send(req sources.Request) tea.Cmd {
	m.pending[req.Seen.Ref()] = req.Action
	m.note(fmt.Sprintf("%s %s…", req.Action, req.Seen.DisplayKey()))
	h, timeout := m.hub, m.opts.ActionTimeout
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		after, err := h.Apply(ctx, req)
		return actionMsg{req: req, after: after, err: err}
	}
}

// actionDone shows an action's outcome: the row at once on success, what
// changed on a CONFLICT.
func (m *Model) actionDone(msg actionMsg) {
	ref := msg.req.Seen.Ref()
	delete(m.pending, ref)
	r := model.AuditRecord{At: m.now(), Actor: m.hub.Actor(), Source: msg.req.Seen.Source, Task: msg.req.Seen.DisplayKey(),
		Action: msg.req.Action, Reason: msg.req.Reason, Target: msg.req.To, Result: "applied"}
	if msg.err != nil {
		r.Result, r.Error = string(model.CodeOf(msg.err)), model.Redact(msg.err.Error())
		m.fail(fmt.Sprintf("%s %s refused: %s", msg.req.Action, msg.req.Seen.DisplayKey(), msg.err))
		// A refusal is worth more than one cut-off line: the whole reason,
		// with what changed, until the human dismisses it.
		m.push(&detailDialog{title: fmt.Sprintf("%s %s refused", actionTitles[msg.req.Action], msg.req.Seen.DisplayKey()),
			lines: strings.Split(ansi.Wordwrap(model.Redact(msg.err.Error()), max(m.width-2, 20), " "), "\n")})
	} else {
		m.note(fmt.Sprintf("%s %s applied", msg.req.Action, msg.req.Seen.DisplayKey()))
	}
	m.addActivity(recordActivity(r))
	if msg.after != nil {
		m.overrides[ref] = &actionOutcome{seen: msg.req.Seen, after: msg.after}
	}
	m.derive()
}

// openDetail shows every field of the selected task, or a node's tasks.
func (m *Model) openDetail() tea.Cmd {
	p := m.pane()
	switch p.kind {
	case nodesView:
		if p.len() == 0 {
			return nil
		}
		n := p.nodes[p.grid.cursor]
		var tasks []*model.Task
		for _, t := range m.all {
			if m.snap.Mesh.On(t, n.Name) {
				tasks = append(tasks, t)
			}
		}
		m.push(&nodeDialog{node: n, tasks: tasks})
		return nil
	case activityView:
		if p.len() == 0 {
			return nil
		}
		a := p.acts[p.grid.cursor]
		if t := m.findKey(a.Source, a.Task); t != nil {
			return m.openTask(t)
		}
		m.push(&detailDialog{title: "activity", lines: []string{
			"when    " + a.At.In(m.loc).Format(time.RFC3339), "source  " + a.Source, "task    " + a.Task,
			"actor   " + orDash(a.Actor), "what    " + a.What}})
		return nil
	default:
		if t := m.selected(); t != nil {
			return m.openTask(t)
		}
	}
	return nil
}

// tableTop is the screen line of the table's header: under the tabs and
// the filter line.
const tableTop = 2

// layout sizes every pane: tabs, filter line, table, banner, footer, help.
func (m *Model) layout() {
	h := max(m.height-tableTop-3, 2)
	for _, p := range m.panes {
		p.SetSize(m.width, h)
	}
}

func (m *Model) tabAt(x int) (viewKind, bool) {
	pos := ansi.StringWidth(appName) + 2
	for k := range viewCount {
		w := ansi.StringWidth(m.tabLabel(k))
		if x >= pos && x < pos+w {
			return k, true
		}
		pos += w + 2
	}
	return 0, false
}
