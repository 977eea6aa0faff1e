// Package sourcetest is the conformance kit: the lease protocol
// stated once, as tests that any backend runs with one call:
//
//	func TestConformance(t *testing.T) {
//		sourcetest.Run(t, sourcetest.Harness{New: newEmptySource})
//	}
//
// A backend is done when the kit passes. Backends without atomic claims
// (Caps.AtomicClaim false) get their double claims measured and reported
// instead of asserted away.
package sourcetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// Harness tells the kit how to get a source.
type Harness struct {
	// New returns a fresh, empty source. The kit closes it.
	New func(t testing.TB) sources.Source
	// NewClocked, when set, is used instead of New: the source reads the
	// time from now, which the kit moves by hand instead of sleeping
	// through leases and reservations. Backends that compare against a
	// database's own clock leave it nil and are waited for.
	NewClocked func(t testing.TB, now func() time.Time) sources.Source
	// Claimers and Tasks size the contention tests (default 64 and 1,000;
	// 200 tasks under -race, where the same 64 claimers race as hard and the
	// drain would otherwise take minutes).
	Claimers, Tasks int
	// Tick is the shortest lease the backend honours reliably (default 1 s);
	// expiry tests wait a few ticks.
	Tick time.Duration
	// Skew is how far the backend's clock may be from the test's when the kit
	// checks a lease expiry (default 5 s).
	Skew time.Duration
	// Advance makes d pass for the task id without sleeping, for a source
	// that judges time by its database's own clock (NewClocked nil, as
	// PostgreSQL's now()): it moves the task's claim, lease and reservation
	// times back by d. A clocked source needs none: the kit moves its clock.
	// The lease-expiry and rescue cases need one or the other.
	Advance func(t testing.TB, src sources.Source, id string, d time.Duration)
	// Reopen, when set, opens another handle on the store src reads (a
	// second connection, directory handle or client), as another process
	// would: the trail cases read what one handle wrote through the other.
	Reopen func(t testing.TB, src sources.Source) sources.Source
	// Report receives measured figures (double claims, throughput) so a
	// backend's tests can print or record them. Optional.
	Report func(name string, value float64)
}

func (h *Harness) defaults() {
	if h.Claimers == 0 {
		h.Claimers = 64
	}
	if h.Tasks == 0 {
		h.Tasks = 1000
		if raceDetector {
			h.Tasks = 200
		}
	}
	if h.Tick == 0 {
		h.Tick = time.Second
	}
	if h.Skew == 0 {
		h.Skew = 5 * time.Second
	}
	if h.Report == nil {
		h.Report = func(string, float64) {}
	}
}

// Run runs the whole kit.
func Run(t *testing.T, h Harness) {
	h.defaults()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := &kit{h: h}
			var src sources.Source
			if h.NewClocked != nil {
				k.clock = &clock{at: time.Now()}
				src = h.NewClocked(t, k.clock.Now)
			} else {
				src = h.New(t)
			}
			t.Cleanup(func() { _ = src.Close() })
			if !c.concurrent {
				src = returned{Source: src, t: t}
			}
			k.src = src
			c.run(t, k)
		})
	}
}

type kit struct {
	h     Harness
	src   sources.Source
	clock *clock // nil: the source reads the real clock
}

var cases = []struct {
	name string
	run  func(t *testing.T, k *kit)
	// concurrent cases write from many goroutines, so what a write returns
	// cannot be compared with a later Get.
	concurrent bool
}{
	{name: "every capability a source declares works, and every one it lacks is named and refused", run: testCaps},
	{name: "a created task is polled, then seen again in an incremental poll after it changes", run: testPoll},
	{name: "next hands out tasks in exactly the pull order of the model", run: testPullOrder},
	{name: "claim takes a queued task with a new token and a lease from now", run: testClaim},
	{name: "claim of a task someone else holds is CONFLICT and changes nothing", run: testClaimHeld},
	{name: "claim of an unknown task is an error", run: testClaimUnknown},
	{name: "heartbeat extends the lease; a wrong token gets LOST_LOCK", run: testHeartbeat},
	{name: "complete, block, review, cancel and fail record the outcome and clear the lock", run: testFinish},
	{name: "an agent whose lease expired loses the task to the next claimer and gets LOST_LOCK", run: testExpiredLease},
	{name: "a token stops being current when its lease ends, even if nobody claimed the task since", run: testTokenExpiry},
	{name: "a dead holder's task returns to the pool after the grace, recorded as a rescue naming it", run: testRescue},
	{name: "reap puts back only agents' leases that ended a grace ago, and never a claim re-taken after its read", run: testReap},
	{name: "a human takeover is never pulled, never stale, and fences out the agent", run: testTakeover},
	{name: "force-release puts the task back and the zombie agent gets LOST_LOCK", run: testForceRelease},
	{name: "a human cancel needs no token and fences out the agent", run: testHumanCancel},
	{name: "hand-off reserves the task for its target until the reservation expires", run: testHandoff},
	{name: "an agent may hand off its own task, naming its token", run: testAgentHandoff},
	{name: "a human action on a task that changed since it was read gets CONFLICT", run: testStaleHumanAction},
	{name: "an override acts on the lease as shown: after a renewal, a new claim, a finish or a release it is CONFLICT", run: testOverrideAfterHeartbeat},
	{name: "every backend refuses the same human actions with the same code and changes nothing", run: testHumanRefusals},
	{name: "human actions are recorded in the backend's own trail, naming whom each was taken or released from", run: testHistory},
	{name: "a holder write by another caller with the holder's token is recorded as that caller, not the holder", run: testWriterInTrail},
	{name: "comments shaped like claimdeck's notes are shown as comments; approval reads who sent the task to review, stored", run: testForgedNotes},
	{name: "a flood of comments pushes neither the claim, the review nor the stored reviewer out of the trail", run: testCommentFlood},
	{name: "a refused attempt is in the shared trail with who, door and refusal, seen from another handle; an applied one names its door", run: testRefusedInSharedTrail},
	{name: "a holder write with the token alone is recorded as the holder the token names", run: testHolderNamed},
	{name: "the trail read across tasks from another handle holds an applied and a refused override, counted as such", run: testTrailSince},
	{name: "an agent's claim and finish name their door in the trail, seen from another handle", run: testDoorOfAgentSteps},
	{name: "a refused call retried in a loop leaves a capped number of entries in the trail", run: testRefusalFlood},
	{name: "an approval decided on a poll that carried no trail reads the stored reviewer", run: testApprovalWithoutTrail},
	{name: "a reap decided on a lease as read is CONFLICT after its holder heartbeated", run: testReapAfterHeartbeat},
	{name: "a reap naming no grace waits the configured grace", run: testReapUnderConfiguredGrace},
	{name: "a poll with a horizon leaves history out and counts it; Archive reads it on demand", run: testWindow},
	{name: "a comment is kept in the task's trail", run: testComment},
	{name: "a task with open sub-tasks cannot be completed", run: testSubtasks},
	{name: "an escalation mark needs the claim's token and ends the lease: the holder's heartbeat then gets LOST_LOCK", run: testEscalationMark},
	{name: "update edits a free task, a held one only by its holder, and never the lease", run: testUpdate},
	{name: "approve, rework and unblock move a parked task without a lock, conditional, in the trail", run: testMoves},
	{name: "bad input is MISCONFIGURED on every operation and writes nothing", run: testBadInput},
	{name: "texts at their limits are stored and read back whole through claim, heartbeat and finish", run: testTextsAtTheirLimits},
	{name: "many agents claiming one task: exactly one wins", run: testOneTaskManyClaimers, concurrent: true},
	{name: "many agents draining the queue: no task is claimed or completed twice", run: testContention, concurrent: true},
	{name: "force-release racing the holder's completion: exactly one of them wins", run: testZombieRace, concurrent: true},
}

// advance makes d pass for the task: a clocked source's clock moves on
// (one clock for every task); a source that judges time by its database's
// own clock has the task's times moved back by the harness's Advance.
func (k *kit) advance(t *testing.T, id string, d time.Duration) {
	t.Helper()
	if k.clock != nil {
		k.clock.advance(d)
		return
	}
	if k.h.Advance == nil {
		t.Fatal("the harness has neither NewClocked nor Advance: the lease cases need a clock they can move")
	}
	k.h.Advance(t, k.raw(), id, d)
}

func (k *kit) ctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func (k *kit) create(t *testing.T, n sources.NewTask) *model.Task {
	t.Helper()
	if n.Title == "" {
		n.Title = "task " + n.ID
	}
	task, err := k.src.Create(k.ctx(t), n)
	if err != nil {
		t.Fatalf("Create(%+v): %v", n, err)
	}
	return task
}

func (k *kit) get(t *testing.T, id string) *model.Task {
	t.Helper()
	task, err := k.src.Get(k.ctx(t), id)
	if err != nil {
		t.Fatalf("Get(%s): %v", id, err)
	}
	return task
}

func (k *kit) claim(t *testing.T, id, agent string) *model.Task {
	t.Helper()
	task, err := k.src.Claim(k.ctx(t), id, sources.ClaimRequest{Agent: agent, RunID: "run-" + agent})
	if err != nil {
		t.Fatalf("Claim(%s) by %s: %v", id, agent, err)
	}
	return task
}

func wantCode(t *testing.T, what string, err error, code model.Code) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s succeeded, want %s", what, code)
	}
	if got := model.CodeOf(err); got != code {
		t.Fatalf("%s: got %s (%v), want %s", what, got, err, code)
	}
}

// unchanged checks that a refused write changed nothing we can observe.
func (k *kit) unchanged(t *testing.T, before *model.Task, what string) {
	t.Helper()
	now := k.get(t, before.ID)
	if now.State != before.State || now.Claim().Token != before.Claim().Token || now.Claim().Name != before.Claim().Name ||
		!now.Claim().Expires.Time().Equal(before.Claim().Expires.Time()) || now.Version != before.Version {
		t.Fatalf("%s changed the task: before %s %s/%s v%s, after %s %s/%s v%s", what,
			before.State, before.Claim().Name, before.Claim().Token, before.Version,
			now.State, now.Claim().Name, now.Claim().Token, now.Version)
	}
}

// zombieWrites tries every holder write with a dead token; each must be
// LOST_LOCK and leave the task as it is.
func (k *kit) zombieWrites(t *testing.T, id, token string) {
	t.Helper()
	ctx := k.ctx(t)
	before := k.get(t, id)
	_, err := k.src.Heartbeat(ctx, id, token, 0)
	wantCode(t, "zombie heartbeat", err, model.CodeLostLock)
	for _, st := range []model.State{model.StateDone, model.StateBlocked, model.StateReview, model.StateCanceled, model.StateFailed} {
		_, err := k.src.Finish(ctx, id, token, sources.Outcome{State: st, Reason: "zombie", Artifacts: "zombie"})
		wantCode(t, "zombie finish as "+st.String(), err, model.CodeLostLock)
	}
	_, err = k.src.Handoff(ctx, id, sources.Handoff{Token: token, To: "zombie-friend", Human: sources.Human{Actor: "zombie"}})
	wantCode(t, "zombie hand-off", err, model.CodeLostLock)
	k.unchanged(t, before, "a zombie write")
}

func (k *kit) report(t *testing.T, name string, v float64) {
	t.Logf("%s/%s = %g", k.src.Name(), name, v)
	k.h.Report(name, v)
}

func errorsAs(err error, target **model.Error) bool { return errors.As(err, target) }

func describe(task *model.Task) string {
	if task == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%s[%s %s %s]", task.ID, task.State, task.Claim().Holder, task.Claim().Name)
}
