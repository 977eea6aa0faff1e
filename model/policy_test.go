package model

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"
)

var t0 = time.Date(2026, 2, 1, 2, 15, 0, 0, time.UTC)

func agentClaim(name string, claimed, expires time.Time) Claim {
	return Claim{Holder: HolderAgent, Name: name, Token: "tok-" + name, ClaimedAt: StampOf(claimed), Expires: StampOf(expires)}
}

func TestEligible(t *testing.T) {
	cases := []struct {
		name string
		task Task
		want bool
	}{
		{"seed 002: Status equals READY and Claimed By empty", Task{State: StateQueued}, true},
		{"seed 002: only READY is eligible (IN_PROGRESS is not)", Task{State: StateClaimed}, false},
		{"blocked is not eligible", Task{State: StateBlocked}, false},
		{"review is not eligible", Task{State: StateReview}, false},
		{"done is not eligible", Task{State: StateDone}, false},
		{"seed 002: human-claimed tasks are never auto-pulled, regardless of Lock Expires",
			*(&Task{State: StateQueued}).WithClaim(Claim{Holder: HolderHuman, Name: "HUMAN:alice", Expires: StampOf(t0.Add(-time.Hour))}), false},
		{"human claim without expiry is never pulled either",
			*(&Task{State: StateQueued}).WithClaim(Claim{Holder: HolderHuman}), false},
		{"seed 002: Lock Expires in the past is claimable",
			*(&Task{State: StateQueued}).WithClaim(agentClaim("a", t0.Add(-30*time.Minute), t0.Add(-time.Second))), true},
		{"a lock expiring exactly now has expired",
			*(&Task{State: StateQueued}).WithClaim(agentClaim("a", t0.Add(-20*time.Minute), t0)), true},
		{"a live agent lock is not eligible",
			*(&Task{State: StateQueued}).WithClaim(agentClaim("a", t0, t0.Add(time.Minute))), false},
		{"seed 002: Claimed By AGENT but Lock Expires empty is treated as claimable",
			*(&Task{State: StateQueued}).WithClaim(Claim{Holder: HolderAgent, Name: "a"}), true},
		{"a task read from bad data is never pulled", Task{State: StateQueued, more: &More{Problem: "status \"wip\" unknown"}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Eligible(&c.task, t0); got != c.want {
				t.Fatalf("Eligible = %v, want %v", got, c.want)
			}
		})
	}
}

func TestInconsistentIsFlagged(t *testing.T) {
	// seed 002: "If Claimed By is AGENT but Lock Expires is empty, the task is
	// treated as claimable ... The claiming agent should note this".
	bad := (&Task{State: StateQueued}).WithClaim(Claim{Holder: HolderAgent})
	if !Inconsistent(bad) || !Eligible(bad, t0) {
		t.Fatalf("AGENT without expiry: Inconsistent=%v Eligible=%v, want both true", Inconsistent(bad), Eligible(bad, t0))
	}
	good := (&Task{State: StateQueued}).WithClaim(agentClaim("a", t0, t0.Add(time.Minute)))
	if Inconsistent(good) {
		t.Fatal("a lock with an expiry is not inconsistent")
	}
	human := (&Task{State: StateClaimed}).WithClaim(Claim{Holder: HolderHuman})
	if Inconsistent(human) {
		t.Fatal("a human claim has no expiry by design; it is not inconsistent")
	}
}

func TestReservation(t *testing.T) {
	task := &Task{State: StateQueued, more: &More{Reservation: &Reservation{For: "ORACLE", Until: t0.Add(10 * time.Minute)}}}
	cases := []struct {
		agent string
		at    time.Time
		want  bool
	}{
		{"ORACLE", t0, true},
		{"oracle", t0, true}, // seed 001 codenames are upper case; agents are not always careful
		{"SANDMAN", t0, false},
		{"SANDMAN", t0.Add(10 * time.Minute), true}, // the reservation has expired
	}
	for _, c := range cases {
		if got := EligibleFor(task, c.agent, c.at); got != c.want {
			t.Errorf("EligibleFor(%s, %v) = %v, want %v", c.agent, c.at.Sub(t0), got, c.want)
		}
	}
	anyone := &Task{State: StateQueued, more: &More{Reservation: &Reservation{For: AnyAgent, Until: t0.Add(time.Hour)}}}
	if !EligibleFor(anyone, "SANDMAN", t0) {
		t.Error("a hand-off to ANY is open to every agent")
	}
	forever := &Task{State: StateQueued, more: &More{Reservation: &Reservation{For: "other-pool"}}}
	if EligibleFor(forever, "claude-chat-7K9X", t0.Add(1000*time.Hour)) {
		t.Error("a reservation without an end never expires")
	}
}

func TestClaimable(t *testing.T) {
	cases := []struct {
		name string
		task Task
		want bool
	}{
		{"queued and free", Task{State: StateQueued}, true},
		{"seed 000: ELSE → CLAIM (stale claim, can override) once the grace has passed",
			*(&Task{State: StateClaimed}).WithClaim(agentClaim("Sandman", t0.Add(-31*time.Minute), t0.Add(-time.Minute))), true},
		{"a lease that ended less than the grace ago is not rescued yet",
			*(&Task{State: StateClaimed}).WithClaim(agentClaim("Sandman", t0.Add(-21*time.Minute), t0.Add(-59*time.Second))), false},
		{"an expired claim on a broken record is never rescued",
			*(&Task{State: StateClaimed, more: &More{Problem: "broken"}}).WithClaim(agentClaim("Sandman", t0.Add(-time.Hour), t0.Add(-30*time.Minute))), false},
		{"seed 000: claimed_at + claim_timeout_minutes > now → SKIP (active claim)",
			*(&Task{State: StateClaimed}).WithClaim(agentClaim("Sandman", t0.Add(-time.Minute), t0.Add(29*time.Minute))), false},
		{"a human's claim is never taken by an agent",
			*(&Task{State: StateClaimed}).WithClaim(Claim{Holder: HolderHuman, Name: "HUMAN:bob"}), false},
		{"an in-progress task without an expiry is not overridden by claim",
			*(&Task{State: StateClaimed}).WithClaim(Claim{Holder: HolderAgent, Name: "x"}), false},
		{"done is final", Task{State: StateDone}, false},
		{"reserved for another agent", Task{State: StateQueued, more: &More{Reservation: &Reservation{For: "ORACLE"}}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Claimable(&c.task, "SANDMAN", t0, DefaultPolicy().Grace); got != c.want {
				t.Fatalf("Claimable = %v, want %v", got, c.want)
			}
		})
	}
}

func TestTokenCurrent(t *testing.T) {
	live := agentClaim("Sandman", t0.Add(-time.Minute), t0.Add(time.Minute))
	live.Token = "tok"
	ended := agentClaim("Sandman", t0.Add(-time.Hour), t0)
	ended.Token = "tok"
	cases := []struct {
		name  string
		task  Task
		token string
		want  bool
	}{
		{"the holder's token while its lease runs", *(&Task{State: StateClaimed}).WithClaim(live), "tok", true},
		{"another token", *(&Task{State: StateClaimed}).WithClaim(live), "other", false},
		{"no token at all", *(&Task{State: StateClaimed}).WithClaim(live), "", false},
		{"the holder's token from the lease's end on, nobody having claimed since", *(&Task{State: StateClaimed}).WithClaim(ended), "tok", false},
		{"an agent claim without an expiry (seed 002's inconsistent state)",
			*(&Task{State: StateClaimed}).WithClaim(Claim{Holder: HolderAgent, Name: "x", Token: "tok"}), "tok", false},
		{"a human's token never expires", *(&Task{State: StateClaimed}).WithClaim(Claim{Holder: HolderHuman, Name: "HUMAN:bob", Token: "tok"}), "tok", true},
		{"a finished task keeps no current token", *(&Task{State: StateDone}).WithClaim(live), "tok", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := TokenCurrent(&c.task, c.token, t0); got != c.want {
				t.Fatalf("TokenCurrent = %v, want %v", got, c.want)
			}
		})
	}
}

func TestClaimEvent(t *testing.T) {
	dead := (&Task{State: StateClaimed}).WithClaim(agentClaim("Sandman", t0.Add(-time.Hour), t0))
	if e := ClaimEvent(dead, "ORACLE", "r-9", t0); e.Action != ActionRescue || e.Actor != "ORACLE" || e.Detail != "from Sandman; run r-9" {
		t.Fatalf("ClaimEvent over a dead holder = %+v, want a rescue by ORACLE naming Sandman", e)
	}
	if e := ClaimEvent(&Task{State: StateQueued}, "ORACLE", "r-9", t0); e.Action != "claim" || e.Detail != "run r-9" {
		t.Fatalf("claim in a run: %+v", e)
	}
	if e := ClaimEvent(&Task{State: StateQueued}, "ORACLE", "", t0); e.Action != "claim" || e.Detail != "" {
		t.Fatalf("ClaimEvent of a free task = %+v, want a plain claim", e)
	}
}

func TestPullOrder(t *testing.T) {
	// seed 002: class rank asc, priority desc, last edited asc; then id.
	mk := func(id string, class Class, prio int, edited time.Duration) *Task {
		return &Task{Source: "s", ID: id, State: StateQueued, Class: class, Priority: prio, EditedAt: StampOf(t0.Add(edited))}
	}
	want := []*Task{
		mk("expedite-low", ClassExpedite, 1, 5*time.Minute),
		mk("fixed-date", ClassFixedDate, 9, 0),
		mk("std-prio-5-older", ClassStandard, 5, 0),
		mk("missing-class-is-standard", 0, 5, time.Minute),
		mk("std-prio-5-newer-a", ClassStandard, 5, 2*time.Minute),
		mk("std-prio-5-newer-b", ClassStandard, 5, 2*time.Minute), // tie broken by id
		mk("std-prio-1", ClassStandard, 1, -time.Hour),
		mk("intangible", ClassIntangible, 100, -time.Hour),
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 50; i++ {
		got := slices.Clone(want)
		rng.Shuffle(len(got), func(a, b int) { got[a], got[b] = got[b], got[a] })
		SortPullOrder(got)
		for j := range got {
			if got[j] != want[j] {
				t.Fatalf("shuffle %d: position %d = %s, want %s", i, j, got[j].ID, want[j].ID)
			}
		}
	}
}

func TestPullOrderIsTotal(t *testing.T) {
	a := &Task{Source: "s", ID: "a"}
	b := &Task{Source: "s", ID: "b"}
	if PullCompare(a, b) >= 0 || PullCompare(b, a) <= 0 || PullCompare(a, a) != 0 {
		t.Fatal("identical keys must be ordered by id, and only a task equals itself")
	}
	x := &Task{Source: "prod", ID: "1"}
	y := &Task{Source: "staging", ID: "1"}
	if PullCompare(x, y) == 0 {
		t.Fatal("the same id in two sources are two tasks")
	}
}

func TestNextSkipsIneligible(t *testing.T) {
	tasks := []*Task{
		(&Task{ID: "human", State: StateQueued, Class: ClassExpedite}).WithClaim(Claim{Holder: HolderHuman}),
		{ID: "reserved", State: StateQueued, Class: ClassExpedite, more: &More{Reservation: &Reservation{For: "ORACLE"}}},
		{ID: "claimed", State: StateClaimed, Class: ClassExpedite},
		(&Task{ID: "in-grace", State: StateClaimed, Class: ClassExpedite}).WithClaim(agentClaim("Sandman", t0.Add(-time.Hour), t0.Add(-time.Second))),
		{ID: "plain", State: StateQueued, Priority: 1},
		{ID: "urgent", State: StateQueued, Priority: 3},
	}
	grace := DefaultPolicy().Grace
	if got := Next(tasks, "SANDMAN", t0, grace); got == nil || got.ID != "urgent" {
		t.Fatalf("Next(SANDMAN) = %v, want urgent", got)
	}
	if got := Next(tasks, "ORACLE", t0, grace); got == nil || got.ID != "reserved" {
		t.Fatalf("Next(ORACLE) = %v, want the task reserved for it", got)
	}
	if got := Next(tasks, "SANDMAN", t0.Add(grace), grace); got == nil || got.ID != "in-grace" {
		t.Fatalf("Next(SANDMAN) a grace after the lease ended = %v, want the dead holder's task, first in pull order", got)
	}
	if got := Next(tasks[:4], "SANDMAN", t0, grace); got != nil {
		t.Fatalf("Next with nothing eligible = %s, want nil", got.ID)
	}
}

func TestHealth(t *testing.T) {
	p := DefaultPolicy()
	cases := []struct {
		name string
		task Task
		want LeaseHealth
	}{
		{"no claim", Task{State: StateQueued}, LeaseNone},
		{"20 min lease just claimed", *(&Task{State: StateClaimed}).WithClaim(agentClaim("a", t0, t0.Add(20*time.Minute))), LeaseHealthy},
		{"less than a heartbeat interval left", *(&Task{State: StateClaimed}).WithClaim(agentClaim("a", t0.Add(-16*time.Minute), t0.Add(4*time.Minute))), LeaseExpiring},
		{"past expiry", *(&Task{State: StateClaimed}).WithClaim(agentClaim("a", t0.Add(-21*time.Minute), t0.Add(-time.Minute))), LeaseExpired},
		{"agent without expiry is claimable, so expired", *(&Task{State: StateClaimed}).WithClaim(Claim{Holder: HolderAgent}), LeaseExpired},
		{"HUMAN claims never go stale", *(&Task{State: StateClaimed}).WithClaim(Claim{Holder: HolderHuman, ClaimedAt: StampOf(t0.Add(-48 * time.Hour))}), LeaseHealthy},
		{"a parked task holds no lease", *(&Task{State: StateBlocked}).WithClaim(agentClaim("a", t0, t0.Add(time.Minute))), LeaseNone},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Health(&c.task, t0, p); got != c.want {
				t.Fatalf("Health = %v, want %v", got, c.want)
			}
		})
	}
}

func TestEscalationLadder(t *testing.T) {
	// seed 001: "10 min Mark stale · 30 min Escalate to urgent · 1 hour Notify
	// Telegram mesh group · 2 hours Mark escalated, ping humans". A seed 001
	// claim has no explicit lease: it expires STALE_THRESHOLD after claimed_at.
	l := DefaultPolicy().Ladder
	seed001 := func(sinceHeartbeat time.Duration) *Task {
		last := t0.Add(-sinceHeartbeat)
		return (&Task{State: StateClaimed}).WithClaim(Claim{Holder: HolderAgent, Name: "SANDMAN", ClaimedAt: StampOf(last), Expires: StampOf(last.Add(l.Stale))})
	}
	cases := []struct {
		stuck time.Duration
		want  Level
	}{
		{0, LevelNone},
		{9*time.Minute + 59*time.Second, LevelNone},
		{10 * time.Minute, LevelStale},
		{29 * time.Minute, LevelStale},
		{30 * time.Minute, LevelUrgent},
		{59 * time.Minute, LevelUrgent},
		{time.Hour, LevelNotify},
		{2*time.Hour - time.Second, LevelNotify},
		{2 * time.Hour, LevelEscalated},
		{72 * time.Hour, LevelEscalated},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.stuck), func(t *testing.T) {
			if got := Escalation(seed001(c.stuck), t0, l); got != c.want {
				t.Fatalf("Escalation after %v = %v, want %v", c.stuck, got, c.want)
			}
		})
	}
}

func TestEscalationRespectsLeaseAndHumans(t *testing.T) {
	l := DefaultPolicy().Ladder
	// seed 002: 20 min lease, heartbeat every 10 min: 12 min since the last
	// heartbeat is normal, not stale.
	live := (&Task{State: StateClaimed}).WithClaim(Claim{Holder: HolderAgent, ClaimedAt: StampOf(t0.Add(-12 * time.Minute)), Expires: StampOf(t0.Add(8 * time.Minute))})
	if got := Escalation(live, t0, l); got != LevelNone {
		t.Errorf("a running lease escalated to %v", got)
	}
	// A lease that expired a moment after a heartbeat is stale at once.
	short := (&Task{State: StateClaimed}).WithClaim(Claim{Holder: HolderAgent, HeartbeatAt: StampOf(t0.Add(-2 * time.Minute)), ClaimedAt: StampOf(t0.Add(-time.Hour)), Expires: StampOf(t0.Add(-time.Second))})
	if got := Escalation(short, t0, l); got != LevelStale {
		t.Errorf("an expired lease heartbeaten 2 min ago = %v, want stale", got)
	}
	if got := Stuck(short, t0); got != 2*time.Minute {
		t.Errorf("Stuck counts from the last heartbeat: got %v, want 2m", got)
	}
	human := (&Task{State: StateClaimed}).WithClaim(Claim{Holder: HolderHuman, ClaimedAt: StampOf(t0.Add(-10 * time.Hour))})
	if got := Escalation(human, t0, l); got != LevelNone {
		t.Errorf("a human claim escalated to %v; human claims never go stale", got)
	}
	custom := Ladder{Stale: time.Minute, Urgent: 2 * time.Minute, Notify: 3 * time.Minute, Escalate: 4 * time.Minute}
	stuck := (&Task{State: StateClaimed}).WithClaim(Claim{Holder: HolderAgent, ClaimedAt: StampOf(t0.Add(-3 * time.Minute)), Expires: StampOf(t0.Add(-2 * time.Minute))})
	if got := Escalation(stuck, t0, custom); got != LevelNotify {
		t.Errorf("every threshold is configurable: got %v, want notify", got)
	}
}

func TestParse(t *testing.T) {
	for in, want := range map[string]int{"critical": 4, "high": 3, "medium": 2, "low": 1, "": 0, "7": 7, "Urgent": 3, "normal": 2} {
		got, err := ParsePriority(in)
		if err != nil || got != want {
			t.Errorf("ParsePriority(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	if _, err := ParsePriority("asap"); err == nil {
		t.Error("an unknown priority name must be an error")
	}
	for in, want := range map[string]Class{"EXPEDITE": ClassExpedite, "fixed-date": ClassFixedDate, "": ClassStandard, "intangible": ClassIntangible} {
		got, err := ParseClass(in)
		if err != nil || got != want {
			t.Errorf("ParseClass(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseClass("EXPIDITE"); err == nil {
		t.Error("a misspelt class must be an error, not STANDARD")
	}
	for s := StateQueued; s <= StateCanceled; s++ {
		got, err := ParseState(s.String())
		if err != nil || got != s {
			t.Errorf("ParseState(%q) = %v, %v", s.String(), got, err)
		}
	}
	if _, err := ParseState("unknown"); err == nil {
		t.Error("unknown is not a state anyone may set")
	}
}

func TestErrorCodes(t *testing.T) {
	// seed 002: CONFLICT 2, MISCONFIGURED 3, LOST_LOCK 4, API_ERROR 5.
	want := map[Code]int{"": 0, CodeConflict: 2, CodeMisconfigured: 3, CodeIncompleteSubtasks: 3, CodeLostLock: 4, CodeAPIError: 5}
	for c, exit := range want {
		if got := c.ExitStatus(); got != exit {
			t.Errorf("%s exits %d, want %d", c, got, exit)
		}
	}
	err := fmt.Errorf("heartbeat: %w", Errorf(CodeLostLock, "heartbeat", "t1", "token no longer matches"))
	if !errors.Is(err, ErrLostLock) || errors.Is(err, ErrConflict) {
		t.Fatal("errors.Is must match by code through wrapping")
	}
	if CodeOf(err) != CodeLostLock || CodeOf(errors.New("boom")) != CodeAPIError || CodeOf(nil) != "" {
		t.Fatal("CodeOf: an uncoded error is API_ERROR, nil is no code")
	}
	if w := Wrap(CodeAPIError, "claim", "t1", Errorf(CodeConflict, "claim", "t1", "held")); CodeOf(w) != CodeConflict {
		t.Fatal("Wrap must keep the code of an *Error")
	}
}

func TestChanges(t *testing.T) {
	seen := (&Task{State: StateClaimed, Version: "1"}).WithClaim(agentClaim("a", t0, t0.Add(time.Minute)))
	now := &Task{State: StateQueued, Version: "2"}
	got := Changes(seen, now)
	if len(got) != 2 || got[0] != "state claimed → queued" || got[1] != "holder AGENT a → —" {
		t.Fatalf("Changes = %q", got)
	}
	hb := *seen
	hb.EditClaim().Expires = StampOf(t0.Add(20 * time.Minute))
	hb.Version = "2"
	if got := Changes(seen, &hb); len(got) != 1 {
		t.Fatalf("a heartbeat is one change, got %q", got)
	}
	edited := *seen
	edited.Version = "3"
	if got := Changes(seen, &edited); len(got) != 1 || got[0] != "the task was edited" {
		t.Fatalf("an edit that touched nothing we show: %q", got)
	}
}

func TestContractStatusWords(t *testing.T) {
	for s := StateQueued; s <= StateCanceled; s++ {
		back, err := ParseStatus(s.Contract())
		if err != nil || back != s {
			t.Errorf("ParseStatus(%s.Contract() = %q) = %v, %v", s, s.Contract(), back, err)
		}
		if back, err := ParseStatus(s.String()); err != nil || back != s {
			t.Errorf("ParseStatus(%q) = %v, %v", s.String(), back, err)
		}
	}
	for word, want := range map[string]State{
		"In Progress": StateClaimed, "in_progress": StateClaimed, "Ready": StateQueued, "pending": StateQueued,
		"CANCELLED": StateCanceled, "Canceled": StateCanceled, "completed": StateDone, "Done": StateDone,
	} {
		if got, err := ParseStatus(word); err != nil || got != want {
			t.Errorf("ParseStatus(%q) = %v, %v; want %v", word, got, err, want)
		}
	}
	for _, bad := range []string{"", "wip", "UNKNOWN", "in progress now"} {
		if _, err := ParseStatus(bad); err == nil {
			t.Errorf("ParseStatus(%q) accepted a word no seed uses", bad)
		}
	}
	if StateUnknown.Contract() != "UNKNOWN" || State(99).Contract() != "UNKNOWN" {
		t.Error("a state outside the vocabulary must read UNKNOWN")
	}
}

func TestPooledIsWhatSomeAgentsNextHandsOut(t *testing.T) {
	now := time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC)
	grace := time.Minute
	agent := func(expires time.Duration) *Task {
		return (&Task{State: StateClaimed}).WithClaim(Claim{Holder: HolderAgent, Name: "A", Token: "t", Expires: StampOf(now.Add(expires))})
	}
	for _, c := range []struct {
		name    string
		t       *Task
		rescues bool
		want    bool
	}{
		{"a queued task", &Task{State: StateQueued}, false, true},
		{"a task handed off to somebody: still in the queue, reserved", &Task{State: StateQueued, more: &More{Reservation: &Reservation{For: "B", Until: now.Add(time.Hour)}}}, false, true},
		{"a running lease", agent(time.Minute), true, false},
		{"a lease ended within the grace", agent(-30 * time.Second), true, false},
		{"a dead holder's claim past the grace, in a source whose next rescues", agent(-2 * time.Minute), true, true},
		{"the same claim where the sweep puts it back (seed 002)", agent(-2 * time.Minute), false, false},
		{"a human's claim never", (&Task{State: StateClaimed}).WithClaim(Claim{Holder: HolderHuman, Name: "HUMAN:a"}), true, false},
		{"a broken task never", &Task{State: StateQueued, more: &More{Problem: "bad status"}}, true, false},
		{"a done task never", &Task{State: StateDone}, true, false},
	} {
		if got := Pooled(c.t, now, grace, c.rescues); got != c.want {
			t.Errorf("%s: Pooled = %v, want %v", c.name, got, c.want)
		}
	}
}
