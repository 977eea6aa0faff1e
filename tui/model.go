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
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

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
	Now func() time.Time
	// KeyClock times keys against each other (a burst typed in one go);
	// the wall clock by default, for tests to move by hand.
	KeyClock func() time.Time
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
	// Title is told the terminal's title when it changes; nil: the view
	// sets it (Bubble Tea's View.WindowTitle, OSC 2 through the renderer).
	Title func(string)
	// Copy puts text on the clipboard; Program copies through the
	// program's terminal (OSC 52) when it is nil.
	Copy func(text string)
	// Filters are the saved filters :load brings back, by name.
	Filters map[string]string
	// SaveFilter keeps a filter under a name in the configuration file
	// (:save); nil: there is none to keep it in. It runs off the UI loop.
	SaveFilter func(name, expr string) error
	// ProgramOptions are added to the program, after its defaults. They
	// say which terminal it draws on: the process's own when none do; a
	// door serving another one (an SSH session) gives tea.WithInput,
	// tea.WithOutput, tea.WithWindowSize and tea.WithEnvironment (the
	// session's TERM, COLORTERM, NO_COLOR) — see Program.
	ProgramOptions []tea.ProgramOption
}

// Model is the root model: the wiring, the screen, the board of rows, the
// text inputs, the status line, the alarms, the work under way and the
// dialog stack, each a part with a name.
type Model struct {
	opts   Options
	hub    *hub.Hub
	keys   KeyMap
	styles *theme.Styles
	paints *paints
	now    func() time.Time
	loc    *time.Location
	pace   pace

	screen screen
	// autoTheme: the palette follows the background the terminal reports
	// (theme auto, no styles given, colours on).
	autoTheme bool
	board     *board
	input     input
	status    status
	alarms    alarms
	work      work
	dialogs   []dialog
}

// screen is the terminal as the dashboard last saw it.
type screen struct {
	width, height int
	paused        bool // the terminal lost focus: the hub does not poll
	quitting      bool
	title         string // the terminal's title as last set
}

// work is what the person started that has not come back yet.
type work struct {
	bulk    *bulkRun                // the bulk action under way
	pending map[string]model.Action // ref → action under way
	// trails are tasks' full trails as last fetched, by ref: polls of a
	// SQL source carry none, and a reviewer must see who submitted.
	trails map[string][]model.Event
	// wantTrail is a task whose trail a dialog just opened needs.
	wantTrail *model.Task
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
	if o.KeyClock == nil {
		o.KeyClock = time.Now
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
	m := &Model{
		opts: o, hub: o.Hub, keys: keys, styles: st, paints: newPaints(st), now: o.Now, loc: o.Location, pace: pace(o.Speed),
		screen: screen{width: 80, height: 24}, board: newBoard(o.Now, &keys),
		input:  input{filter: lineEdit{limit: 200}, filters: maps.Clone(o.Filters)},
		status: status{now: o.Now},
		alarms: alarms{rang: map[uint64]model.Level{}},
		work:   work{pending: map[string]model.Action{}, trails: map[string][]model.Event{}},
	}
	m.autoTheme = o.Styles == nil && o.Theme.Mode == theme.Auto && !st.NoColor
	for _, r := range o.Journal {
		if !r.Pending {
			m.board.acts = append(m.board.acts, recordActivity(r))
		}
	}
	m.board.layout(m.screen)
	m.syncKeys()
	return m, nil
}

// Program builds the dashboard's Bubble Tea program over o.Hub, which
// the caller runs (Run does). The view sets the terminal's modes: the
// alternate screen, mouse clicks and wheel, focus reports, the keyboard's
// disambiguation where the terminal offers it (ctrl+i apart from tab; key
// releases are never asked for and ignored), the title. Bubble Tea turns
// on synchronized output where the terminal answers that it has it; no
// start-up query waits for an answer.
//
// The program draws on the terminal o.ProgramOptions name, the process's
// own by default. A door that serves another terminal (one program per
// SSH session) passes that session's tea.WithInput, tea.WithOutput,
// tea.WithWindowSize and tea.WithEnvironment, sends tea.WindowSizeMsg
// through Program.Send when the window changes, and ends the session's
// program through ctx; bells, notifications and the clipboard then reach
// that terminal, never the process's own.
func Program(ctx context.Context, o Options) (*tea.Program, error) {
	m, err := New(o)
	if err != nil {
		return nil, err
	}
	// The caller's ctx is how a signal ends the dashboard. Bubble Tea's own
	// handler would race it: when ctx wins, the event loop is gone and the
	// handler's send of QuitMsg blocks for ever, and the program's shutdown
	// waits on that handler, so the first SIGTERM froze about half the runs.
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithoutSignalHandler()}
	if m.styles.NoColor {
		// NO_COLOR drops colours, not the reverse video and bold that mark
		// the selected row, even where the output is no terminal.
		popts = append(popts, tea.WithColorProfile(colorprofile.ASCII))
	}
	p := tea.NewProgram(m, append(popts, o.ProgramOptions...)...)
	m.Bind(p)
	return p, nil
}

// Bind points the bells, notifications and clipboard the options leave
// unset at p's terminal. A door that builds the program itself (one per
// SSH session) calls it before running p.
func (m *Model) Bind(p *tea.Program) {
	if m.opts.Alert == nil {
		m.opts.Alert = m.opts.Alerts.terminal(rawWriter{p})
	}
	if m.opts.Copy == nil {
		m.opts.Copy = func(s string) { p.Send(tea.SetClipboard(s)()) }
	}
}

// rawWriter writes to the program's terminal through its renderer, so a
// bell or a notification never interleaves with a frame.
type rawWriter struct{ p *tea.Program }

func (w rawWriter) Write(b []byte) (int, error) {
	w.p.Send(tea.RawMsg{Msg: string(b)})
	return len(b), nil
}

// Run shows the dashboard on the process's terminal (or the one
// o.ProgramOptions name) until the user quits or ctx ends; it runs the
// hub for as long. Signals are the caller's: it ends ctx on SIGINT or
// SIGTERM (claimdeck's main does), and the terminal is restored.
func Run(ctx context.Context, o Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p, err := Program(ctx, o)
	if err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { o.Hub.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	_, err = p.Run()
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
		seq   uint64 // the hub's snapshot that carries after
		err   error
	}
)

// Init starts draining snapshots and the one-second clock and, when the
// palette follows the terminal, asks for its background without waiting:
// the dark palette (or COLORFGBG's) stands until an answer comes, and a
// terminal that never answers changes nothing.
func (m *Model) Init() tea.Cmd {
	if m.autoTheme {
		return tea.Batch(m.waitSnapshot(), m.tick(), tea.RequestBackgroundColor)
	}
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
	if m.board.active != statsView {
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
		m.screen.width, m.screen.height = msg.Width, msg.Height
		m.board.layout(m.screen)
	case snapshotMsg:
		m.applySnapshot(hub.Snapshot(msg))
		return m, tea.Batch(m.waitSnapshot(), m.alarms.ring(m.opts.Alert, m.typing()), m.screen.retitle(m.board.windowTitle(), m.opts.Title))
	case trailMsg:
		m.work.gotTrail(msg, m.dialogs)
	case tickMsg:
		return m, m.ticked(msg)
	case actionMsg:
		m.actionDone(msg)
		return m, m.refetchTrail(msg.req.Seen.Source, msg.req.Seen.ID)
	case bulkProgressMsg, bulkDoneMsg:
		wait, end, titles := m.work.bulkStep(msg)
		if end != nil {
			m.bulkDone(end.summary, titles)
		}
		return m, wait
	case archiveMsg:
		m.input.archiveDone(msg, &m.status)
	case savedMsg:
		m.input.saved(msg, &m.status)
	case statsMsg:
		m.board.setStats(stats.Report(msg))
	case tea.BlurMsg:
		m.screen.paused = true
		m.hub.Pause()
	case tea.FocusMsg:
		m.screen.paused = false
		m.hub.Resume()
	case tea.BackgroundColorMsg:
		if m.autoTheme {
			m.restyle(theme.New(m.opts.Theme.FromEnv().Resolve(msg.IsDark())))
		}
	case tea.MouseClickMsg, tea.MouseWheelMsg:
		if len(m.dialogs) == 0 {
			m.mouse(msg.(tea.MouseMsg))
		}
	case tea.KeyPressMsg:
		return m, m.burst(msg)
	case tea.PasteMsg:
		return m, m.paste(msg)
	}
	return m, nil
}

// ticked moves the clock: the Stats view's numbers, the rows a boundary
// moves, the status line's age.
func (m *Model) ticked(msg tickMsg) tea.Cmd {
	if msg.stats != nil {
		m.board.setStats(*msg.stats)
	}
	if b := m.board.boundary; !b.IsZero() && !m.now().Before(b) {
		m.derive()
	}
	m.status.expire()
	return tea.Batch(m.tick(), m.alarms.ring(m.opts.Alert, m.typing()), m.screen.retitle(m.board.windowTitle(), m.opts.Title))
}

func (m *Model) pane() *pane { return m.board.pane() }

func (m *Model) keyClock() time.Time { return m.opts.KeyClock() }

// selected is the task under the cursor, or nil.
func (m *Model) selected() *model.Task { return m.pane().selectedTask() }

func (m *Model) show(k viewKind) {
	m.board.active = k
	m.freshen(m.pane())
}

func (m *Model) move(delta int) {
	m.pane().grid.Move(delta)
	m.syncKeys()
}

// freshen brings a pane up to date; the keys follow the one on screen.
func (m *Model) freshen(p *pane) {
	m.board.freshen(p)
	if p == m.pane() {
		m.syncKeys()
	}
}

// derive rebuilds the rows, then queues the alarms of the stale claims.
func (m *Model) derive() {
	m.board.derive()
	if m.listening() {
		m.alarms.watch(m.board)
	}
	m.syncKeys()
}

func (m *Model) push(d dialog) {
	m.dialogs = append(m.dialogs, d)
	m.input.toldUnknown = false
}

func (m *Model) pop() {
	if n := len(m.dialogs); n > 0 {
		m.dialogs = m.dialogs[:n-1]
	}
	m.input.toldUnknown = false
}

// readOnly says whether actions on source are refused.
func (m *Model) readOnly(source string) bool {
	return m.opts.ReadOnly || m.hub.ReadOnly(source)
}

// syncKeys enables the action keys only where an action can be applied,
// so help never offers what the desk would refuse. With marks, the bulk
// preview judges each task.
func (m *Model) syncKeys() {
	m.keys.setActions(m.offers(m.selected(), len(m.board.marks) > 0))
}

// offers says which actions can apply to t (taskActions' order).
func (m *Model) offers(t *model.Task, marked bool) []bool {
	on := make([]bool, len(taskActions))
	for i, ta := range taskActions {
		on[i] = marked || t != nil && t.Problem() == "" && m.refusal(t, ta.action) == ""
	}
	return on
}

// restyle draws with new styles from the next frame on.
func (m *Model) restyle(st *theme.Styles) {
	m.styles, m.paints = st, newPaints(st)
}

// mouse: a click selects a row or a tab, the wheel scrolls.
func (m *Model) mouse(msg tea.MouseMsg) {
	p := m.pane()
	ms := msg.Mouse()
	_, click := msg.(tea.MouseClickMsg)
	switch {
	case ms.Button == tea.MouseWheelUp:
		p.grid.Move(-3)
	case ms.Button == tea.MouseWheelDown:
		p.grid.Move(3)
	case ms.Button == tea.MouseLeft && click:
		if ms.Y == 0 {
			if k, ok := m.board.tabAt(ms.X, m.tabLayout()); ok {
				m.show(k)
			}
			return
		}
		if i, ok := p.grid.rowAt(ms.Y - tableTop); ok {
			p.grid.Select(i)
		}
	default:
		return
	}
	m.syncKeys()
}

// applySnapshot takes a new snapshot: the alarms of DOWN nodes, then the
// board's rows.
func (m *Model) applySnapshot(s hub.Snapshot) {
	for _, n := range s.Mesh.Nodes() {
		if n.Status == model.NodeDown && m.listening() {
			m.alarms.down(n.Name)
		}
	}
	loaded := loading(m.board.snap) && !loading(s) && s.Len() >= releaseFrom
	derived := m.board.derived
	m.board.take(s)
	if m.board.derived != derived && m.listening() {
		m.alarms.watch(m.board)
	}
	m.syncKeys()
	if loaded {
		// Loading a big queue leaves the heap at twice what it holds (the
		// driver's rows, slices grown by doubling), and the collector keeps
		// those pages until the heap grows into them again. Give them back
		// once, off the UI loop, now that the views hold what they keep.
		m.board.releaseSortBuffers()
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

// tableTop is the screen line of the table's header: under the tabs and
// the filter line.
const tableTop = 2

// layout sizes every pane to the screen: tabs, filter line, table,
// banner, footer, help.
func (b *board) layout(sc screen) {
	h := max(sc.height-tableTop-3, 2)
	for _, p := range b.panes {
		p.SetSize(sc.width, h)
	}
}

// loadStats computes the report off the UI loop (it reads the audit
// journal), or nothing when the dashboard has no stats.
func (m *Model) loadStats() tea.Cmd {
	if m.opts.Stats == nil {
		return nil
	}
	report, now := m.opts.Stats, m.now
	return func() tea.Msg { return statsMsg(report(now())) }
}

// listening says whether alarms are queued at all: nothing rings while
// the dashboard is paused or when nobody asked for a ring, so there is
// nothing to remember.
func (m *Model) listening() bool { return !m.screen.paused && m.opts.Alert != nil }

// env is what the dialogs see of m now.
func (m *Model) env() *dialogEnv {
	return &dialogEnv{styles: m.styles, keys: m.keys, width: m.screen.width, now: m.now(), loc: m.loc, pace: m.pace,
		readOnly: m.opts.ReadOnly, board: m.board,
		offers:  func(t *model.Task) []bool { return m.offers(t, false) },
		preview: m.hub.PreviewBulk, fullHelp: m.pane().FullHelp,
		trail: func(ref string) []model.Event { return m.work.trails[ref] }}
}
