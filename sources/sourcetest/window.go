package sourcetest

import (
	"slices"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// testWindow: a full poll with a horizon holds live work and recent
// history, counts the older history, and Archive reads it back on demand.
func testWindow(t *testing.T, k *kit) {
	ctx := k.ctx(t)
	live := k.create(t, sources.NewTask{Title: "Rotate the staging keys"})
	finish := func(title string, state model.State) *model.Task {
		task := k.create(t, sources.NewTask{Title: title})
		held := k.claim(t, task.ID, "archivist")
		done, err := k.src.Finish(ctx, task.ID, held.Claim().Token, sources.Outcome{State: state, Reason: "finished for the archive test"})
		if err != nil {
			t.Fatalf("Finish(%s, %s): %v", task.ID, state, err)
		}
		return done
	}
	percent := finish("Ship 100% done_now", model.StateDone)
	lookalike := finish("Ship 1000 doneXnow", model.StateDone)
	failed := finish("Ship the failed one", model.StateFailed)

	// Every finished task is older than a horizon past the backend's clock.
	later := time.Now().Add(k.h.Skew + time.Minute)
	d, err := k.src.Poll(ctx, "", sources.PollOption{FinishedAfter: later})
	if err != nil {
		t.Fatalf("windowed poll: %v", err)
	}
	if got := ids(d.Tasks); !slices.Contains(got, live.ID) || slices.Contains(got, percent.ID) || slices.Contains(got, failed.ID) {
		t.Fatalf("a poll with a horizon after every finish holds %v: want the live %s, none of the finished", got, live.ID)
	}
	if d.Archived != 3 {
		t.Fatalf("the windowed poll counted %d archived tasks, want 3", d.Archived)
	}
	earlier := time.Now().Add(-k.h.Skew - time.Hour)
	d, err = k.src.Poll(ctx, "", sources.PollOption{FinishedAfter: earlier})
	if err != nil {
		t.Fatalf("poll with an old horizon: %v", err)
	}
	if got := ids(d.Tasks); !slices.Contains(got, percent.ID) || !slices.Contains(got, failed.ID) || d.Archived != 0 {
		t.Fatalf("a horizon before every finish keeps them all: got %v, %d archived", got, d.Archived)
	}

	for _, c := range []struct {
		what string
		q    sources.ArchiveQuery
		want []string
	}{
		{"every final state", sources.ArchiveQuery{Before: later}, []string{percent.ID, lookalike.ID, failed.ID}},
		{"failed only", sources.ArchiveQuery{Before: later, State: model.StateFailed}, []string{failed.ID}},
		{"text in another case, with % and _ taken literally", sources.ArchiveQuery{Before: later, Text: "0% DONE_"}, []string{percent.ID}},
		{"a horizon before every finish", sources.ArchiveQuery{Before: earlier}, nil},
		{"a limit of one", sources.ArchiveQuery{Before: later, Limit: 1}, nil},
	} {
		got, err := k.src.Archive(ctx, c.q)
		if err != nil {
			t.Fatalf("Archive, %s: %v", c.what, err)
		}
		if c.q.Limit == 1 {
			if len(got) != 1 {
				t.Fatalf("Archive, %s: %d tasks", c.what, len(got))
			}
			continue
		}
		if g := ids(got); !sameSet(g, c.want) {
			t.Fatalf("Archive, %s: got %v, want %v", c.what, g, c.want)
		}
	}
	for _, bad := range []sources.ArchiveQuery{{}, {Before: later, State: model.StateQueued}, {Before: later, Limit: -1}} {
		_, err := k.src.Archive(ctx, bad)
		wantCode(t, "Archive of a bad query", err, model.CodeMisconfigured)
	}
}

func ids(tasks []*model.Task) []string {
	out := make([]string, len(tasks))
	for i, t := range tasks {
		out[i] = t.ID
	}
	return out
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
