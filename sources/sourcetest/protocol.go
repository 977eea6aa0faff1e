package sourcetest

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

func testPoll(t *testing.T, k *kit) {
	ctx := k.ctx(t)
	a := k.create(t, sources.NewTask{Title: "Design VPC module", Description: "terraform", Priority: model.PriorityHigh, Class: model.ClassExpedite})
	b := k.create(t, sources.NewTask{Title: "Write runbook"})
	d, err := k.src.Poll(ctx, "")
	if err != nil {
		t.Fatalf("first poll: %v", err)
	}
	if !d.Full {
		t.Fatal("a poll from an empty cursor must be a full snapshot")
	}
	byID := index(d.Tasks)
	for _, want := range []*model.Task{a, b} {
		got := byID[want.ID]
		if got == nil {
			t.Fatalf("task %s missing from the snapshot (%d tasks)", want.ID, len(d.Tasks))
		}
		if got.Source != k.src.Name() || got.State != model.StateQueued || got.Version == "" || got.Held() {
			t.Fatalf("snapshot task %s: source %q state %s version %q holder %s", got.ID, got.Source, got.State, got.Version, got.Claim().Holder)
		}
	}
	if got := byID[a.ID]; got.Title != "Design VPC module" || got.Description != "terraform" ||
		got.Priority != model.PriorityHigh || got.Class != model.ClassExpedite {
		t.Fatalf("snapshot lost fields: %+v", got)
	}
	k.claim(t, b.ID, "poller")
	d2, err := k.src.Poll(ctx, d.Cursor)
	if err != nil {
		t.Fatalf("incremental poll: %v", err)
	}
	got := index(d2.Tasks)[b.ID]
	if got == nil || got.State != model.StateClaimed {
		t.Fatalf("the claimed task is not in the next incremental poll as claimed: %s", describe(got))
	}
}

func index(tasks []*model.Task) map[string]*model.Task {
	m := make(map[string]*model.Task, len(tasks))
	for _, t := range tasks {
		m[t.ID] = t
	}
	return m
}

func testPullOrder(t *testing.T, k *kit) {
	ctx := k.ctx(t)
	specs := []sources.NewTask{
		{Title: "intangible", Class: model.ClassIntangible, Priority: model.PriorityCritical},
		{Title: "standard low", Priority: model.PriorityLow},
		{Title: "expedite", Class: model.ClassExpedite},
		{Title: "standard critical", Priority: model.PriorityCritical},
		{Title: "fixed date", Class: model.ClassFixedDate, Priority: model.PriorityLow},
		{Title: "standard high", Priority: model.PriorityHigh},
		{Title: "standard high twin", Priority: model.PriorityHigh},
	}
	for _, s := range specs {
		k.create(t, s)
	}
	held := k.create(t, sources.NewTask{Title: "held by a human", Class: model.ClassExpedite, Priority: 99})
	if _, err := k.src.Takeover(ctx, held.ID, sources.Human{Actor: "alice", Expect: held.Version}); err != nil {
		t.Fatalf("takeover: %v", err)
	}
	d, err := k.src.Poll(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var want []*model.Task
	for _, task := range d.Tasks {
		if model.Eligible(task, k.now()) {
			want = append(want, task)
		}
	}
	model.SortPullOrder(want)
	if len(want) != len(specs) {
		t.Fatalf("%d eligible tasks, want %d", len(want), len(specs))
	}
	for i, w := range want {
		next, err := k.src.Next(ctx, "puller")
		if err != nil {
			t.Fatalf("next #%d: %v", i, err)
		}
		if next == nil || next.ID != w.ID {
			t.Fatalf("next #%d = %s, want %s (%s); model order: %s", i, describe(next), w.ID, w.Title, titles(want))
		}
		claimed, err := k.src.ClaimNext(ctx, sources.ClaimRequest{Agent: "puller"})
		if err != nil {
			t.Fatalf("claim-next #%d: %v", i, err)
		}
		if claimed == nil || claimed.ID != w.ID {
			t.Fatalf("claim-next #%d = %s, want %s (%s)", i, describe(claimed), w.ID, w.Title)
		}
	}
	if next, err := k.src.Next(ctx, "puller"); err != nil || next != nil {
		t.Fatalf("next on a drained queue = %s, %v; want nil, nil", describe(next), err)
	}
	if claimed, err := k.src.ClaimNext(ctx, sources.ClaimRequest{Agent: "puller"}); err != nil || claimed != nil {
		t.Fatalf("claim-next on a drained queue = %s, %v; want nil, nil (the human's task is never pulled)", describe(claimed), err)
	}
}

func titles(ts []*model.Task) string {
	var s []string
	for _, t := range ts {
		s = append(s, t.Title)
	}
	return strings.Join(s, ", ")
}

func testClaim(t *testing.T, k *kit) {
	task := k.create(t, sources.NewTask{Title: "claim me"})
	lease := 7 * time.Minute
	before := k.now()
	got, err := k.src.Claim(k.ctx(t), task.ID, sources.ClaimRequest{Agent: "SANDMAN", RunID: "run-42", Node: "sandman-vps", Lease: lease})
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	c := got.Claim()
	if got.State != model.StateClaimed || c.Holder != model.HolderAgent || c.Name != "SANDMAN" || c.RunID != "run-42" {
		t.Fatalf("claimed task: state %s holder %s name %q run %q", got.State, c.Holder, c.Name, c.RunID)
	}
	if c.Token == "" {
		t.Fatal("a claim must hand out a lock token")
	}
	lo, hi := before.Add(lease-k.h.Skew), k.now().Add(lease+k.h.Skew)
	if c.Expires.Time().Before(lo) || c.Expires.Time().After(hi) {
		t.Fatalf("lease expires %v, want now+%v (between %v and %v)", c.Expires, lease, lo, hi)
	}
	if c.ClaimedAt.IsZero() {
		t.Fatal("claimed-at is not recorded")
	}
	if h := model.Health(got, k.now(), model.DefaultPolicy()); h != model.LeaseHealthy {
		t.Fatalf("a fresh 7 min lease is %s, want healthy", h)
	}
	fresh := k.get(t, task.ID)
	if fresh.Claim().Token != c.Token || fresh.State != model.StateClaimed {
		t.Fatalf("Get after claim: %s token %q, want token %q", describe(fresh), fresh.Claim().Token, c.Token)
	}
	again := k.create(t, sources.NewTask{Title: "default lease"})
	def := k.claim(t, again.ID, "ORACLE")
	if l := def.Claim().Expires.Time().Sub(k.now()); l < 20*time.Minute-k.h.Skew || l > 20*time.Minute+k.h.Skew {
		t.Fatalf("default lease is %v, want seed 002's 20 minutes", l)
	}
	if def.Claim().Token == c.Token {
		t.Fatal("two claims got the same token")
	}
}

func testClaimHeld(t *testing.T, k *kit) {
	task := k.create(t, sources.NewTask{Title: "contested"})
	held := k.claim(t, task.ID, "SANDMAN")
	_, err := k.src.Claim(k.ctx(t), task.ID, sources.ClaimRequest{Agent: "ORACLE"})
	wantCode(t, "claim of a held task", err, model.CodeConflict)
	k.unchanged(t, held, "a refused claim")
	_, err = k.src.Claim(k.ctx(t), task.ID, sources.ClaimRequest{Agent: "SANDMAN"})
	wantCode(t, "claim by the holder itself", err, model.CodeConflict)
}

func testClaimUnknown(t *testing.T, k *kit) {
	if _, err := k.src.Get(k.ctx(t), "no-such-task"); !errors.Is(err, model.ErrNoSuchTask) {
		t.Fatalf("get of an unknown task = %v, want no such task", err)
	}
	got, err := k.src.Claim(k.ctx(t), "no-such-task", sources.ClaimRequest{Agent: "SANDMAN"})
	if !k.src.Caps().ClaimsAnyID {
		if !errors.Is(err, model.ErrNoSuchTask) {
			t.Fatalf("claim of an unknown task = %v, want no such task", err)
		}
		return
	}
	if err != nil || got.ID != "no-such-task" || got.State != model.StateClaimed {
		t.Fatalf("a source that claims any id refused or mangled one: %v %+v", err, got)
	}
	if again, err := k.src.Get(k.ctx(t), "no-such-task"); err != nil || again.Claim().Token != got.Claim().Token {
		t.Fatalf("the claimed new id does not read back: %v", err)
	}
}

func testHeartbeat(t *testing.T, k *kit) {
	ctx := k.ctx(t)
	task := k.create(t, sources.NewTask{Title: "long job"})
	held, err := k.src.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "SANDMAN", Lease: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	beat, err := k.src.Heartbeat(ctx, task.ID, held.Claim().Token, 30*time.Minute)
	if err != nil {
		t.Fatalf("heartbeat: %v", err)
	}
	if !beat.Claim().Expires.Time().After(held.Claim().Expires.Time().Add(20*time.Minute)) || beat.Claim().Token != held.Claim().Token {
		t.Fatalf("heartbeat moved expiry %v → %v (token %q → %q); want about +28 min, same token",
			held.Claim().Expires, beat.Claim().Expires, held.Claim().Token, beat.Claim().Token)
	}
	_, err = k.src.Heartbeat(ctx, task.ID, "not-the-token", 0)
	wantCode(t, "heartbeat with a wrong token", err, model.CodeLostLock)
	_, err = k.src.Heartbeat(ctx, task.ID, "", 0)
	wantCode(t, "heartbeat with no token", err, model.CodeLostLock)
	k.unchanged(t, k.get(t, task.ID), "a refused heartbeat")
}

func testFinish(t *testing.T, k *kit) {
	ctx := k.ctx(t)
	next := k.now().Add(3 * time.Hour).UTC().Truncate(time.Second)
	outcomes := []sources.Outcome{
		{State: model.StateDone, Artifacts: "https://example.test/pr/1"},
		{State: model.StateBlocked, Reason: "waiting on credentials", UnblockAction: "ask ops for the key", NextCheckAt: next},
		{State: model.StateReview, Artifacts: "pr/2"},
		{State: model.StateCanceled, Reason: "duplicate of TASK-7"},
		{State: model.StateFailed, Reason: "terraform validate failed with 3 errors"},
	}
	for _, o := range outcomes {
		task := k.create(t, sources.NewTask{Title: "finish as " + o.State.String()})
		held := k.claim(t, task.ID, "SANDMAN")
		got, err := k.src.Finish(ctx, task.ID, held.Claim().Token, o)
		if err != nil {
			t.Fatalf("finish as %s: %v", o.State, err)
		}
		got = k.get(t, task.ID)
		if got.State != o.State {
			t.Fatalf("finish as %s left state %s", o.State, got.State)
		}
		if got.Held() || got.Claim().Token != "" || !got.Claim().Expires.IsZero() {
			t.Fatalf("finish as %s kept the lock: %+v", o.State, got.Claim())
		}
		if o.Reason != "" && got.More().Reason != o.Reason {
			t.Fatalf("finish as %s: reason %q, want %q", o.State, got.More().Reason, o.Reason)
		}
		if o.Artifacts != "" && got.More().Artifacts != o.Artifacts {
			t.Fatalf("finish as %s: artifacts %q, want %q", o.State, got.More().Artifacts, o.Artifacts)
		}
		if o.UnblockAction != "" && got.UnblockAction() != o.UnblockAction {
			t.Fatalf("block: unblock action %q, want %q", got.UnblockAction(), o.UnblockAction)
		}
		if !o.NextCheckAt.IsZero() && !got.NextCheckAt().Equal(o.NextCheckAt) {
			t.Fatalf("block: next check %v, want %v", got.NextCheckAt(), o.NextCheckAt)
		}
		if model.Eligible(got, k.now()) {
			t.Fatalf("a %s task is eligible for pull", o.State)
		}
		_, err = k.src.Finish(ctx, task.ID, held.Claim().Token, o)
		wantCode(t, "finishing twice with the same token", err, model.CodeLostLock)
	}
	task := k.create(t, sources.NewTask{Title: "bad outcome"})
	held := k.claim(t, task.ID, "SANDMAN")
	if _, err := k.src.Finish(ctx, task.ID, held.Claim().Token, sources.Outcome{State: model.StateQueued}); err == nil {
		t.Fatal("finishing as queued is not an outcome; it must be refused")
	}
	k.unchanged(t, held, "a refused outcome")
}

func testExpiredLease(t *testing.T, k *kit) {
	ctx := k.ctx(t)
	grace := model.DefaultPolicy().Grace
	task := k.create(t, sources.NewTask{Title: "the agent will die"})
	dead := k.claim(t, task.ID, "SANDMAN")
	_, err := k.src.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "ORACLE"})
	wantCode(t, "claim before the lease ran out", err, model.CodeConflict)
	k.advance(t, task.ID, 20*time.Minute+grace)
	if got := k.get(t, task.ID); model.Health(got, k.now(), model.DefaultPolicy()) != model.LeaseExpired {
		t.Fatalf("after its lease the claim is %s, want expired", model.Health(got, k.now(), model.DefaultPolicy()))
	}
	taken, err := k.src.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "ORACLE"})
	if err != nil {
		t.Fatalf("seed 000: a stale claim can be overridden, but claim said %v", err)
	}
	if taken.Claim().Name != "ORACLE" || taken.Claim().Token == dead.Claim().Token {
		t.Fatalf("takeover of a stale lease: holder %q token reused %v", taken.Claim().Name, taken.Claim().Token == dead.Claim().Token)
	}
	k.rescuedFrom(t, task.ID, "SANDMAN")
	k.zombieWrites(t, task.ID, dead.Claim().Token)
}

// rescuedFrom checks that the task's trail records a rescue naming holder.
func (k *kit) rescuedFrom(t *testing.T, id, holder string) {
	t.Helper()
	trail := k.get(t, id).More().History
	if !slices.ContainsFunc(trail, func(e model.Event) bool {
		return e.Action == model.ActionRescue && strings.Contains(e.Detail, holder)
	}) {
		t.Fatalf("the trail has no rescue naming the dead holder %s: %+v", holder, trail)
	}
}

// testTokenExpiry states when a token stops being current: at the end of
// its lease. A holder that heartbeats or finishes later gets LOST_LOCK and
// changes nothing, although nobody has claimed the task in between.
func testTokenExpiry(t *testing.T, k *kit) {
	task := k.create(t, sources.NewTask{Title: "the agent oversleeps"})
	held := k.claim(t, task.ID, "SANDMAN")
	k.advance(t, task.ID, 20*time.Minute+time.Second)
	k.zombieWrites(t, task.ID, held.Claim().Token)
	if got := k.get(t, task.ID); got.Claim().Name != "SANDMAN" || got.State != model.StateClaimed {
		t.Fatalf("a refused late write must leave the dead claim as it was for the sweep and the rescuer, got %s", describe(got))
	}
}

// testRescue: a claim whose lease ended a grace ago is handed out by next
// and claim-next, on backends whose protocol lets `next` see it
// (Caps.Rescue); elsewhere next keeps to the seed and leaves it to the sweep.
func testRescue(t *testing.T, k *kit) {
	ctx := k.ctx(t)
	grace := model.DefaultPolicy().Grace
	task := k.create(t, sources.NewTask{Title: "the agent was killed", Class: model.ClassExpedite})
	dead := k.claim(t, task.ID, "SANDMAN")
	plain := k.create(t, sources.NewTask{Title: "a queued task after it in pull order", Class: model.ClassStandard})
	k.advance(t, task.ID, 20*time.Minute+grace/2)
	if next, err := k.src.Next(ctx, "ORACLE"); err != nil || next == nil || next.ID != plain.ID {
		t.Fatalf("within the grace next = %s (err %v), want the queued task", describe(next), err)
	}
	_, err := k.src.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "ORACLE"})
	wantCode(t, "claim within the grace", err, model.CodeConflict)
	k.advance(t, task.ID, grace)
	next, err := k.src.Next(ctx, "ORACLE")
	if err != nil {
		t.Fatal(err)
	}
	if !k.src.Caps().Rescue {
		if next == nil || next.ID != plain.ID {
			t.Fatalf("the source declares no rescue by next, yet next = %s", describe(next))
		}
		return
	}
	if next == nil || next.ID != task.ID {
		t.Fatalf("a grace after the lease ended next = %s, want the dead holder's task, first in pull order", describe(next))
	}
	got, err := k.src.ClaimNext(ctx, sources.ClaimRequest{Agent: "ORACLE", RunID: "run-ORACLE"})
	if err != nil || got == nil || got.ID != task.ID {
		t.Fatalf("claim-next a grace after the lease ended = %s, %v; want the dead holder's task", describe(got), err)
	}
	if got.Claim().Name != "ORACLE" || got.Claim().Token == "" || got.Claim().Token == dead.Claim().Token {
		t.Fatalf("rescued claim: holder %q, token reused %v", got.Claim().Name, got.Claim().Token == dead.Claim().Token)
	}
	k.rescuedFrom(t, task.ID, "SANDMAN")
	k.zombieWrites(t, task.ID, dead.Claim().Token)
	if _, err := k.src.Heartbeat(ctx, task.ID, got.Claim().Token, 0); err != nil {
		t.Fatalf("the rescuer's heartbeat: %v", err)
	}
	if next, err := k.src.Next(ctx, "ORACLE"); err != nil || next == nil || next.ID != plain.ID {
		t.Fatalf("after the rescue next = %s (err %v), want the queued task", describe(next), err)
	}
}

func testTakeover(t *testing.T, k *kit) {
	ctx := k.ctx(t)
	task := k.create(t, sources.NewTask{Title: "a human steps in", Class: model.ClassExpedite})
	agent := k.claim(t, task.ID, "SANDMAN")
	seen := k.get(t, task.ID)
	got, err := k.src.Takeover(ctx, task.ID, sources.Human{Actor: "alice", Reason: "agent looping", Expect: seen.Version})
	if err != nil {
		t.Fatalf("takeover: %v", err)
	}
	got = k.get(t, task.ID)
	if got.State != model.StateClaimed || got.Claim().Holder != model.HolderHuman || got.Claim().Name != model.HumanPrefix+"alice" {
		t.Fatalf("after takeover: %s, want claimed by HUMAN:alice", describe(got))
	}
	if got.Claim().Token == "" || got.Claim().Token == agent.Claim().Token {
		t.Fatal("takeover must issue a new token")
	}
	later := k.now().Add(1000 * time.Hour)
	if model.Health(got, later, model.DefaultPolicy()) != model.LeaseHealthy || model.Escalation(got, later, model.DefaultPolicy().Ladder) != model.LevelNone {
		t.Fatal("a human claim went stale")
	}
	if next, err := k.src.Next(ctx, "ORACLE"); err != nil || next != nil {
		t.Fatalf("next offered %s (err %v); human-claimed tasks are never pulled", describe(next), err)
	}
	_, err = k.src.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "ORACLE"})
	wantCode(t, "an agent claiming a human's task", err, model.CodeConflict)
	k.zombieWrites(t, task.ID, agent.Claim().Token)
	// The human's own token works like any holder's.
	if _, err := k.src.Finish(ctx, task.ID, got.Claim().Token, sources.Outcome{State: model.StateDone}); err != nil {
		t.Fatalf("the human completing with their token: %v", err)
	}
	// A queued task can be taken over too.
	free := k.create(t, sources.NewTask{Title: "nobody has it"})
	if _, err := k.src.Takeover(ctx, free.ID, sources.Human{Actor: "bob", Expect: free.Version}); err != nil {
		t.Fatalf("takeover of a queued task: %v", err)
	}
}

func testForceRelease(t *testing.T, k *kit) {
	ctx := k.ctx(t)
	task := k.create(t, sources.NewTask{Title: "stuck"})
	agent := k.claim(t, task.ID, "SANDMAN")
	seen := k.get(t, task.ID)
	if _, err := k.src.ForceRelease(ctx, task.ID, sources.Human{Actor: "alice", Reason: "node down", Expect: seen.Version}); err != nil {
		t.Fatalf("force-release: %v", err)
	}
	got := k.get(t, task.ID)
	if got.State != model.StateQueued || got.Held() || got.Claim().Token != "" {
		t.Fatalf("after force-release: %s token %q, want queued and free", describe(got), got.Claim().Token)
	}
	if !model.Eligible(got, k.now()) {
		t.Fatal("a released task must be eligible again")
	}
	k.zombieWrites(t, task.ID, agent.Claim().Token)
	if next, err := k.src.Next(ctx, "ORACLE"); err != nil || next == nil || next.ID != task.ID {
		t.Fatalf("next after release = %s, %v; want the released task", describe(next), err)
	}
	again := k.claim(t, task.ID, "ORACLE")
	k.zombieWrites(t, task.ID, agent.Claim().Token)
	if _, err := k.src.Heartbeat(ctx, task.ID, again.Claim().Token, 0); err != nil {
		t.Fatalf("the new holder's heartbeat: %v", err)
	}
}

func testHumanCancel(t *testing.T, k *kit) {
	ctx := k.ctx(t)
	task := k.create(t, sources.NewTask{Title: "not needed"})
	agent := k.claim(t, task.ID, "SANDMAN")
	seen := k.get(t, task.ID)
	if _, err := k.src.Cancel(ctx, task.ID, sources.Human{Actor: "alice", Reason: "requirements changed", Expect: seen.Version}); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	got := k.get(t, task.ID)
	if got.State != model.StateCanceled || got.Held() || got.More().Reason != "requirements changed" {
		t.Fatalf("after cancel: %s reason %q", describe(got), got.More().Reason)
	}
	k.zombieWrites(t, task.ID, agent.Claim().Token)
	queued := k.create(t, sources.NewTask{Title: "never started"})
	if _, err := k.src.Cancel(ctx, queued.ID, sources.Human{Actor: "alice", Reason: "dup", Expect: queued.Version}); err != nil {
		t.Fatalf("cancel of a queued task: %v", err)
	}
}

func testHandoff(t *testing.T, k *kit) {
	ctx := k.ctx(t)
	task := k.create(t, sources.NewTask{Title: "research task"})
	agent := k.claim(t, task.ID, "SANDMAN")
	seen := k.get(t, task.ID)
	hold := 3 * k.h.Tick
	start := k.now()
	_, err := k.src.Handoff(ctx, task.ID, sources.Handoff{
		Human: sources.Human{Actor: "alice", Reason: "Oracle has the context", Expect: seen.Version},
		To:    "ORACLE", For: hold, Priority: "urgent",
	})
	if err != nil {
		t.Fatalf("hand-off: %v", err)
	}
	got := k.get(t, task.ID)
	if got.State != model.StateQueued || got.Held() || got.ReservedFor() != "ORACLE" {
		t.Fatalf("after hand-off: %s reserved for %q", describe(got), got.ReservedFor())
	}
	k.zombieWrites(t, task.ID, agent.Claim().Token)
	if next, err := k.src.Next(ctx, "CASSIAN"); err != nil || next != nil {
		t.Fatalf("next for another agent offered %s (err %v) during the reservation", describe(next), err)
	}
	_, err = k.src.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "CASSIAN"})
	wantCode(t, "claim of a task reserved for someone else", err, model.CodeConflict)
	if k.clock == nil && time.Since(start) >= hold {
		t.Fatalf("the checks took longer than the %v reservation; raise Harness.Tick", hold)
	}
	if next, err := k.src.Next(ctx, "ORACLE"); err != nil || next == nil || next.ID != task.ID {
		t.Fatalf("next for the hand-off target = %s, %v", describe(next), err)
	}
	k.wait(start.Add(hold + k.h.Tick).Sub(k.now()))
	if next, err := k.src.Next(ctx, "CASSIAN"); err != nil || next == nil || next.ID != task.ID {
		t.Fatalf("after the reservation expired, next for anyone = %s, %v", describe(next), err)
	}
	k.claim(t, task.ID, "CASSIAN")

	open := k.create(t, sources.NewTask{Title: "for the mesh"})
	if _, err := k.src.Handoff(ctx, open.ID, sources.Handoff{Human: sources.Human{Actor: "alice", Expect: open.Version}, To: model.AnyAgent}); err != nil {
		t.Fatalf("hand-off to ANY: %v", err)
	}
	if next, err := k.src.Next(ctx, "WHOEVER"); err != nil || next == nil || next.ID != open.ID {
		t.Fatalf("a hand-off to ANY is open to every agent: next = %s, %v", describe(next), err)
	}
}

func testAgentHandoff(t *testing.T, k *kit) {
	ctx := k.ctx(t)
	task := k.create(t, sources.NewTask{Title: "not my specialty"})
	agent := k.claim(t, task.ID, "SANDMAN")
	_, err := k.src.Handoff(ctx, task.ID, sources.Handoff{Human: sources.Human{Actor: "SANDMAN"}, Token: "wrong", To: "ORACLE"})
	wantCode(t, "hand-off with a wrong token", err, model.CodeLostLock)
	if _, err := k.src.Handoff(ctx, task.ID, sources.Handoff{Human: sources.Human{Actor: "SANDMAN", Reason: "needs GPU"}, Token: agent.Claim().Token, To: "ORACLE"}); err != nil {
		t.Fatalf("hand-off by the holder: %v", err)
	}
	got := k.get(t, task.ID)
	if got.State != model.StateQueued || got.ReservedFor() != "ORACLE" || got.Held() {
		t.Fatalf("after the agent's hand-off: %s reserved for %q", describe(got), got.ReservedFor())
	}
	k.zombieWrites(t, task.ID, agent.Claim().Token)
}

func testStaleHumanAction(t *testing.T, k *kit) {
	ctx := k.ctx(t)
	task := k.create(t, sources.NewTask{Title: "moving target"})
	agent := k.claim(t, task.ID, "SANDMAN")
	seen := k.get(t, task.ID)
	if _, err := k.src.Heartbeat(ctx, task.ID, agent.Claim().Token, 30*time.Minute); err != nil {
		t.Fatal(err)
	}
	now := k.get(t, task.ID)
	if now.Version == seen.Version {
		t.Fatal("a heartbeat must change the version a human action is checked against")
	}
	h := sources.Human{Actor: "alice", Reason: "looked stuck", Expect: seen.Version}
	actions := map[string]func() (*model.Task, error){
		"takeover":      func() (*model.Task, error) { return k.src.Takeover(ctx, task.ID, h) },
		"force-release": func() (*model.Task, error) { return k.src.ForceRelease(ctx, task.ID, h) },
		"cancel":        func() (*model.Task, error) { return k.src.Cancel(ctx, task.ID, h) },
		"hand-off": func() (*model.Task, error) {
			return k.src.Handoff(ctx, task.ID, sources.Handoff{Human: h, To: "ORACLE"})
		},
	}
	for _, name := range []string{"takeover", "force-release", "cancel", "hand-off"} {
		_, err := actions[name]()
		wantCode(t, name+" on what the human saw before a heartbeat", err, model.CodeConflict)
		var e *model.Error
		if !errorsAs(err, &e) || e.Current == nil || e.Current.Claim().Token != agent.Claim().Token {
			t.Fatalf("%s: the CONFLICT must carry the task as it is now, got %v", name, err)
		}
		k.unchanged(t, now, "a refused "+name)
	}
	_, err := k.src.ForceRelease(ctx, "no-such-task", sources.Human{Actor: "alice", Expect: "1"})
	if err == nil {
		t.Fatal("force-release of an unknown task succeeded")
	}
}

func testHistory(t *testing.T, k *kit) {
	ctx := k.ctx(t)
	task := k.create(t, sources.NewTask{Title: "audited"})
	k.claim(t, task.ID, "SANDMAN")
	seen := k.get(t, task.ID)
	taken, err := k.src.Takeover(ctx, task.ID, sources.Human{Actor: "alice", Reason: "on call", Expect: seen.Version})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.src.ForceRelease(ctx, task.ID, sources.Human{Actor: "bob", Reason: "handing back", Expect: taken.Version}); err != nil {
		t.Fatal(err)
	}
	hist := k.get(t, task.ID).More().History
	var seenActions []string
	for _, e := range hist {
		seenActions = append(seenActions, e.Actor+":"+e.Action)
	}
	for _, want := range []string{"alice:" + string(model.ActionTakeover), "bob:" + string(model.ActionForceRelease)} {
		if !slices.Contains(seenActions, want) {
			t.Fatalf("history %q lacks %q", seenActions, want)
		}
	}
	for _, e := range hist {
		if e.Action == string(model.ActionForceRelease) && (e.Reason != "handing back" || e.At.IsZero()) {
			t.Fatalf("force-release event lacks reason or time: %+v", e)
		}
	}
	// Both sides of each override: whom it was taken from, released from.
	for action, from := range map[model.Action]string{model.ActionTakeover: "SANDMAN", model.ActionForceRelease: "alice"} {
		if !slices.ContainsFunc(hist, func(e model.Event) bool {
			return e.Action == string(action) && strings.Contains(e.Detail, "by ") && strings.Contains(e.Detail, from)
		}) {
			t.Fatalf("the trail's %s does not name whom it was from (%s): %+v", action, from, hist)
		}
	}
	// The claim, over now, keeps its run (model.ClaimEvent) wherever the
	// trail records claims.
	for _, e := range hist {
		if (e.Action == model.EventClaim || e.Action == "claimed") && !strings.Contains(e.Detail, "run run-SANDMAN") {
			t.Fatalf("the trail's claim lost its run (run-SANDMAN): %+v", e)
		}
	}
}

// testWriterInTrail: agent B read A's token somewhere and completed A's
// claim. The fence lets the write through (the token is current); the trail
// must say B did it, never A.
func testWriterInTrail(t *testing.T, k *kit) {
	ctx := k.ctx(t)
	task := k.create(t, sources.NewTask{Title: "finished by someone else"})
	held := k.claim(t, task.ID, "AGENT_A")
	writer := model.WriterName("AGENT_B", "runB")
	if _, err := k.src.Finish(ctx, task.ID, held.Claim().Token, sources.Outcome{State: model.StateDone, Writer: writer}); err != nil {
		t.Fatal(err)
	}
	// The trail must name the caller, never the holder AGENT_A; a schema
	// with no trail for finishes (some Notion presets) names nobody, and
	// then the review below must.
	named := false
	for _, e := range model.Timeline(k.get(t, task.ID)) {
		if e.Action == model.FinishStep(model.StateDone) && e.Actor != "" {
			if e.Actor != writer {
				t.Fatalf("the trail records the completion as %q, want the caller %q (never the holder AGENT_A)", e.Actor, writer)
			}
			named = true
		}
	}
	// A review is always recorded (who sent a task to review decides who
	// may approve it): by the caller, too.
	sent := k.create(t, sources.NewTask{Title: "sent to review by someone else"})
	heldToo := k.claim(t, sent.ID, "AGENT_A")
	if _, err := k.src.Finish(ctx, sent.ID, heldToo.Claim().Token, sources.Outcome{State: model.StateReview, Writer: writer}); err != nil {
		t.Fatal(err)
	}
	got := k.get(t, sent.ID)
	if got.More().ReviewBy != writer {
		t.Fatalf("the review is recorded as sent by %q, want the caller %q (never the holder AGENT_A)", got.More().ReviewBy, writer)
	}
	for _, e := range model.Timeline(got) {
		if e.Action == model.FinishStep(model.StateReview) && e.Actor != "" {
			if e.Actor != writer {
				t.Fatalf("the trail records the review as %q, want the caller %q", e.Actor, writer)
			}
			named = true
		}
	}
	if !named {
		t.Fatalf("the trail names nobody for the completion nor the review: %+v", model.Timeline(got))
	}
}
