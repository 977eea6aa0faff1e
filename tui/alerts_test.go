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

	tea "github.com/charmbracelet/bubbletea"
)

// rings collects what the dashboard rings, in the order rung.
type rings struct{ titles []string }

func (g *rings) alert(a Alarm) { g.titles = append(g.titles, a.Title) }

// settle delivers the queued alarms as the program would run the command.
func (r *rig) settle() { r.run(r.m.ring()) }

func TestAlarmsRingOncePerTaskAndLevelAndNeverWhilePaused(t *testing.T) {
	g := &rings{}
	r := newRig(t, func(o *Options) { o.Alert = g.alert })
	r.settle()
	want := []string{"S-2 ESCALATED", "TASK-5 URGENT", "node n3 DOWN"}
	if !slices.Equal(slices.Sorted(slices.Values(g.titles)), want) {
		t.Fatalf("rang %q, want %q", g.titles, want)
	}
	r.poll()
	r.settle()
	if len(g.titles) != 3 {
		t.Fatalf("the same alarms rang again: %q", g.titles)
	}

	r.m.Update(tea.BlurMsg{})
	r.now = r.now.Add(26 * time.Minute) // TASK-5: 61 min without a sign of life
	r.m.derive()
	r.settle()
	if len(g.titles) != 3 {
		t.Fatalf("rang while paused: %q", g.titles)
	}
	r.m.Update(tea.FocusMsg{})
	r.m.derive()
	r.settle()
	// TASK-7, on the DOWN node, has climbed too: 35 min since its last beat.
	if got := slices.Sorted(slices.Values(g.titles[3:])); !slices.Equal(got, []string{"TASK-5 NOTIFY", "TASK-7 URGENT"}) {
		t.Fatalf("after the pause rang %q, want TASK-5 NOTIFY and TASK-7 URGENT once each", got)
	}
}

func TestAFlurryOfAlarmsRingsOnce(t *testing.T) {
	g := &rings{}
	r := newRig(t, func(o *Options) { o.Alert = g.alert })
	r.now = r.now.Add(3 * time.Hour) // every agent claim is escalated now
	r.m.derive()
	r.settle()
	if len(g.titles) != 1 || !strings.HasSuffix(g.titles[0], "new alarms") {
		t.Fatalf("rang %q, want one summary", g.titles)
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
