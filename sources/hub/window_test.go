package hub

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/sourcetest/memsource"
)

// A dashboard over a year-old queue holds live work and the last day's
// history; the rest is counted, and brought in when a filter asks for it.
func TestHistoryStaysInTheBackendUntilAFilterAsks(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	mem := memsource.NewMemory("local")
	mem.Put(&model.Task{ID: "live", Title: "rotate keys", State: model.StateQueued, EditedAt: model.StampOf(now.Add(-400 * 24 * time.Hour))})
	mem.Put(&model.Task{ID: "today", Title: "ship docs", State: model.StateDone, EditedAt: model.StampOf(now.Add(-time.Hour))})
	mem.Put(&model.Task{ID: "last-year", Title: "ship the old docs", State: model.StateDone, EditedAt: model.StampOf(now.Add(-300 * 24 * time.Hour))})
	mem.Put(&model.Task{ID: "last-month", Title: "a failed migration", State: model.StateFailed, EditedAt: model.StampOf(now.Add(-30 * 24 * time.Hour))})
	h := New(Config{Feeds: []Feed{{Source: mem}}, Now: func() time.Time { return now }})
	ctx := context.Background()
	h.poll(ctx, h.feeds[0])
	s := <-h.Snapshots()
	if s.Len() != 2 || find(s, "local", "live") == nil || find(s, "local", "today") == nil || s.Sources[0].Archived != 0 {
		t.Fatalf("first load: %d tasks, %d archived; want live and today in memory, history not counted yet", s.Len(), s.Sources[0].Archived)
	}
	h.feeds[0].cursor = "" // a full poll, as every reconcile is
	h.poll(ctx, h.feeds[0])
	if s = <-h.Snapshots(); s.Len() != 2 || s.Sources[0].Archived != 2 {
		t.Fatalf("the next full poll: %d tasks, %d archived; want 2 and 2", s.Len(), s.Sources[0].Archived)
	}

	if err := h.LoadArchive(ctx, &sources.ArchiveQuery{State: model.StateDone, Text: "OLD"}); err != nil {
		t.Fatal(err)
	}
	s = <-h.Snapshots()
	if s.Len() != 3 || find(s, "local", "last-year") == nil {
		t.Fatalf("after asking for done tasks matching \"OLD\": %d tasks, last-year %v", s.Len(), find(s, "local", "last-year"))
	}
	if err := h.LoadArchive(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if s = <-h.Snapshots(); s.Len() != 2 {
		t.Fatalf("after the filter let go of history: %d tasks, want 2", s.Len())
	}
	if err := h.LoadArchive(ctx, &sources.ArchiveQuery{State: model.StateQueued}); model.CodeOf(err) != model.CodeMisconfigured {
		t.Fatalf("asking the archive for queued tasks: %v, want MISCONFIGURED", err)
	}
}

// A task that ages out of the window leaves memory at the next full poll
// without showing up as activity.
func TestAgingIntoHistoryIsNotActivity(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	var clock atomic.Pointer[time.Time]
	clock.Store(&now)
	tick := func() time.Time { return *clock.Load() }
	mem := memsource.NewMemory("local")
	mem.Put(&model.Task{ID: "done", Title: "ship docs", State: model.StateDone, EditedAt: model.StampOf(now.Add(-time.Hour))})
	h := New(Config{Feeds: []Feed{{Source: mem}}, Now: tick})
	ctx := context.Background()
	h.poll(ctx, h.feeds[0])
	if s := <-h.Snapshots(); s.Len() != 1 {
		t.Fatalf("first load: %d tasks, want the task done an hour ago", s.Len())
	}
	later := now.Add(DefaultWindow)
	clock.Store(&later)
	h.feeds[0].cursor = "" // the next poll is a full one, as every reconcile is
	h.poll(ctx, h.feeds[0])
	s := <-h.Snapshots()
	if s.Len() != 0 || len(s.Transitions) != 0 || s.Sources[0].Archived != 1 {
		t.Fatalf("a day later: %d tasks, %d transitions, %d archived; want 0, 0, 1", s.Len(), len(s.Transitions), s.Sources[0].Archived)
	}
}

// costlyCounter is a source whose history count would read all of it, as
// Notion's does; it records whether a poll asked it to count.
type costlyCounter struct {
	*memsource.Memory
	asked atomic.Int32
}

func (c *costlyCounter) Caps() sources.Caps {
	caps := c.Memory.Caps()
	caps.CostlyCount = true
	return caps
}

func (c *costlyCounter) Poll(ctx context.Context, since sources.Cursor, opt ...sources.PollOption) (sources.Delta, error) {
	if !sources.Uncounted(opt) {
		c.asked.Add(1)
	}
	return c.Memory.Poll(ctx, since, opt...)
}

// A source whose count costs a read of all its history is never asked to
// count, full polls included; its history still loads when a filter asks.
func TestACostlyCountIsNeverAskedFor(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	src := &costlyCounter{Memory: memsource.NewMemory("pages")}
	src.Put(&model.Task{ID: "live", Title: "rotate keys", State: model.StateQueued, EditedAt: model.StampOf(now)})
	src.Put(&model.Task{ID: "old", Title: "ship the old docs", State: model.StateDone, EditedAt: model.StampOf(now.Add(-300 * 24 * time.Hour))})
	h := New(Config{Feeds: []Feed{{Source: src}}, Now: func() time.Time { return now }})
	ctx := context.Background()
	for range 3 {
		h.feeds[0].cursor = "" // full polls, as every reconcile is
		h.poll(ctx, h.feeds[0])
	}
	s := <-h.Snapshots()
	if n := src.asked.Load(); n != 0 || s.Len() != 1 || s.Sources[0].Archived != 0 {
		t.Fatalf("asked to count %d times; %d tasks held, %d archived: want 0, 1, 0", n, s.Len(), s.Sources[0].Archived)
	}
	if err := h.LoadArchive(ctx, &sources.ArchiveQuery{State: model.StateDone}); err != nil {
		t.Fatal(err)
	}
	if s = <-h.Snapshots(); find(s, "pages", "old") == nil {
		t.Fatal("the history was not loaded when asked for")
	}
}
