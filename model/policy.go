package model

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// Policy holds the tunable durations every policy function reads.
type Policy struct {
	// Lease is the lease an agent gets on claim and heartbeat (seed 002: 20 min).
	Lease time.Duration
	// HeartbeatEvery is how often holders are expected to heartbeat (seed 001:
	// 5 min); a lease with less than this left is "expiring".
	HeartbeatEvery time.Duration
	// Ladder is the escalation ladder of seed 001.
	Ladder Ladder
}

// Ladder holds the time-stuck thresholds of seed 001's priority escalation.
type Ladder struct {
	Stale    time.Duration // mark stale, available for takeover
	Urgent   time.Duration // escalate to urgent priority
	Notify   time.Duration // notify the mesh
	Escalate time.Duration // mark escalated, ping humans
}

// DefaultPolicy is the policy the seeds prescribe.
func DefaultPolicy() Policy {
	return Policy{
		Lease:          20 * time.Minute,
		HeartbeatEvery: 5 * time.Minute,
		Ladder: Ladder{
			Stale:    10 * time.Minute,
			Urgent:   30 * time.Minute,
			Notify:   time.Hour,
			Escalate: 2 * time.Hour,
		},
	}
}

// Eligible is seed 002's filter for `next`: status READY (Queued), not
// claimed by HUMAN, and the lock empty or expired. It ignores reservations;
// EligibleFor adds them.
func Eligible(t *Task, now time.Time) bool {
	if t.State != StateQueued || t.Problem != "" {
		return false
	}
	switch t.Claim.Holder {
	case HolderHuman:
		return false // "human-claimed tasks are never auto-pulled, regardless of Lock Expires"
	case HolderAgent:
		return t.Claim.Expires.IsZero() || !now.Before(t.Claim.Expires)
	}
	return true
}

// EligibleFor is Eligible for one agent: a task handed off to somebody else
// stays theirs until the reservation expires.
func EligibleFor(t *Task, agent string, now time.Time) bool {
	return Eligible(t, now) && t.Reservation.Allows(agent, now)
}

// Inconsistent flags seed 002's edge case: Claimed By is AGENT but Lock
// Expires is empty. Such a task is claimable, and the claimer should say so.
func Inconsistent(t *Task) bool {
	return t.Claim.Holder == HolderAgent && t.Claim.Expires.IsZero()
}

// Claimable says whether agent may claim the task now: it is eligible for
// the agent, or an agent's lease on it has expired (seeds 000 and 001:
// "stale claim, can override", "any node can claim a stale task").
func Claimable(t *Task, agent string, now time.Time) bool {
	if EligibleFor(t, agent, now) {
		return true
	}
	return t.State == StateClaimed && t.Problem == "" && t.Claim.Holder == HolderAgent &&
		!t.Claim.Expires.IsZero() && !now.Before(t.Claim.Expires)
}

// PullCompare is the deterministic pull order of seed 002: class rank
// ascending, priority descending, last edited ascending (oldest first, to
// prevent starvation), then source and native id so that the order is total.
func PullCompare(a, b *Task) int {
	if c := cmp.Compare(a.Class.Rank(), b.Class.Rank()); c != 0 {
		return c
	}
	if c := cmp.Compare(b.Priority, a.Priority); c != 0 {
		return c
	}
	if c := a.EditedAt.Compare(b.EditedAt); c != 0 {
		return c
	}
	if c := strings.Compare(a.Source, b.Source); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// SortPullOrder sorts tasks in pull order, in place.
func SortPullOrder(tasks []*Task) { slices.SortFunc(tasks, PullCompare) }

// Next is what `next` hands agent: the first task in pull order that is
// eligible for it, or nil.
func Next(tasks []*Task, agent string, now time.Time) *Task {
	var best *Task
	for _, t := range tasks {
		if EligibleFor(t, agent, now) && (best == nil || PullCompare(t, best) < 0) {
			best = t
		}
	}
	return best
}

// LeaseHealth is how a claim stands against its lease.
type LeaseHealth int

// Lease health values.
const (
	LeaseNone     LeaseHealth = iota // nobody holds the task
	LeaseHealthy                     // more than one heartbeat interval left, or held by a human
	LeaseExpiring                    // less than one heartbeat interval left
	LeaseExpired                     // past expiry: stale
)

func (h LeaseHealth) String() string {
	switch h {
	case LeaseHealthy:
		return "healthy"
	case LeaseExpiring:
		return "expiring"
	case LeaseExpired:
		return "expired"
	}
	return "none"
}

// Health reports the lease health of a claimed task. HUMAN claims never go
// stale. An AGENT claim with no expiry (seed 002's inconsistent state) counts
// as expired: it is claimable.
func Health(t *Task, now time.Time, p Policy) LeaseHealth {
	if t.State != StateClaimed || !t.Claim.Held() {
		return LeaseNone
	}
	if t.Claim.Holder == HolderHuman {
		return LeaseHealthy
	}
	if t.Claim.Expires.IsZero() || !now.Before(t.Claim.Expires) {
		return LeaseExpired
	}
	if t.Claim.Expires.Sub(now) < p.HeartbeatEvery {
		return LeaseExpiring
	}
	return LeaseHealthy
}

// Remaining is the time left on the lease; negative once expired, zero when
// there is no expiry to count down to.
func Remaining(t *Task, now time.Time) time.Duration {
	if t.Claim.Expires.IsZero() {
		return 0
	}
	return t.Claim.Expires.Sub(now)
}
