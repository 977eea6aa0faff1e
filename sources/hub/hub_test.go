package hub

import (
	"context"
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/sourcetest/memsource"
)

// start runs a hub over the feeds until the test ends.
func start(t *testing.T, cfg Config) *Hub {
	t.Helper()
	h := New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return h
}

// await drains snapshots until ok accepts one. Tests call it inside a
// synctest bubble, where the deadline is the bubble's clock: it passes only
// when every goroutine is stuck.
func await(t *testing.T, h *Hub, what string, ok func(Snapshot) bool) Snapshot {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case s := <-h.Snapshots():
			if ok(s) {
				return s
			}
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func find(s Snapshot, source, id string) *model.Task {
	for _, st := range s.Sources {
		if st.Name != source {
			continue
		}
		for t := range st.Tasks.All() {
			if t.ID == id {
				return t
			}
		}
	}
	return nil
}

func TestPollsMergeDeltasAndRecordTransitions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memsource.NewMemory("local")
		mem.Put(&model.Task{ID: "a", Title: "first", State: model.StateQueued})
		mem.Put(&model.Task{ID: "b", Title: "second", State: model.StateQueued})
		h := start(t, Config{Feeds: []Feed{{Source: mem, Every: 10 * time.Millisecond}}})

		s := await(t, h, "the first load", func(s Snapshot) bool { return s.Len() == 2 })
		if s.Sources[0].Status != StatusOK || len(s.Transitions) != 0 {
			t.Fatalf("first load: status %s, %d transitions; want ok and none", s.Sources[0].Status, len(s.Transitions))
		}
		if _, err := mem.Claim(context.Background(), "a", sources.ClaimRequest{Agent: "SANDMAN"}); err != nil {
			t.Fatal(err)
		}
		mem.Remove("b")
		var trans []Transition
		s = await(t, h, "the claim and the removal", func(s Snapshot) bool {
			trans = append(trans, s.Transitions...)
			a := find(s, "local", "a")
			return s.Len() == 1 && a != nil && a.State == model.StateClaimed
		})
		var claimed, removed bool
		for _, tr := range trans {
			claimed = claimed || tr.After != nil && tr.After.ID == "a" && tr.After.Claim().Name == "SANDMAN"
			removed = removed || tr.After == nil && tr.Before.ID == "b"
		}
		if !claimed || !removed {
			t.Fatalf("transitions %+v lack the claim of a or the removal of b", trans)
		}
	})
}

func TestFailingSourceIsDegradedThenRecoversByItself(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memsource.NewMemory("flaky")
		mem.Put(&model.Task{ID: "a", State: model.StateQueued})
		h := start(t, Config{Feeds: []Feed{{Source: mem, Every: 5 * time.Millisecond}}, MaxBackoff: 20 * time.Millisecond})
		await(t, h, "the first load", func(s Snapshot) bool { return s.Sources[0].Status == StatusOK })

		mem.FailPolls(errors.New("connection refused"))
		s := await(t, h, "degraded", func(s Snapshot) bool { return s.Sources[0].Status == StatusDegraded })
		st := s.Sources[0]
		if !strings.Contains(st.Err, "connection refused") || st.Since.IsZero() || st.Tasks.Len() != 1 {
			t.Fatalf("degraded state %+v: want the error, since when, and the last good tasks kept", st)
		}
		if st.Health.Code != model.CodeAPIError || !st.Health.Retry.After(st.Since.Add(-time.Nanosecond)) {
			t.Fatalf("degraded health %+v: want API_ERROR and the next poll's time", st.Health)
		}
		mem.FailPolls(nil)
		s = await(t, h, "recovery", func(s Snapshot) bool { return s.Sources[0].Status == StatusOK && s.Sources[0].Failures == 0 })
		if h := s.Sources[0].Health; h.Code != "" || !h.Retry.IsZero() || h.Every != 5*time.Millisecond {
			t.Fatalf("a recovered source keeps its failure: %+v", s.Sources[0].Health)
		}
	})
}

func TestAMisconfiguredSourceSaysSo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memsource.NewMemory("bad")
		h := start(t, Config{Feeds: []Feed{{Source: mem, Every: 5 * time.Millisecond}}, MaxBackoff: 20 * time.Millisecond})
		mem.FailPolls(model.Errorf(model.CodeMisconfigured, "poll", "", "table governance_tasks has no column status"))
		s := await(t, h, "degraded", func(s Snapshot) bool { return s.Sources[0].Status == StatusDegraded })
		if h := s.Sources[0].Health; h.Code != model.CodeMisconfigured || h.Retry.IsZero() {
			t.Fatalf("health %+v: want MISCONFIGURED with a retry time", h)
		}
	})
}

func TestBackoffDoublesUpToTheLimit(t *testing.T) {
	for _, c := range []struct {
		failures int
		want     time.Duration
	}{{1, 2 * time.Second}, {2, 4 * time.Second}, {3, 8 * time.Second}, {10, time.Minute}} {
		if got := backoff(2*time.Second, c.failures, time.Minute); got != c.want {
			t.Errorf("backoff after %d failures = %s, want %s", c.failures, got, c.want)
		}
	}
}

// Refused credentials are not tried again every few seconds, which could
// lock the account: the first refusal already waits CredentialsBackoff.
func TestRefusedCredentialsWaitLongBeforeTheNextTry(t *testing.T) {
	refused := model.Errorf(model.CodeMisconfigured, "poll", "", "source gov: %w: password authentication failed", sources.ErrCredentials)
	for failures := 1; failures <= 3; failures++ {
		if got := retryWait(refused, 2*time.Second, failures, time.Minute); got != CredentialsBackoff {
			t.Errorf("after %d refusals the next try waits %s, want %s", failures, got, CredentialsBackoff)
		}
	}
	if got := retryWait(errors.New("connection refused"), 2*time.Second, 1, time.Minute); got != 2*time.Second {
		t.Errorf("an outage waits %s, want the poll interval", got)
	}
}

func TestPauseStopsPollingAndResumePollsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memsource.NewMemory("local")
		h := start(t, Config{Feeds: []Feed{{Source: mem, Every: 5 * time.Millisecond}}})
		await(t, h, "the first load", func(s Snapshot) bool { return s.Sources[0].Status == StatusOK })
		h.Pause()
		synctest.Wait() // a poll already under way finishes
		before := mem.Polls()
		time.Sleep(time.Second)
		synctest.Wait()
		if n := mem.Polls() - before; n != 0 {
			t.Fatalf("%d polls in a second while paused, want 0", n)
		}
		h.Resume()
		synctest.Wait()
		if mem.Polls() == before {
			t.Fatal("no poll after Resume")
		}
	})
}

func TestPushHintPollsBeforeTheInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memsource.NewMemory("watched")
		h := start(t, Config{Feeds: []Feed{{Source: mem, Every: time.Hour}}, Debounce: time.Millisecond})
		await(t, h, "the first load", func(s Snapshot) bool { return s.Sources[0].Status == StatusOK && s.Sources[0].Watching })
		mem.Put(&model.Task{ID: "pushed", State: model.StateQueued})
		await(t, h, "the pushed task", func(s Snapshot) bool { return find(s, "watched", "pushed") != nil })
	})
}

// A lone hint polls at once; the hints of a burst that follows within
// Debounce are gathered into one poll at its end, and none is lost. The
// bubble's clock stands still until every goroutine waits, so "at once"
// is before the clock moves at all.
func TestPushHintPollsAtOnceAndGathersTheBurstAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memsource.NewMemory("watched")
		h := start(t, Config{Feeds: []Feed{{Source: mem, Every: time.Hour}}, Debounce: time.Second})
		await(t, h, "the first load", func(s Snapshot) bool { return s.Sources[0].Status == StatusOK && s.Sources[0].Watching })
		time.Sleep(2 * time.Second) // past any cooldown
		synctest.Wait()
		began := time.Now()
		mem.Put(&model.Task{ID: "lone", State: model.StateQueued})
		await(t, h, "the lone change", func(s Snapshot) bool { return find(s, "watched", "lone") != nil })
		if waited := time.Since(began); waited != 0 {
			t.Fatalf("the lone change waited %v of the bubble's clock for its poll, want none", waited)
		}
		polls := mem.Polls()
		for _, id := range []string{"b1", "b2", "b3"} {
			mem.Put(&model.Task{ID: id, State: model.StateQueued})
			synctest.Wait()
		}
		if mem.Polls() != polls {
			t.Fatalf("%d polls during the cooldown, want none", mem.Polls()-polls)
		}
		await(t, h, "the burst", func(s Snapshot) bool {
			return find(s, "watched", "b1") != nil && find(s, "watched", "b2") != nil && find(s, "watched", "b3") != nil
		})
		if mem.Polls() != polls+1 {
			t.Fatalf("the burst of 3 hints took %d polls, want 1", mem.Polls()-polls)
		}
	})
}

// gathered is a watched source that asks for its own gathering of hints,
// as a relay's does.
type gathered struct{ *memsource.Memory }

func (gathered) Gather() time.Duration { return 10 * time.Millisecond }

// A source that says how long its hints are gathered gets that, not the
// hub's Debounce: the burst after a poll waits its 10 ms, not an hour.
func TestASourceGathersItsHintsForAsLongAsItSays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memsource.NewMemory("relayed")
		h := start(t, Config{Feeds: []Feed{{Source: gathered{mem}, Every: 24 * time.Hour}}, Debounce: time.Hour})
		await(t, h, "the first load", func(s Snapshot) bool { return s.Sources[0].Status == StatusOK && s.Sources[0].Watching })
		mem.Put(&model.Task{ID: "lone", State: model.StateQueued})
		await(t, h, "the lone change", func(s Snapshot) bool { return find(s, "relayed", "lone") != nil })
		began := time.Now()
		mem.Put(&model.Task{ID: "next", State: model.StateQueued})
		await(t, h, "the change after it", func(s Snapshot) bool { return find(s, "relayed", "next") != nil })
		if waited := time.Since(began); waited > 10*time.Millisecond {
			t.Fatalf("the change after a poll waited %v of the bubble's clock, want the source's 10ms at most", waited)
		}
	})
}

// unGathered is a watched source that gathers its hints itself, as a
// relay's stream does: Gather is 0.
type unGathered struct{ *memsource.Memory }

func (unGathered) Gather() time.Duration { return 0 }

// A source whose Gather is 0 is polled at each hint, with no cooldown
// after a poll: the change after one is polled at once, not after the
// hub's hour of Debounce.
func TestASourceThatGathersItselfIsPolledAtEachHint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memsource.NewMemory("relayed")
		h := start(t, Config{Feeds: []Feed{{Source: unGathered{mem}, Every: 24 * time.Hour}}, Debounce: time.Hour})
		await(t, h, "the first load", func(s Snapshot) bool { return s.Sources[0].Status == StatusOK && s.Sources[0].Watching })
		began := time.Now()
		for _, id := range []string{"first", "second", "third"} {
			mem.Put(&model.Task{ID: id, State: model.StateQueued})
			await(t, h, id, func(s Snapshot) bool { return find(s, "relayed", id) != nil })
		}
		if waited := time.Since(began); waited != 0 {
			t.Fatalf("three changes, each after the last one's poll, waited %v of the bubble's clock; want none", waited)
		}
	})
}

// With Changes, a snapshot says what was put and removed since the one
// before, coalesced snapshots included, and that it must be compared
// whole after a full poll.
func TestSnapshotsCarryTheirChanges(t *testing.T) {
	mem := memsource.NewMemory("local")
	h := New(Config{Feeds: []Feed{{Source: mem}}, Changes: true})
	f := h.feeds[0]
	f.loaded = true
	task := func(id string) *model.Task { return &model.Task{Source: "local", ID: id} }
	h.mu.Lock()
	h.merge(f, sources.Delta{Tasks: []*model.Task{task("a"), task("b")}})
	h.publish()
	h.merge(f, sources.Delta{Tasks: []*model.Task{task("c")}, Removed: []string{"a", "never-seen"}})
	h.publish() // nobody drained the first: this one carries both
	h.mu.Unlock()
	s := <-h.Snapshots()
	got := ids(s.Sources[0].Changed)
	if !slices.Equal(got, []string{"a", "b", "c"}) || !slices.Equal(s.Sources[0].Gone, []string{"a"}) || s.Sources[0].Whole {
		t.Fatalf("changes %v, gone %v, whole %v; want a, b, c put and a gone, not whole", got, s.Sources[0].Gone, s.Sources[0].Whole)
	}
	h.mu.Lock()
	h.merge(f, sources.Delta{Full: true, Tasks: []*model.Task{task("b")}})
	h.publish()
	h.mu.Unlock()
	if s := <-h.Snapshots(); !s.Sources[0].Whole || len(s.Sources[0].Changed) != 0 {
		t.Fatalf("after a full poll: whole %v, %d changes; want whole", s.Sources[0].Whole, len(s.Sources[0].Changed))
	}
	h.mu.Lock()
	h.publish()
	h.mu.Unlock()
	if s := <-h.Snapshots(); s.Sources[0].Whole || len(s.Sources[0].Changed)+len(s.Sources[0].Gone) != 0 {
		t.Fatalf("a snapshot with nothing new: whole %v, %v, %v", s.Sources[0].Whole, ids(s.Sources[0].Changed), s.Sources[0].Gone)
	}
}

func ids(ts []*model.Task) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}

func TestSnapshotsCoalesceWithoutLosingTransitions(t *testing.T) {
	mem := memsource.NewMemory("local")
	h := New(Config{Feeds: []Feed{{Source: mem}}})
	f := h.feeds[0]
	f.loaded = true
	h.mu.Lock()
	for _, id := range []string{"a", "b", "c"} {
		h.merge(f, sources.Delta{Tasks: []*model.Task{{Source: "local", ID: id}}})
		h.publish() // nobody drains: each replaces the last
	}
	h.mu.Unlock()
	s := <-h.Snapshots()
	if s.Seq != 3 || s.Len() != 3 || len(s.Transitions) != 3 {
		t.Fatalf("got seq %d, %d tasks, %d transitions; want the latest snapshot (3) with all 3 of each", s.Seq, s.Len(), len(s.Transitions))
	}
	select {
	case <-h.Snapshots():
		t.Fatal("a second snapshot was queued")
	default:
	}
}

func TestApplyGoesThroughTheDesk(t *testing.T) {
	mem := memsource.NewMemory("prod")
	ro := memsource.NewMemory("archive")
	desk := &sources.Desk{Actor: "alice", ReadOnly: func(s string) bool { return s == "archive" }}
	h := start(t, Config{Feeds: []Feed{{Source: mem, Every: time.Hour}, {Source: ro, Every: time.Hour}}, Desk: desk})
	ctx := context.Background()
	task, _ := mem.Create(ctx, sources.NewTask{ID: "t1", Title: "deploy"})
	held, _ := mem.Claim(ctx, "t1", sources.ClaimRequest{Agent: "SANDMAN", RunID: "r1"})

	t.Run("a takeover on what was seen is applied and merged at once", func(t *testing.T) {
		after, err := h.Apply(ctx, sources.Request{Action: model.ActionTakeover, Seen: held})
		if err != nil || after.Claim().Holder != model.HolderHuman {
			t.Fatalf("takeover: %v, %+v", err, after)
		}
		await(t, h, "the merged takeover", func(s Snapshot) bool {
			got := find(s, "prod", "t1")
			return got != nil && got.Claim().Holder == model.HolderHuman
		})
	})
	t.Run("an action on a task that changed is refused and says what changed", func(t *testing.T) {
		_, err := h.Apply(ctx, sources.Request{Action: model.ActionForceRelease, Seen: task})
		if model.CodeOf(err) != model.CodeConflict || !strings.Contains(err.Error(), "holder") {
			t.Fatalf("force-release on a stale view: %v; want CONFLICT naming the holder change", err)
		}
	})
	t.Run("read-only sources refuse actions", func(t *testing.T) {
		archived, _ := ro.Create(ctx, sources.NewTask{ID: "old"})
		_, err := h.Apply(ctx, sources.Request{Action: model.ActionCancel, Seen: archived, Reason: "done"})
		if model.CodeOf(err) != model.CodeMisconfigured || !h.ReadOnly("archive") || h.ReadOnly("prod") {
			t.Fatalf("cancel on a read-only source: %v", err)
		}
	})
}

func TestAFullReloadKeepsTheRecordsOfUnchangedTasks(t *testing.T) {
	h := New(Config{Feeds: []Feed{{Source: memsource.NewMemory("local")}}})
	f := h.feeds[0]
	a := &model.Task{Source: "local", ID: "a", Version: "1"}
	b := &model.Task{Source: "local", ID: "b", Version: "1"}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.merge(f, sources.Delta{Full: true, Tasks: []*model.Task{a, b}})
	a2, b2 := *a, *b
	b2.Version = "2"
	h.merge(f, sources.Delta{Full: true, Tasks: []*model.Task{&a2, &b2}})
	if f.task("a") != a || f.task("b") != &b2 {
		t.Fatal("a full reload must keep unchanged records and take changed ones")
	}
	if len(h.pending) != 0 {
		t.Fatalf("a version change alone is not a transition, got %d", len(h.pending))
	}
}

func TestASourceThatStopsAnsweringLags(t *testing.T) {
	at := time.Date(2026, 11, 21, 3, 0, 0, 0, time.UTC)
	st := SourceState{Status: StatusOK, Updated: at, Health: SourceHealth{Every: 2 * time.Second}}
	for _, c := range []struct {
		after time.Duration
		want  bool
	}{{0, false}, {6 * time.Second, false}, {6*time.Second + 1, true}, {time.Hour, true}} {
		if got := st.Lagging(at.Add(c.after)); got != c.want {
			t.Errorf("%v after the last answer: lagging %v, want %v", c.after, got, c.want)
		}
	}
	for _, other := range []SourceState{
		{Status: StatusDegraded, Updated: at, Health: SourceHealth{Every: time.Second}}, // failing says more than lagging
		{Status: StatusOK, Health: SourceHealth{Every: time.Second}},                    // never answered: connecting
	} {
		if other.Lagging(at.Add(time.Hour)) {
			t.Errorf("%+v lags", other)
		}
	}
}

// takenOver is a hub polling every `every` over one task, t1, that agent
// SANDMAN claimed (seen, as loaded) and alice then took over (after).
func takenOver(t *testing.T, every time.Duration) (h *Hub, f *feed, seen, after *model.Task) {
	t.Helper()
	ctx := context.Background()
	mem := memsource.NewMemory("prod")
	h = New(Config{Feeds: []Feed{{Source: mem, Every: every}}, Desk: &sources.Desk{Actor: "alice"}})
	f = h.feeds[0]
	mem.Create(ctx, sources.NewTask{ID: "t1", Title: "deploy"})
	seen, err := mem.Claim(ctx, "t1", sources.ClaimRequest{Agent: "SANDMAN", RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	h.merge(f, sources.Delta{Full: true, Tasks: []*model.Task{seen}})
	h.mu.Unlock()
	if after, err = h.Apply(ctx, sources.Request{Action: model.ActionTakeover, Seen: seen}); err != nil {
		t.Fatal(err)
	}
	return h, f, seen, after
}

// A poll that began before a takeover landed answers the task as the human
// saw it; the snapshot keeps the takeover until the source moves past it.
func TestAnAppliedWriteBeatsAnOlderPoll(t *testing.T) {
	h, f, seen, after := takenOver(t, 0)
	holder := func() model.HolderKind {
		h.mu.Lock()
		defer h.mu.Unlock()
		return f.task("t1").Claim().Holder
	}
	for _, full := range []bool{true, false} {
		h.mu.Lock()
		h.merge(f, sources.Delta{Full: full, Tasks: []*model.Task{seen}}) // the older poll
		h.mu.Unlock()
		if holder() != model.HolderHuman {
			t.Fatalf("a poll (full %v) of the version the human acted on undid the takeover", full)
		}
	}
	later := *after
	later.Version = "later"
	later.SetClaim(model.Claim{})
	h.mu.Lock()
	h.merge(f, sources.Delta{Tasks: []*model.Task{&later}})
	h.mu.Unlock()
	if holder() != model.HolderNone {
		t.Fatal("a newer version than the write must be taken")
	}
	h.mu.Lock()
	h.merge(f, sources.Delta{Tasks: []*model.Task{seen}})
	h.mu.Unlock()
	if len(f.applied) != 0 || holder() != model.HolderAgent {
		t.Fatal("once the source moved past the write, the write no longer overrides")
	}
}

// A poll that began a whole poll interval after the write and still shows
// the version the human acted on is the source's truth: the task came back
// to what was seen (a version that hashes what a task shows, edited twice
// within Notion's minute), and the write no longer hides it.
func TestALaterPollAtTheSeenVersionRetiresTheWrite(t *testing.T) {
	h, f, seen, _ := takenOver(t, time.Second)
	merge := func(began time.Time) model.HolderKind {
		h.mu.Lock()
		defer h.mu.Unlock()
		f.began = began
		h.merge(f, sources.Delta{Tasks: []*model.Task{seen}})
		f.began = time.Time{}
		return f.task("t1").Claim().Holder
	}
	if merge(time.Now()) != model.HolderHuman {
		t.Fatal("a poll begun within a poll interval of the write undid it")
	}
	if merge(time.Now().Add(2*time.Second)) != model.HolderAgent || len(f.applied) != 0 {
		t.Fatal("a poll begun a poll interval after the write still shows the write")
	}
}

// The published task list follows any run of deltas (changes, removals,
// full reloads) as a map of id to task would, and a snapshot already
// published never changes under its holder.
func TestTheTaskListFollowsEveryDelta(t *testing.T) {
	h := New(Config{Feeds: []Feed{{Source: memsource.NewMemory("local")}}})
	f := h.feeds[0]
	rng := rand.New(rand.NewPCG(7, 29))
	want := map[string]*model.Task{}
	h.mu.Lock()
	defer h.mu.Unlock()
	var held Tasks // the last snapshot's list, as its holder has it
	var heldCopy []*model.Task
	for round := range 2000 {
		var d sources.Delta
		switch r := rng.IntN(20); {
		case r == 0: // a full reload of some of the tasks, all new
			d.Full = true
			clear(want)
			for range rng.IntN(150) {
				task := &model.Task{Source: "local", ID: strconv.Itoa(rng.IntN(200)), Version: strconv.Itoa(round)}
				d.Tasks = append(d.Tasks, task)
				want[task.ID] = task
			}
		default:
			for range rng.IntN(4) {
				task := &model.Task{Source: "local", ID: strconv.Itoa(rng.IntN(200)), Version: strconv.Itoa(round)}
				d.Tasks = append(d.Tasks, task)
				want[task.ID] = task
			}
			for range rng.IntN(3) {
				id := strconv.Itoa(rng.IntN(200))
				d.Removed = append(d.Removed, id)
				delete(want, id)
			}
		}
		h.merge(f, d)
		h.publish()
		s := <-h.out
		if !slices.Equal(held.AppendTo(nil), heldCopy) {
			t.Fatalf("round %d: a published snapshot's task list changed under its holder", round)
		}
		got := map[string]*model.Task{}
		for task := range s.Sources[0].Tasks.All() {
			if got[task.ID] != nil {
				t.Fatalf("round %d: task %s listed twice", round, task.ID)
			}
			got[task.ID] = task
		}
		if !maps.Equal(got, want) {
			t.Fatalf("round %d: the snapshot lists %d tasks, want %d (%v against %v)", round, len(got), len(want), slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
		}
		if n := s.Sources[0].Tasks.Len(); n != len(got) {
			t.Fatalf("round %d: Len is %d, the tasks %d", round, n, len(got))
		}
		held, heldCopy = s.Sources[0].Tasks, s.Sources[0].Tasks.AppendTo(nil)
	}
}
