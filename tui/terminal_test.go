package tui

import (
	"context"
	"image/color"
	"io"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/sourcetest/memsource"
	"github.com/claimdeck/claimdeck/theme"
)

// terminal is a program from Program over a pipe for its keyboard and a
// buffer for its screen, as a door serving another terminal would run it.
type terminal struct {
	t      *testing.T
	keys   *io.PipeWriter
	out    *syncBuffer
	screen strings.Builder
	done   chan tea.Model
}

func startTerminal(t *testing.T, o Options) *terminal {
	t.Helper()
	mem := memsource.NewMemory("local")
	for _, id := range []string{"1", "2", "3", "4", "5"} {
		mem.Put(&model.Task{ID: id, Key: "RUN-" + id, Title: "runs", State: model.StateQueued})
	}
	o.Hub = hub.New(hub.Config{Feeds: []hub.Feed{{Source: mem, Every: 50 * time.Millisecond}}, Desk: &sources.Desk{Actor: "alice"}})
	in, keys := io.Pipe()
	tm := &terminal{t: t, keys: keys, out: &syncBuffer{ch: make(chan []byte, 1024)}, done: make(chan tea.Model, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	o.ProgramOptions = []tea.ProgramOption{tea.WithInput(in), tea.WithOutput(tm.out), tea.WithWindowSize(100, 30), tea.WithEnvironment([]string{"TERM=xterm-256color"})}
	p, err := Program(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	hubDone := make(chan struct{})
	go func() { o.Hub.Run(ctx); close(hubDone) }()
	go func() {
		m, err := p.Run()
		if err != nil {
			t.Errorf("program: %v", err)
		}
		tm.done <- m
	}()
	t.Cleanup(func() {
		cancel()
		go func() {
			for range tm.out.ch {
			}
		}()
		<-hubDone
	})
	return tm
}

// see waits until the screen has shown text.
func (tm *terminal) see(text string) {
	tm.t.Helper()
	deadline := time.After(10 * time.Second)
	for !strings.Contains(tm.screen.String(), text) {
		select {
		case p := <-tm.out.ch:
			tm.screen.Write(p)
		case <-deadline:
			tm.t.Fatalf("%q never reached the screen:\n%q", text, tm.screen.String())
		}
	}
}

// send writes bytes to the program's keyboard in one write, as a
// terminal sends what was typed between two reads.
func (tm *terminal) send(b string) {
	tm.t.Helper()
	if _, err := tm.keys.Write([]byte(b)); err != nil {
		tm.t.Fatal(err)
	}
}

// quit types q and returns the program's last model.
func (tm *terminal) quit() *Model {
	tm.t.Helper()
	go func() {
		for p := range tm.out.ch {
			_ = p
		}
	}()
	tm.send("q")
	select {
	case m := <-tm.done:
		return m.(*Model)
	case <-time.After(10 * time.Second):
		tm.t.Fatal("q did not end the program")
	}
	return nil
}

// Keys a terminal sends in one read ("7jjj", a burst of typing or key
// repeat) reach the dashboard key by key, through Bubble Tea v2's decoder.
func TestABurstFromTheTerminalIsTakenKeyByKey(t *testing.T) {
	tm := startTerminal(t, Options{Theme: theme.Options{Mode: theme.Dark}})
	tm.see("RUN-5")
	tm.send("7jjj")
	m := tm.quit()
	if m.board.active != allView || m.pane().grid.cursor != 3 {
		t.Fatalf("7jjj in one read: view %s, cursor %d; want All, 3", views[m.board.active].title, m.pane().grid.cursor)
	}
}

// A click arrives as the terminal's SGR mouse report and selects the row
// under it; a release does nothing more.
func TestAClickFromTheTerminalSelectsTheRow(t *testing.T) {
	tm := startTerminal(t, Options{Theme: theme.Options{Mode: theme.Dark}})
	tm.see("RUN-5")
	// Column 11, the third row under the header (1-based in the report).
	tm.send("\x1b[<0;11;" + string(rune('0'+tableTop+1+3)) + "M\x1b[<0;11;" + string(rune('0'+tableTop+1+3)) + "m")
	m := tm.quit()
	if got := m.pane().grid.cursor; got != 2 {
		t.Fatalf("a click on the third row left the cursor on row %d", got)
	}
}

// The program sets the title through its view, asks a terminal left on
// theme auto for its background without waiting (this one never answers,
// and the frame is drawn all the same), and never asks on a chosen theme.
func TestTheProgramAsksNothingItWaitsFor(t *testing.T) {
	t.Setenv("COLORFGBG", "")
	for _, mode := range []theme.Mode{theme.Auto, theme.Dark} {
		tm := startTerminal(t, Options{Theme: theme.Options{Mode: mode}})
		tm.see("RUN-5")
		tm.see("\x1b]2;claimdeck")
		if asked := strings.Contains(tm.screen.String(), "\x1b]11;?"); asked != (mode == theme.Auto) {
			t.Errorf("theme %v: asked the background: %v", mode, asked)
		}
		tm.quit()
	}
}

// On theme auto the palette follows the background the terminal reports;
// a chosen theme or given styles stay.
func TestAutoFollowsTheReportedBackground(t *testing.T) {
	t.Setenv("COLORFGBG", "")
	white := tea.BackgroundColorMsg{Color: color.RGBA{R: 0xff, G: 0xff, B: 0xff, A: 0xff}}
	for _, c := range []struct {
		name string
		o    Options
		dark bool
	}{
		{"auto", Options{}, false},
		{"dark", Options{Theme: theme.Options{Mode: theme.Dark}}, true},
		{"styles", Options{Styles: theme.New(theme.Options{Mode: theme.Dark})}, true},
	} {
		c.o.Hub = hub.New(hub.Config{})
		m, err := New(c.o)
		if err != nil {
			t.Fatal(err)
		}
		if !m.styles.Dark {
			t.Fatalf("%s: light before the terminal answered", c.name)
		}
		m.Update(white)
		if m.styles.Dark != c.dark || m.paints.styles != m.styles {
			t.Errorf("%s on a white background: dark %v, want %v", c.name, m.styles.Dark, c.dark)
		}
	}
}

// With the keyboard's disambiguation a terminal tells ctrl+i from tab:
// tab changes the view, ctrl+i is a key of its own that a key map can
// bind; a key's release is never taken for a press.
func TestCtrlIIsNotTabAndReleasesAreIgnored(t *testing.T) {
	r := newRig(t)
	r.m.Update(tea.KeyPressMsg{Code: 'i', Mod: tea.ModCtrl})
	if r.m.board.active != queueView {
		t.Fatalf("ctrl+i moved to %s", views[r.m.board.active].title)
	}
	r.m.Update(tea.KeyReleaseMsg{Code: tea.KeyTab})
	if r.m.board.active != queueView {
		t.Fatal("the release of tab changed the view")
	}
	r.press("tab")
	if r.m.board.active != leasesView {
		t.Fatal("tab did not change the view")
	}
	r = newRig(t, func(o *Options) { o.Keys = map[string][]string{"next-view": {"ctrl+i"}} })
	r.m.Update(tea.KeyPressMsg{Code: 'i', Mod: tea.ModCtrl})
	if r.m.board.active != leasesView {
		t.Fatal("ctrl+i bound to next-view did nothing")
	}
}

// Pasted text goes into the field being typed in and nowhere else.
func TestPasteTypesIntoTheFilterOnly(t *testing.T) {
	r := newRig(t)
	for _, p := range []string{"q", "r", "/"} {
		r.m.Update(tea.PasteMsg{Content: p})
		if len(r.m.dialogs) != 0 || r.m.input.filtering || r.m.screen.quitting {
			t.Fatalf("a paste of %q outside a text field acted", p)
		}
	}
	r.press("/")
	r.m.Update(tea.PasteMsg{Content: "agent:al\n"})
	if got := r.m.input.filter.Value(); got != "agent:al" {
		t.Fatalf("pasted into the filter: %q", got)
	}
}

// A configuration written for v1's key names still binds: " " is the
// space bar, ctrl+@ is ctrl+space.
func TestV1KeyNamesStillBind(t *testing.T) {
	k, err := DefaultKeyMap().Rebind(map[string][]string{"mark": {" "}, "mark-range": {"ctrl+@"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := k.Mark.Keys(); len(got) != 1 || got[0] != "space" {
		t.Fatalf("mark on %q", got)
	}
	if got := k.MarkRange.Keys(); len(got) != 1 || got[0] != "ctrl+space" {
		t.Fatalf("mark-range on %q", got)
	}
}

// Letters typed in the same burst as the key that closed a dialog were
// typed for that dialog: dropped, with a note, not given to the view
// underneath. A letter typed a moment later is a key of the view.
func TestLettersRightAfterADialogClosedAreDropped(t *testing.T) {
	r := newRig(t)
	r.selectKey(leasesView, "TASK-4")
	r.press("r", "enter") // the confirmation
	r.press("nr")         // n closes it; r comes a millisecond later
	if n := len(r.m.dialogs); n != 0 {
		t.Fatalf("the r typed with the n opened %T", r.m.dialogs[n-1])
	}
	if !strings.Contains(r.screen(), `dropped "r"`) {
		t.Fatalf("the footer does not say r was dropped:\n%s", r.screen())
	}
	r.press("r") // a second later: the view's release
	if n := len(r.m.dialogs); n != 1 {
		t.Fatal("r typed a second after the dialog closed did nothing")
	}
}
