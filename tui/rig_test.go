package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	uv "github.com/charmbracelet/ultraviolet"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/sourcetest/memsource"
	"github.com/claimdeck/claimdeck/sources/stats"
	"github.com/claimdeck/claimdeck/theme"
)

// t0 is 3 a.m., when this screen matters most.
var t0 = time.Date(2026, 11, 21, 3, 0, 0, 0, time.UTC)

// rig is a dashboard over two writable in-memory queues (prod, staging)
// and a read-only one (archive), on a clock the test moves by hand.
type rig struct {
	t       *testing.T
	m       *Model
	hub     *hub.Hub
	desk    *sources.Desk // the hub's: Apply and the dashboard's refusals go through it
	prod    *memsource.Memory
	staging *memsource.Memory
	archive *memsource.Memory
	now     time.Time
	// nodes and holders are the mesh each poll's snapshot carries; nil
	// nodes: no mesh configured.
	nodes   []model.Node
	holders map[string]string
	tracker *stats.Tracker // fed every snapshot the rig polls, for the Stats view
	// noRescue names sources whose next leaves dead holders' claims to the
	// sweep (Caps.Rescue false), as a Notion source does.
	noRescue map[string]bool
	// noTrails: polls carry no history, as a SQL source's do; a task's
	// trail comes only from Get.
	noTrails bool
	// keyAt is the key clock: a second between the keys of press, a
	// millisecond between the keys of one burst.
	keyAt time.Time
}

type rigOption func(*Options)

// rigProfile is the colour profile screens are drawn in, as Bubble Tea's
// renderer would for a terminal of that profile: none (NoTTY), so that
// goldens read as text, unless a test asks for colour.
var rigProfile = colorprofile.NoTTY

func newRig(t *testing.T, opts ...rigOption) *rig {
	t.Helper()
	r := &rig{t: t, now: t0, tracker: stats.New()}
	clock := func() time.Time { return r.now }
	r.prod, r.staging, r.archive = memsource.NewMemory("prod"), memsource.NewMemory("staging"), memsource.NewMemory("archive")
	for _, mem := range []*memsource.Memory{r.prod, r.staging, r.archive} {
		mem.Now = clock
	}
	seed(r)
	desk := &sources.Desk{Actor: "alice", Now: clock, ReadOnly: func(s string) bool { return s == "archive" }}
	r.desk = desk
	r.hub = hub.New(hub.Config{Feeds: []hub.Feed{{Source: r.prod}, {Source: r.staging}, {Source: r.archive}}, Desk: desk, Now: clock})
	r.nodes = []model.Node{
		{Name: "n1", Status: model.NodeHealthy, LastSeen: t0.Add(-30 * time.Second), QueueDepth: 4, ClaimedTasks: []string{"TASK-4"}, Latency: []time.Duration{12 * time.Millisecond}},
		{Name: "n2", Status: model.NodeDegraded, LastSeen: t0.Add(-5 * time.Minute), Failures: 2, LastErr: "timeout"},
		{Name: "n3", Status: model.NodeDown, LastSeen: t0.Add(-9 * time.Minute), Failures: 3, LastErr: "connection refused"},
	}
	r.keyAt = t0
	o := Options{Hub: r.hub, Now: clock, KeyClock: func() time.Time { return r.keyAt }, Location: time.UTC, Styles: theme.New(theme.Options{Mode: theme.Dark}),
		Stats: r.tracker.Report,
		Journal: []model.AuditRecord{
			{At: t0.Add(-50 * time.Minute), Actor: "carol", Source: "prod", Task: "6", Action: model.ActionTakeover, Reason: "payout stuck", Result: "applied"},
			{At: t0.Add(-30 * time.Minute), Actor: "carol", Source: "prod", Task: "3", Action: model.ActionHandoff, Target: "bravo", Reason: "knows the schema", Result: "applied"},
			{At: t0.Add(-29 * time.Minute), Actor: "dave", Source: "prod", Task: "3", Action: model.ActionCancel, Reason: "dup", Result: "CONFLICT", Error: "CONFLICT: the task changed"},
		}}
	for _, f := range opts {
		f(&o)
	}
	r.tracker.Overrides(o.Journal)
	m, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	r.m = m
	r.size(80, 24)
	r.poll()
	return r
}

func withReadOnly(o *Options)   { o.ReadOnly = true }
func withLightTheme(o *Options) { o.Styles = theme.New(theme.Options{Mode: theme.Light}) }

// seed fills the queues with one of everything an on-call human meets.
func seed(r *rig) {
	min := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Minute) }
	put := func(mem *memsource.Memory, t model.Task) {
		if t.State == 0 {
			t.State = model.StateQueued
		}
		t.RawStatus = t.State.String()
		if t.EditedAt.IsZero() {
			t.EditedAt = t.CreatedAt
		}
		mem.Put(&t)
	}
	agent := func(name, run, node string, claimed, beat, expires int) model.Claim {
		return model.Claim{Holder: model.HolderAgent, Name: name, RunID: run, Node: node, Token: "tok-" + run,
			ClaimedAt: model.StampOf(min(claimed)), HeartbeatAt: model.StampOf(min(beat)), Expires: model.StampOf(min(expires))}
	}
	put(r.prod, model.Task{ID: "1", Key: "TASK-1", Title: "Rotate TLS certificates on the edge", Class: model.ClassExpedite, Priority: 3, CreatedAt: model.StampOf(min(-120))})
	put(r.prod, model.Task{ID: "2", Key: "TASK-2", Title: "Backfill billing events for October", Priority: 2, CreatedAt: model.StampOf(min(-50))})
	put(r.prod, *(&model.Task{ID: "3", Key: "TASK-3", Title: "Migrate users table to the new shard", Class: model.ClassFixedDate, Priority: 4, CreatedAt: model.StampOf(min(-30))}).
		WithReservation(&model.Reservation{For: "bravo", Until: min(20), By: "carol", Reason: "knows the schema", Priority: "urgent"}))
	put(r.prod, *((&model.Task{ID: "4", Key: "TASK-4", Title: "Reindex search", State: model.StateClaimed, CreatedAt: model.StampOf(min(-60))}).WithClaim(agent("alpha", "r-17", "n1", -8, -3, 12))).WithMore(model.More{History: []model.Event{{At: min(-8), Actor: "alpha", Action: "claim"}}}))
	put(r.prod, *(&model.Task{ID: "5", Key: "TASK-5", Title: "Compact the event log", State: model.StateClaimed, CreatedAt: model.StampOf(min(-90))}).WithClaim(agent("bravo", "r-9", "n2", -40, -35, -15)))
	put(r.prod, *(&model.Task{ID: "6", Key: "TASK-6", Title: "Investigate failed payout", State: model.StateClaimed, CreatedAt: model.StampOf(min(-45))}).WithClaim(model.Claim{Holder: model.HolderHuman, Name: "HUMAN:carol", Token: "tok-h", ClaimedAt: model.StampOf(min(-20)), HeartbeatAt: model.StampOf(min(-20))}))
	put(r.prod, *(&model.Task{ID: "7", Key: "TASK-7", Title: "Warm caches after deploy", State: model.StateClaimed, CreatedAt: model.StampOf(min(-15))}).WithClaim(agent("delta", "r-2", "n3", -10, -9, 15)))
	put(r.prod, model.Task{ID: "8", Key: "TASK-8", Title: "Ship release notes", State: model.StateDone, CreatedAt: model.StampOf(min(-300))})
	put(r.prod, *(&model.Task{ID: "9", Key: "TASK-9", Title: "Renew the DNS zone", State: model.StateClaimed, CreatedAt: model.StampOf(min(-25))}).WithClaim(agent("alpha", "r-18", "n1", -17, -2, 3)))
	put(r.prod, *(&model.Task{ID: "10", Key: "TASK-10", Title: "Upgrade the payments SDK to v5 across every checkout service", State: model.StateBlocked, CreatedAt: model.StampOf(min(-180)), EditedAt: model.StampOf(min(-40))}).WithMore(model.More{Reason: "needs the vendor's sandbox key", Unblock: &model.Unblock{Action: "ask finance for the key", NextCheckAt: min(20)}}))
	put(r.prod, model.Task{ID: "11", Key: "TASK-11", Title: "Review the retry policy change", State: model.StateReview, CreatedAt: model.StampOf(min(-100)), EditedAt: model.StampOf(min(-12))})
	put(r.prod, *(&model.Task{ID: "12", Key: "TASK-12", Title: "Purge expired sessions", State: model.StateFailed, CreatedAt: model.StampOf(min(-70)), EditedAt: model.StampOf(min(-65))}).WithMore(model.More{Reason: "disk full on db-2", Unblock: &model.Unblock{NextCheckAt: min(-5)}}))
	put(r.prod, *(&model.Task{ID: "13", Key: "TASK-13", Title: "Duplicate of TASK-2", State: model.StateCanceled, CreatedAt: model.StampOf(min(-55))}).WithMore(model.More{Reason: "dup"}))
	put(r.staging, model.Task{ID: "s1", Key: "S-1", Title: "Smoke test the staging deploy", Priority: 3, CreatedAt: model.StampOf(min(-10))})
	put(r.staging, *(&model.Task{ID: "s2", Key: "S-2", Title: "Load test checkout", State: model.StateClaimed, CreatedAt: model.StampOf(min(-240))}).WithClaim(agent("echo", "r-1", "", -200, -180, -160)))
	put(r.archive, model.Task{ID: "a1", Key: "A-1", Title: "Old archived chore", CreatedAt: model.StampOf(min(-600))})
}

// poll hands the dashboard a snapshot of the queues as they are now, the
// way the hub would after polling each.
func (r *rig) poll() {
	r.t.Helper()
	var s hub.Snapshot
	for _, mem := range []*memsource.Memory{r.prod, r.staging, r.archive} {
		d, err := mem.Poll(r.t.Context(), "")
		if err != nil {
			r.t.Fatal(err)
		}
		if r.noTrails {
			for i, t := range d.Tasks {
				bare := *t
				bare.EditMore().History = nil
				d.Tasks[i] = &bare
			}
		}
		s.Sources = append(s.Sources, hub.SourceState{Name: mem.Name(), Status: hub.StatusOK, Since: t0.Add(-time.Hour),
			Updated: r.now.Add(-3 * time.Second), Tasks: hub.TasksOf(d.Tasks), Rescues: mem.Caps().Rescue && !r.noRescue[mem.Name()]})
	}
	s.Policy = model.DefaultPolicy()
	if r.nodes != nil {
		s.Mesh = model.NewMesh(r.nodes, r.holders)
	}
	s.At = r.now
	// The rig's poll stands in for the hub's: as new as any snapshot the
	// hub published for the actions it applied.
	s.Seq = r.hub.Seq()
	r.tracker.Observe(s)
	// As Update does, keeping its commands (the next wait, the alarms) for the test.
	r.m.applySnapshot(s)
}

func (r *rig) size(w, h int) { r.m.Update(tea.WindowSizeMsg{Width: w, Height: h}) }

// namedKeys are the bytes a terminal sends for the keys tests name.
var namedKeys = map[string]string{
	"enter": "\r", "esc": "\x1b", "tab": "\t", "shift+tab": "\x1b[Z",
	"up": "\x1b[A", "down": "\x1b[B", "right": "\x1b[C", "left": "\x1b[D",
	"backspace": "\x7f", "ctrl+w": "\x17", "ctrl+r": "\x12", "ctrl+c": "\x03", "pgdown": "\x1b[6~",
	"home": "\x1b[H", "end": "\x1b[F", "space": " ", "ctrl+space": "\x00", "ctrl+p": "\x10",
}

// keyMsgs are the key messages Bubble Tea v2 makes of what a terminal
// sends for k, decoded by Bubble Tea's own decoder: a named key ("enter",
// "ctrl+w") is one message; other text is the bytes typed, so "jjj" sent
// in one burst is three keys, as the program sees it.
func keyMsgs(t testing.TB, k string) []tea.KeyPressMsg {
	t.Helper()
	b := []byte(k)
	named, isNamed := namedKeys[k]
	if isNamed {
		b = []byte(named)
	}
	var d uv.EventDecoder
	var out []tea.KeyPressMsg
	for len(b) > 0 {
		n, ev := d.Decode(b)
		kp, ok := ev.(uv.KeyPressEvent)
		if n == 0 || !ok {
			t.Fatalf("%q decodes to %T, not a key", k, ev)
		}
		out = append(out, tea.KeyPressMsg(kp))
		b = b[n:]
	}
	if isNamed && (len(out) != 1 || out[0].String() != k) {
		t.Fatalf("the bytes of %q decode to %v", k, out)
	}
	return out
}

// press sends keys ("enter", "y", or text typed in one burst) and runs
// the commands they return, as the program would.
func (r *rig) press(keys ...string) {
	r.t.Helper()
	for _, k := range keys {
		r.keyAt = r.keyAt.Add(time.Second)
		for _, msg := range keyMsgs(r.t, k) {
			r.keyAt = r.keyAt.Add(time.Millisecond)
			_, cmd := r.m.Update(msg)
			r.run(cmd)
		}
	}
}

// typeText types s one rune at a time.
func (r *rig) typeText(s string) {
	for _, c := range s {
		r.press(string(c))
	}
}

func (r *rig) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			r.run(c)
		}
	case tea.QuitMsg:
	default:
		_, next := r.m.Update(msg)
		r.run(next)
	}
}

// screen is the frame as the renderer writes it in the rig's profile.
func (r *rig) screen() string { return inProfile(r.m.View().Content, rigProfile) }

// inProfile is s as Bubble Tea's renderer writes it to a terminal of
// profile p: colours it cannot show downsampled or dropped.
func inProfile(s string, p colorprofile.Profile) string {
	var b strings.Builder
	w := &colorprofile.Writer{Forward: &b, Profile: p}
	_, _ = w.WriteString(s)
	return b.String()
}
