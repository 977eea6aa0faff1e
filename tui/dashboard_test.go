package tui

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/hub"
)

// Golden screens: every view, narrow and wide, light and dark, colours
// stripped. `go test ./tui/... -update` rewrites them.
func TestScreens(t *testing.T) {
	for _, th := range []struct {
		name string
		opt  rigOption
	}{{"dark", func(*Options) {}}, {"light", withLightTheme}} {
		for _, sz := range [][2]int{{80, 24}, {120, 40}} {
			for k := range viewCount {
				t.Run(fmt.Sprintf("%s_%dx%d_%s", views[k].title, sz[0], sz[1], th.name), func(t *testing.T) {
					r := newRig(t, th.opt)
					r.size(sz[0], sz[1])
					r.press(fmt.Sprint(int(k) + 1))
					screen := r.screen()
					checkFits(t, screen, sz[0], sz[1])
					golden.RequireEqual(t, []byte(screen))
				})
				t.Run(fmt.Sprintf("%s_%dx%d_%s_colour", views[k].title, sz[0], sz[1], th.name), func(t *testing.T) {
					rigProfile = colorprofile.ANSI256
					defer func() { rigProfile = colorprofile.NoTTY }()
					r := newRig(t, th.opt)
					r.size(sz[0], sz[1])
					r.press(fmt.Sprint(int(k) + 1))
					screen := r.screen()
					checkFits(t, ansi.Strip(screen), sz[0], sz[1])
					golden.RequireEqual(t, []byte(screen))
				})
			}
		}
	}
}

// Golden screens of the on-call questions at both sizes, light and dark,
// in colour and stripped: a source that does not answer, a blocked task's
// timeline in its detail, and a hand-off to an agent whose node is DOWN.
func TestTroubleScreens(t *testing.T) {
	scenes := map[string]func(r *rig){
		"unreachable": func(r *rig) { r.sick(model.CodeAPIError, "dial tcp 10.0.0.5:5432: connect: connection refused") },
		"timeline":    func(r *rig) { r.selectKey(parkedView, "TASK-10"); r.press("enter", "end") },
		// The Queue sorted by priority, then the same key again: reversed.
		"sort_pri":      func(r *rig) { r.press("P") },
		"sort_pri_desc": func(r *rig) { r.press("P", "P") },
		// ctrl-p narrowed to the commands with an s in them, sort chosen.
		"palette": func(r *rig) { r.press("ctrl+p", "s", "o", "down") },
		"handoff_down": func(r *rig) {
			r.selectKey(queueView, "TASK-1")
			r.press("h")
			r.typeText("delta")
		},
	}
	for name, scene := range scenes {
		for _, th := range []struct {
			name string
			opt  rigOption
		}{{"dark", func(*Options) {}}, {"light", withLightTheme}} {
			for _, colour := range []bool{false, true} {
				for _, sz := range [][2]int{{80, 24}, {120, 40}} {
					label := fmt.Sprintf("%s_%dx%d_%s", name, sz[0], sz[1], th.name)
					if colour {
						label += "_colour"
					}
					t.Run(label, func(t *testing.T) {
						if colour {
							rigProfile = colorprofile.ANSI256
							defer func() { rigProfile = colorprofile.NoTTY }()
						}
						r := newRig(t, th.opt)
						r.size(sz[0], sz[1])
						scene(r)
						screen := r.screen()
						checkFits(t, ansi.Strip(screen), sz[0], sz[1])
						golden.RequireEqual(t, []byte(screen))
					})
				}
			}
		}
	}
}

// checkFits fails when a screen is taller or wider than the terminal.
func checkFits(t *testing.T, screen string, w, h int) {
	t.Helper()
	lines := strings.Split(screen, "\n")
	if len(lines) > h {
		t.Fatalf("%d lines on a %d-line terminal", len(lines), h)
	}
	for i, l := range lines {
		if n := len([]rune(l)); n > w {
			t.Fatalf("line %d is %d cells on a %d-cell terminal: %q", i, n, w, l)
		}
	}
}

func TestNumberKeysAndTabsSwitchViews(t *testing.T) {
	r := newRig(t)
	steps := []struct {
		key  string
		want viewKind
	}{{"2", leasesView}, {"tab", staleView}, {"tab", nodesView}, {"shift+tab", staleView}, {"5", activityView}, {"tab", parkedView}, {"7", allView}, {"tab", statsView}, {"tab", queueView}, {"shift+tab", statsView}, {"shift+tab", allView}, {"6", parkedView}, {"8", statsView}, {"1", queueView}}
	for _, s := range steps {
		r.press(s.key)
		if r.m.board.active != s.want {
			t.Fatalf("after %q the view is %s, want %s", s.key, views[r.m.board.active].title, views[s.want].title)
		}
	}
}

// The Queue is what agents' next would hand out: eligible tasks, and dead
// holders' claims past the grace in sources whose next rescues them (not
// staging here, which keeps them for the sweep as a Notion source does).
func TestQueueShowsWhatNextHandsOutInExactlyThePullOrder(t *testing.T) {
	r := newRig(t)
	r.noRescue = map[string]bool{"staging": true}
	r.poll()
	var want []*model.Task
	for _, task := range r.m.board.all {
		if model.Pooled(task, r.now, model.DefaultPolicy().Grace, task.Source != "staging") {
			want = append(want, task)
		}
	}
	model.SortPullOrder(want)
	got := rowKeys(r.m.board.panes[queueView].shown)
	if !slices.Equal(got, keys(want)) {
		t.Fatalf("queue %v, want pull order %v", got, keys(want))
	}
	if !slices.Contains(got, "TASK-5") || slices.Contains(got, "S-2") {
		t.Fatalf("queue %v: want prod's dead claim TASK-5 (next rescues it) and not staging's S-2", got)
	}
}

func rowKeys(rows []row) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.t.DisplayKey())
	}
	return out
}

func keys(ts []*model.Task) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.DisplayKey())
	}
	return out
}

// selectKey puts the cursor on the task with the given display key.
func (r *rig) selectKey(view viewKind, key string) {
	r.t.Helper()
	r.press(fmt.Sprint(int(view) + 1))
	p := r.m.pane()
	for i, row := range p.shown {
		if row.t.DisplayKey() == key {
			p.grid.Select(i)
			r.m.syncKeys()
			return
		}
	}
	r.t.Fatalf("%s is not in %s: %v", key, views[view].title, rowKeys(p.shown))
}

func (r *rig) get(id string) *model.Task {
	r.t.Helper()
	task, err := r.prod.Get(context.Background(), id)
	if err != nil {
		r.t.Fatal(err)
	}
	return task
}

func TestDetailShowsEveryFieldAndTheHistory(t *testing.T) {
	r := newRig(t)
	r.selectKey(leasesView, "TASK-4")
	r.press("enter")
	screen := r.screen()
	r.press("end")
	screen += r.screen()
	for _, want := range []string{"TASK-4 · prod", "run         r-17", "node        n1", "lock token  tok-…", "left        12:00", "(in 12m)", "history (2, newest last)", "claim", "heartbeat      alpha (last sign of life)"} {
		if !strings.Contains(screen, want) {
			t.Fatalf("detail lacks %q:\n%s", want, screen)
		}
	}
	r.press("esc")
	if len(r.m.dialogs) != 0 {
		t.Fatal("esc must close the detail")
	}
	r.press("4", "enter")
	if s := r.screen(); !strings.Contains(s, "node n3") || !strings.Contains(s, "TASK-7") {
		t.Fatalf("a DOWN node's detail must list its tasks:\n%s", s)
	}
}

func TestHelpIsGeneratedFromTheKeyMap(t *testing.T) {
	r := newRig(t, func(o *Options) { o.Keys = map[string][]string{"claim": {"t"}} })
	r.selectKey(leasesView, "TASK-4")
	r.press("?")
	if s := r.screen(); !strings.Contains(s, "t claim") || strings.Contains(s, "c claim") {
		t.Fatalf("help does not follow the rebinding:\n%s", s)
	}
	r.press("esc", "t")
	if d, ok := r.m.dialogs[0].(*formDialog); !ok || d.req.Action != model.ActionTakeover {
		t.Fatal("the rebound key does not claim")
	}
}

func TestRebindRefusesDangerousMaps(t *testing.T) {
	for _, keys := range []map[string][]string{
		{"release": {"ctrl+x"}},
		{"cancel": {"c"}}, // c is claim's
		{"launch": {"l"}},
		{"quit": {}},
	} {
		if _, err := DefaultKeyMap().Rebind(keys); err == nil {
			t.Errorf("Rebind(%v) accepted", keys)
		}
	}
}

func TestMouseSelectsAndScrolls(t *testing.T) {
	r := newRig(t)
	r.m.Update(tea.MouseClickMsg{X: 10, Y: tableTop + 3, Button: tea.MouseLeft})
	if got := r.m.selected().DisplayKey(); got != "S-1" {
		t.Fatalf("a click on the third row selected %s", got)
	}
	r.m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	if r.m.pane().grid.cursor != 0 {
		t.Fatal("the wheel did not scroll up")
	}
	r.m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if r.m.pane().grid.cursor != 3 {
		t.Fatal("the wheel did not scroll down")
	}
	r.size(160, 24) // room for every tab beside the alarm
	x := strings.Index(r.screen(), "  3 Stale") + 2
	r.m.Update(tea.MouseClickMsg{X: x, Y: 0, Button: tea.MouseLeft})
	if r.m.board.active != staleView {
		t.Fatal("a click on a tab must switch to it")
	}
}

func TestCountdownsTickWithoutPolling(t *testing.T) {
	r := newRig(t)
	r.press("2")
	polls := r.prod.Polls()
	r.now = r.now.Add(61 * time.Second)
	r.m.Update(tickMsg{})
	if row := rowOf(t, r, "TASK-9"); !strings.Contains(row, "1:59") {
		t.Fatalf("countdown after 61 s: %q", row)
	}
	r.now = t0.Add(3*time.Minute + time.Second)
	r.m.Update(tickMsg{})
	r.press("3")
	rowOf(t, r, "TASK-9") // its lease ran out: now it is stale
	if r.prod.Polls() != polls {
		t.Fatal("a tick polled the source")
	}
}

func TestFocusPausesPolling(t *testing.T) {
	r := newRig(t)
	r.m.Update(tea.BlurMsg{})
	if !r.hub.Paused() || !strings.Contains(r.screen(), "paused") {
		t.Fatal("losing focus must pause polling and say so")
	}
	r.m.Update(tea.FocusMsg{})
	if r.hub.Paused() {
		t.Fatal("focus must resume polling")
	}
}

func TestRefreshKey(t *testing.T) {
	for _, k := range []string{"R", "ctrl+r"} {
		r := newRig(t)
		r.press(k)
		if !strings.Contains(r.screen(), "refreshing") {
			t.Fatalf("%s did not refresh", k)
		}
	}
}

func TestTinyTerminalsDoNotBreak(t *testing.T) {
	r := newRig(t)
	for _, sz := range [][2]int{{20, 5}, {40, 10}, {1, 1}} {
		r.size(sz[0], sz[1])
		for k := range viewCount {
			r.press(fmt.Sprint(int(k) + 1))
			_ = r.screen()
		}
	}
}

func TestAPendingActionMarksItsRowAtOnce(t *testing.T) {
	r := newRig(t)
	r.selectKey(leasesView, "TASK-4")
	cmd := r.m.send(sources.Request{Action: model.ActionForceRelease, Seen: r.m.selected()})
	if row := rowOf(t, r, "TASK-4"); !strings.HasPrefix(row, "›…") {
		t.Fatalf("the row does not show the action under way: %q", row)
	}
	r.press("r")
	if len(r.m.dialogs) != 0 || !strings.Contains(r.screen(), "already has an action under way") {
		t.Fatal("a second action on a busy task must be refused")
	}
	r.run(cmd)
	if len(r.m.work.pending) != 0 {
		t.Fatal("the result must clear the mark")
	}
}

// Golden screens of the dialogs at the smallest size they must work at.
func TestDialogScreens(t *testing.T) {
	for name, keys := range map[string][]string{
		"confirm_release": {"2", "down", "r", "enter"},
		"cancel_reason":   {"x"},
		"handoff":         {"3", "h"},
		"help":            {"?"},
		"detail":          {"2", "down", "enter"},
		"filter":          {"/", "a", "g", "e", "n", "t", ":", "a"},
	} {
		t.Run(name, func(t *testing.T) {
			r := newRig(t)
			r.press(keys...)
			screen := r.screen()
			checkFits(t, screen, 80, 24)
			golden.RequireEqual(t, []byte(screen))
		})
	}
}

// Text from a backend is data, never terminal commands.
func TestEscapeSequencesInTaskTextAreNotPassedToTheTerminal(t *testing.T) {
	r := newRig(t)
	r.prod.Put((&model.Task{ID: "evil", Key: "EVIL-1", Title: "\x1b]0;pwned\x07\x1b[2Jclear me\nand \u009b31m gpj.\u202eexe", State: model.StateQueued, Priority: 9}).WithMore(model.More{Reason: "\u2066reason\u2069"}))
	r.poll()
	r.selectKey(queueView, "EVIL-1")
	for _, k := range []string{"enter", "esc", "c"} {
		r.press(k)
		if s := r.screen(); strings.ContainsAny(s, "\x1b\x07\u009b\u202e\u2066\u2069") {
			t.Fatalf("after %q a control character reached the screen: %q", k, s)
		}
	}
}

func TestActivityKeepsTheNewestLines(t *testing.T) {
	r := newRig(t)
	task := r.get("1")
	s := r.m.board.snap
	for i := range 3 * maxActivity {
		after := *task
		after.Title = fmt.Sprint("line ", i)
		after.State = model.StateClaimed
		s.Transitions = append(s.Transitions, hub.Transition{At: t0.Add(time.Duration(i) * time.Second), Before: task, After: &after})
	}
	r.m.Update(snapshotMsg(s))
	r.press("5")
	if n := len(r.m.board.acts); n > 2*maxActivity {
		t.Fatalf("%d activity lines kept, want at most %d", n, 2*maxActivity)
	}
	if first := r.m.pane().acts[0]; !first.At.Equal(t0.Add(time.Duration(3*maxActivity-1) * time.Second)) {
		t.Fatalf("the first line is from %s, want the newest", first.At)
	}
}

// TestNodesDownByHolderMappingShowStale is the case where the dashboard once
// said "Nothing stale" while the sweep marked both claims: holders place
// worker-7 on "oracle" (the registry spells it ORACLE) and worker-8 on
// SANDMAN, both DOWN, both leases still running.
func TestNodesDownByHolderMappingShowStale(t *testing.T) {
	r := newRig(t)
	r.size(120, 40)
	for _, w := range []string{"worker-7", "worker-8"} {
		r.prod.Put((&model.Task{ID: w, Key: "W-" + w[len(w)-1:], Title: "job of " + w, State: model.StateClaimed, RawStatus: "claimed"}).WithClaim(model.Claim{Holder: model.HolderAgent, Name: w, Token: "tok-" + w, ClaimedAt: model.StampOf(t0.Add(-2 * time.Minute)), Expires: model.StampOf(t0.Add(18 * time.Minute))}))
	}
	r.nodes = []model.Node{{Name: "ORACLE", Status: model.NodeDown}, {Name: "SANDMAN", Status: model.NodeDown}}
	r.holders = map[string]string{"worker-7": "oracle", "worker-8": "SANDMAN"}
	r.poll()
	r.press("3")
	for key, node := range map[string]string{"W-7": "ORACLE", "W-8": "SANDMAN"} {
		if row := rowOf(t, r, key); !strings.Contains(row, "STALE") || !strings.Contains(row, "node "+node+" DOWN") {
			t.Errorf("%s in the Stale view: %q, want STALE and node %s DOWN", key, row, node)
		}
	}
}

// TestSweepNoticesReachActivity: what enforcement did arrives in the hub's
// snapshot and is a line in Activity, failures marked as such.
func TestSweepNoticesReachActivity(t *testing.T) {
	r := newRig(t)
	r.size(120, 40)
	r.m.Update(snapshotMsg(hub.Snapshot{Sources: r.m.board.snap.Sources, Policy: r.m.board.snap.Policy, Mesh: r.m.board.snap.Mesh,
		Notices: []hub.Notice{{At: t0, Source: "prod", Task: "5", What: "marked urgent"}}}))
	r.press("5")
	if row := strings.Fields(rowOf(t, r, "marked urgent")); len(row) < 4 || row[2] != "prod" || row[3] != "5" {
		t.Fatalf("activity row: %q", row)
	}
}

func TestViewKeysRebindByTheViewsName(t *testing.T) {
	r := newRig(t, func(o *Options) { o.Keys = map[string][]string{"parked": {"p"}} })
	r.press("p")
	if r.m.board.active != parkedView {
		t.Fatalf("p opened %s, want Parked", views[r.m.board.active].title)
	}
	r.press("?")
	if s := r.screen(); !strings.Contains(s, "p         parked") {
		t.Fatalf("help does not show the rebound view key:\n%s", s)
	}
}

// TestAStandingFilterIsJudgedOnEverySnapshotAtItsTime: a snapshot judges
// the filter once for every task, while it has each at hand; what it judged
// must be what typing the filter shows, and a view shown later is judged
// again at its own time, not derive's.
func TestEveryKeyIsOneRow(t *testing.T) {
	var k KeyMap
	fields := map[*key.Binding]bool{}
	v := reflect.ValueOf(&k).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Array:
			for j := range f.Len() {
				fields[f.Index(j).Addr().Interface().(*key.Binding)] = true
			}
		default:
			fields[f.Addr().Interface().(*key.Binding)] = true
		}
	}
	names := map[string]bool{}
	for _, r := range keyRows {
		b := r.field(&k)
		if !fields[b] {
			t.Errorf("row %q binds a field twice, or none of KeyMap's", r.name)
		}
		delete(fields, b)
		if r.name != "" && names[r.name] {
			t.Errorf("two rows are named %q", r.name)
		}
		names[r.name] = true
		if r.action != "" && !r.destructive {
			t.Errorf("%s acts on a task but is not destructive", r.name)
		}
	}
	if len(fields) != 0 {
		t.Errorf("%d bindings of KeyMap have no row", len(fields))
	}
}

// TestALeasePastTheCeilingIsSuspectAndRescued: an agent's lease to 9999
// (a lock file's expires_at) sits on the Stale ladder at once as SUSPECT,
// its WHY naming the lease against the 24h ceiling within 80 columns, the
// top bar counts it, and the rescue keys are offered and work on it.
func TestALeasePastTheCeilingIsSuspectAndRescued(t *testing.T) {
	r := newRig(t)
	claim := func(expires time.Time) model.Claim {
		return model.Claim{Holder: model.HolderAgent, Name: "zulu", RunID: "r-99", Token: "tok-99",
			ClaimedAt: model.StampOf(t0.Add(-10 * time.Minute)), HeartbeatAt: model.StampOf(t0.Add(-time.Minute)), Expires: model.StampOf(expires)}
	}
	r.prod.Put((&model.Task{ID: "30", Key: "TASK-30", Title: "Hold forever", State: model.StateClaimed, RawStatus: "claimed",
		CreatedAt: model.StampOf(t0.Add(-time.Hour))}).WithClaim(claim(time.Date(9999, 12, 31, 23, 59, 0, 0, time.UTC))))
	r.prod.Put((&model.Task{ID: "31", Key: "TASK-31", Title: "Hold a month", State: model.StateClaimed, RawStatus: "claimed",
		CreatedAt: model.StampOf(t0.Add(-time.Hour))}).WithClaim(claim(t0.Add(30 * 24 * time.Hour))))
	r.poll()
	r.selectKey(staleView, "TASK-30")
	s := r.screen()
	for _, want := range []string{"TASK-30 SUSPECT", "lease 7973y > 24h ceiling", "lease 30d > 24h ceiling", "2 SUSPECT"} {
		if !strings.Contains(s, want) {
			t.Fatalf("the Stale view at 80 columns lacks %q:\n%s", want, s)
		}
	}
	on := r.m.offers(r.get("30"), false)
	for i, ta := range taskActions {
		if (ta.action == model.ActionTakeover || ta.action == model.ActionForceRelease) && !on[i] {
			t.Errorf("%s is not offered on a lease past the ceiling", ta.action)
		}
	}
	if footer := lastLine(s); !strings.Contains(footer, "c claim") || !strings.Contains(footer, "r release") {
		t.Fatalf("the footer does not offer the rescue keys: %q", footer)
	}
	r.press("r", "enter", "y")
	if got := r.get("30"); got.Held() || got.State != model.StateQueued {
		t.Fatalf("after the force-release TASK-30 is %s held by %q", got.State, got.Claim().Name)
	}
}

// TestTheLeaseBarIsScaledToTheTasksOwnLease: TASK-9 heartbeated two
// minutes ago for a five-minute lease and has three minutes left: the bar
// is three fifths full, not three twentieths of the policy's lease.
func TestTheLeaseBarIsScaledToTheTasksOwnLease(t *testing.T) {
	r := newRig(t)
	r.press("2")
	if row := rowOf(t, r, "TASK-9"); !strings.Contains(row, "██████░░░░") {
		t.Fatalf("TASK-9's lease bar, 3:00 left of a 5:00 lease: %q", row)
	}
}
