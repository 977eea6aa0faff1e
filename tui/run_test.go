package tui

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/charmbracelet/colorprofile"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/sourcetest/memsource"
	"github.com/claimdeck/claimdeck/theme"
)

// syncBuffer is the program's screen, read while it is being written.
type syncBuffer struct {
	ch chan []byte
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.ch <- bytes.Clone(p)
	return len(p), nil
}

func TestRunDrawsFromTheHubAndEndsWithItsContext(t *testing.T) {
	mem := memsource.NewMemory("local")
	mem.Put(&model.Task{ID: "t1", Key: "RUN-1", Title: "runs", State: model.StateQueued})
	h := hub.New(hub.Config{Feeds: []hub.Feed{{Source: mem, Every: 50 * time.Millisecond}}, Desk: &sources.Desk{Actor: "alice"}})
	out := &syncBuffer{ch: make(chan []byte, 1024)}
	in, _ := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Hub: h, ProgramOptions: []tea.ProgramOption{tea.WithInput(in), tea.WithOutput(out), tea.WithWindowSize(80, 24)}})
	}()
	var screen strings.Builder
	deadline := time.After(10 * time.Second)
	for !strings.Contains(screen.String(), "RUN-1") {
		select {
		case p := <-out.ch:
			screen.Write(p)
		case <-deadline:
			t.Fatalf("RUN-1 never reached the screen:\n%s", screen.String())
		}
	}
	cancel()
	go func() {
		for range out.ch {
		}
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not end with its context")
	}
}

// Without colour the selected row is still marked: reverse video and bold,
// and no colour codes at all.
func TestNoColorKeepsTheSelectedRowVisible(t *testing.T) {
	r := newRig(t, func(o *Options) { o.Styles = theme.New(theme.Options{Mode: theme.Dark, NoColor: true}) })
	// The frame as drawn, no profile taking anything out.
	rigProfile = colorprofile.TrueColor
	t.Cleanup(func() { rigProfile = colorprofile.NoTTY })
	line := rowOf(t, r, "TASK-1")
	if !strings.Contains(line, "\x1b[7;1m") && !strings.Contains(line, "\x1b[1;7m") {
		t.Fatalf("the selected row is not reverse and bold: %q", line)
	}
	if strings.Contains(r.screen(), "38;") || strings.Contains(r.screen(), "48;") {
		t.Fatal("colour codes under NO_COLOR")
	}
}
