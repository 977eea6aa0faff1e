package model

import (
	"slices"
	"testing"
	"time"
)

// The notion-task skill's PullPolicy (21-DOT-DEV/openclaw-skills at
// 75590fd, packages/ntask/Sources/NTaskLib/Policy/Sort.swift) is the one
// pull order claimdeck keeps, Eligible and PullCompare:
//
//	// 1. Status must be Ready
//	guard page.status == TaskStatus.ready.rawValue else { return false }
//	// 2. Lock must be empty or expired
//	if let lockToken = page.lockToken, !lockToken.isEmpty {
//	    // If Lock Expires is nil (inconsistent state from a failed mid-update),
//	    // fall through and treat as claimable.
//	    if let lockExpires = page.lockExpires, !Time.isExpired(lockExpires) {
//	        return false // Lock still active
//	...
//	/// Order: ClassOfService rank ASC, Priority DESC, last_edited_time ASC.
//	let rankA = ClassOfService(argument: a.classOfService ?? "")?.rank ?? 3
//	if rankA != rankB { return rankA < rankB }
//	let prioA = a.priority ?? 0
//	if prioA != prioB { return prioA > prioB }
//	return editA < editB
func TestThePullOrderIsTheSkillsPullPolicy(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	at := func(min int) time.Time { return now.Add(time.Duration(min) * time.Minute) }
	held := func(expires time.Time) Claim {
		return Claim{Holder: HolderAgent, Name: "A", Token: "t", Expires: StampOf(expires)}
	}
	rows := []struct {
		id       string
		state    State
		class    Class
		priority int
		edited   time.Time
		claim    Claim
		pulled   bool // the skill's isEligible
	}{
		{"backlog, parked", StateBlocked, ClassExpedite, 3, at(-90), Claim{}, false},
		{"in progress", StateClaimed, ClassExpedite, 3, at(-90), held(at(10)), false},
		{"ready, lock live", StateQueued, ClassExpedite, 3, at(-90), held(at(10)), false},
		{"ready, lock expired", StateQueued, ClassStandard, 2, at(-30), held(at(-1)), true},
		{"ready, token without expiry", StateQueued, ClassStandard, 2, at(-40), held(time.Time{}), true},
		{"missing class is standard", 0, 0, 2, at(-50), Claim{}, true},
		{"expedite, priority 1", StateQueued, ClassExpedite, 1, at(-5), Claim{}, true},
		{"fixed date, priority 3", StateQueued, ClassFixedDate, 3, at(-5), Claim{}, true},
		{"standard, priority 3", StateQueued, ClassStandard, 3, at(-1), Claim{}, true},
		{"standard, no priority", StateQueued, ClassStandard, 0, at(-99), Claim{}, true},
		{"intangible, priority 3", StateQueued, ClassIntangible, 3, at(-99), Claim{}, true},
	}
	var pool []*Task
	for _, r := range rows {
		st := r.state
		if st == 0 {
			st = StateQueued
		}
		task := (&Task{ID: r.id, State: st, Class: r.class, Priority: r.priority, EditedAt: StampOf(r.edited)}).WithClaim(r.claim)
		if got := Eligible(task, now); got != r.pulled {
			t.Errorf("%s: eligible %v, the skill says %v", r.id, got, r.pulled)
		}
		if task.State == StateQueued && Eligible(task, now) {
			pool = append(pool, task)
		}
	}
	SortPullOrder(pool)
	var got []string
	for _, task := range pool {
		got = append(got, task.ID)
	}
	want := []string{
		"expedite, priority 1",        // class rank 1 first
		"fixed date, priority 3",      // rank 2
		"standard, priority 3",        // rank 3, priority descending
		"missing class is standard",   // rank 3, priority 2, edited longest ago
		"ready, token without expiry", // then by last edited, ascending
		"ready, lock expired",
		"standard, no priority", // priority 0 last within its rank
		"intangible, priority 3",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("pull order\n got %q\nwant %q", got, want)
	}
}
