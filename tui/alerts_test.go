package tui

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/claimdeck/claimdeck/model"
)

// rings collects what the dashboard rings, in the order rung.
type rings struct{ titles []string }

func (g *rings) alert(a Alarm) { g.titles = append(g.titles, a.Title) }

// settle delivers the queued alarms as the program would run the command.
func (r *rig) settle() { r.run(r.m.alarms.ring(r.m.opts.Alert, r.m.typing())) }

func TestAlarmsRingOncePerTaskAndLevelAndNeverWhilePaused(t *testing.T) {
	g := &rings{}
	r := newRig(t, func(o *Options) { o.Alert = g.alert })
	r.settle()
	want := []string{"S-2 ESCALATED", "TASK-11 waits for review", "TASK-5 URGENT", "node n3 DOWN"}
	if !slices.Equal(slices.Sorted(slices.Values(g.titles)), want) {
		t.Fatalf("rang %q, want %q", g.titles, want)
	}
	r.poll()
	r.settle()
	if len(g.titles) != 4 {
		t.Fatalf("the same alarms rang again: %q", g.titles)
	}

	r.m.Update(tea.BlurMsg{})
	r.now = r.now.Add(26 * time.Minute) // TASK-5: 61 min without a sign of life
	r.m.derive()
	r.settle()
	if len(g.titles) != 4 {
		t.Fatalf("rang while paused: %q", g.titles)
	}
	r.m.Update(tea.FocusMsg{})
	r.m.derive()
	r.settle()
	// TASK-7, on the DOWN node, has climbed too: 35 min since its last beat.
	if got := slices.Sorted(slices.Values(g.titles[4:])); !slices.Equal(got, []string{"TASK-5 NOTIFY", "TASK-7 URGENT"}) {
		t.Fatalf("after the pause rang %q, want TASK-5 NOTIFY and TASK-7 URGENT once each", got)
	}
}

func TestAFlurryOfAlarmsRingsOnce(t *testing.T) {
	g := &rings{}
	r := newRig(t, func(o *Options) { o.Alert = g.alert })
	r.now = r.now.Add(3 * time.Hour) // every agent claim is escalated now
	r.m.derive()
	r.settle()
	// One summary of the alarms; the review waiting rings apart.
	if !slices.Equal(g.titles, []string{"7 new alarms", "TASK-11 waits for review"}) {
		t.Fatalf("rang %q, want one summary and the review", g.titles)
	}
}

// A task newly waiting for review rings once; nothing rings while the
// person types in a dialog, and what waited rings once they stop.
func TestAReviewRingsOnceAndAlarmsWaitWhileThePersonTypes(t *testing.T) {
	g := &rings{}
	r := newRig(t, func(o *Options) { o.Alert = g.alert })
	r.settle()
	g.titles = nil
	r.selectKey(queueView, "TASK-2")
	r.press("x") // the cancel's reason: a text field has the keyboard
	r.typeText("dup")
	r.staging.Put(&model.Task{ID: "s9", Key: "S-9", Title: "Check the staging banner", State: model.StateReview, RawStatus: "review",
		CreatedAt: model.StampOf(t0.Add(-time.Hour)), EditedAt: model.StampOf(t0.Add(-time.Minute))})
	r.poll()
	r.settle()
	if len(g.titles) != 0 {
		t.Fatalf("rang %q while the person typed a reason", g.titles)
	}
	r.press("esc")
	r.settle() // the next snapshot or tick rings what waited
	if !slices.Equal(g.titles, []string{"S-9 waits for review"}) {
		t.Fatalf("after the dialog closed rang %q, want the review once", g.titles)
	}
	r.poll()
	r.settle()
	if len(g.titles) != 1 {
		t.Fatalf("the review rang again: %q", g.titles)
	}
}

// The terminal's title carries the worst state and how many tasks need a
// person, and changes with them.
func TestTheWindowTitleCarriesTheWorstStateAndCount(t *testing.T) {
	r := newRig(t)
	// n3 DOWN; S-2 escalated, TASK-5 urgent, TASK-11 in review.
	if got, want := r.m.board.windowTitle(), "claimdeck · 1 DOWN · 3 need you"; got != want {
		t.Fatalf("title %q, want %q", got, want)
	}
	r.nodes = nil
	r.poll()
	if got, want := r.m.board.windowTitle(), "claimdeck · 3 need you"; got != want {
		t.Fatalf("with the node back, title %q, want %q", got, want)
	}
	if cmd := r.m.screen.retitle(r.m.board.windowTitle(), r.m.opts.Title); cmd == nil {
		t.Fatal("a changed title is not set")
	}
	if cmd := r.m.screen.retitle(r.m.board.windowTitle(), r.m.opts.Title); cmd != nil {
		t.Fatal("an unchanged title is set again")
	}
}

func TestTheTerminalRingsOnlyWhenAsked(t *testing.T) {
	if (AlertOptions{}).terminal(&bytes.Buffer{}) != nil {
		t.Fatal("alerts are opt-in: with both off nothing rings")
	}
	var b bytes.Buffer
	AlertOptions{Bell: true}.terminal(&b)(Alarm{Title: "TASK-5 URGENT\x1b]52;c;evil\a", Body: "x"})
	if b.String() != "\a" {
		t.Fatalf("the bell wrote %q", b.String())
	}
	if got := safe("TASK\x1b]0;owned\a;x"); strings.ContainsAny(got, "\x1b\a;") {
		t.Fatalf("notification text keeps control bytes: %q", got)
	}
}

// A title that starts with '-' (a task key, a node name) reaches
// notify-send as text, never as one of its options: a real notify-send
// stand-in records the argv it was given.
func TestADesktopAlarmTitleIsNeverAnOption(t *testing.T) {
	dir := t.TempDir()
	argv := filepath.Join(dir, "argv")
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > " + argv + "\n"
	if err := os.WriteFile(filepath.Join(dir, "notify-send"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	AlertOptions{Desktop: true}.terminal(io.Discard)(Alarm{Title: "--urgency=critical", Body: "-x stale"})
	got, err := os.ReadFile(argv)
	if err != nil {
		t.Fatal(err)
	}
	if want := "--app-name=claimdeck\n--\n--urgency=critical\n-x stale\n"; string(got) != want {
		t.Fatalf("notify-send got argv %q, want %q", got, want)
	}
}

// A remote terminal's notification (an SSH session) reaches that terminal
// as OSC 777 and OSC 9, and never runs notify-send on the server, even
// where it is installed.
func TestARemoteAlarmGoesToItsTerminalNotThisHost(t *testing.T) {
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	if err := os.WriteFile(filepath.Join(dir, "notify-send"), []byte("#!/bin/sh\n: > "+ran+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	var out strings.Builder
	AlertOptions{Desktop: true, Remote: true}.terminal(&out)(Alarm{Title: "claimdeck", Body: "2 need you"})
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("a remote session's notification ran notify-send on the server")
	}
	if !strings.Contains(out.String(), "\x1b]777;notify;claimdeck;2 need you") || !strings.Contains(out.String(), "\x1b]9;claimdeck: 2 need you") {
		t.Fatalf("the session's terminal got %q, want OSC 777 and OSC 9", out.String())
	}
}
