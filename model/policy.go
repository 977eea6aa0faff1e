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
	// Grace is how long an agent's expired lease waits before `next` hands
	// the task to somebody else (a rescue): room for clock skew between the
	// dead holder and its rescuer.
	Grace time.Duration
	// Ladder is the escalation ladder of seed 001.
	Ladder Ladder
	// LeaseCeiling is the longest lease an agent's claim may hold past its
	// last sign of life; a longer one (a lock file expiring in 9999) is
	// suspicious, and judged as ending at the ceiling. Zero: no ceiling.
	LeaseCeiling time.Duration
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
		Grace:          time.Minute,
		LeaseCeiling:   24 * time.Hour,
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
	if t.State != StateQueued || t.Problem() != "" {
		return false
	}
	switch t.claimRef().Holder {
	case HolderHuman:
		return false // "human-claimed tasks are never auto-pulled, regardless of Lock Expires"
	case HolderAgent:
		return t.claimRef().Expires.IsZero() || !now.Before(t.claimRef().Expires.Time())
	}
	return true
}

// EligibleFor is Eligible for one agent: a task handed off to somebody else
// stays theirs until the reservation expires.
func EligibleFor(t *Task, agent string, now time.Time) bool {
	return Eligible(t, now) && t.Reserved().Allows(agent, now)
}

// Inconsistent flags seed 002's edge case: Claimed By is AGENT but Lock
// Expires is empty. Such a task is claimable, and the claimer should say so.
func Inconsistent(t *Task) bool {
	return t.claimRef().Holder == HolderAgent && t.claimRef().Expires.IsZero()
}

// Claimable is the one answer to "may agent claim this task now", for
// `claim`, `next` and claim-next alike: it is eligible for the agent, or it
// is Rescuable.
func Claimable(t *Task, agent string, now time.Time, grace time.Duration) bool {
	return EligibleFor(t, agent, now) || Rescuable(t, now, grace)
}

// Pooled says whether some agent's `next` may hand t out now: it is
// eligible (whoever a hand-off reserves it for), or, in a source whose
// next rescues dead holders' claims, it is Rescuable. The Queue view shows
// exactly these tasks, in pull order.
func Pooled(t *Task, now time.Time, grace time.Duration, rescues bool) bool {
	return Eligible(t, now) || rescues && Rescuable(t, now, grace)
}

// Rescuable says whether an agent's claim has been dead long enough to hand
// the task to somebody else: its lease ended at least grace ago (seeds 000
// and 001: "stale claim, can override", "any node can claim a stale task").
func Rescuable(t *Task, now time.Time, grace time.Duration) bool {
	return t.State == StateClaimed && t.Problem() == "" && t.claimRef().Holder == HolderAgent &&
		!t.claimRef().Expires.IsZero() && !now.Before(t.claimRef().Expires.Time().Add(grace))
}

// Reaped says whether after is before's agent claim put back in the queue
// once its lease had ended (ntask 0.5's `reap`, claimdeck's reap or the
// sweep's rescue), as seen at at: a reap, not an alarm. The Assignee stays
// where the backend keeps one; the claim is gone.
func Reaped(before, after *Task, at time.Time) bool {
	if before == nil || after == nil || before.State != StateClaimed || before.claimRef().Holder != HolderAgent ||
		before.claimRef().Expires.IsZero() || after.State != StateQueued || after.Held() {
		return false
	}
	return !at.Before(before.claimRef().Expires.Time())
}

// Rescued reports whether after is before's task claimed again by another
// agent claim once before's agent lease had ended (next's rescue): the
// work handed on, not a person's takeover.
func Rescued(before, after *Task, at time.Time) bool {
	if before == nil || after == nil || before.State != StateClaimed || before.claimRef().Holder != HolderAgent ||
		before.claimRef().Expires.IsZero() || after.State != StateClaimed || after.claimRef().Holder != HolderAgent {
		return false
	}
	if after.claimRef().Token == before.claimRef().Token && after.claimRef().Name == before.claimRef().Name {
		return false // the same claim, renewed or edited
	}
	return !at.Before(before.claimRef().Expires.Time())
}

// TokenCurrent is the one rule for when a lock token stops being current:
// it names the claim on the task, and the claim is a human's or an agent's
// whose lease is still running. From the lease's end on the token gets
// LOST_LOCK, whether or not anybody has claimed the task since, so a rescuer
// never works beside a holder that outlived its lease.
func TokenCurrent(t *Task, token string, now time.Time) bool {
	if token == "" || t.State != StateClaimed || t.claimRef().Token != token {
		return false
	}
	switch t.claimRef().Holder {
	case HolderHuman:
		return true
	case HolderAgent:
		return !t.claimRef().Expires.IsZero() && now.Before(t.claimRef().Expires.Time())
	}
	return false
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
	if c := a.EditedAt.Time().Compare(b.EditedAt.Time()); c != 0 {
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
// Claimable for it, or nil.
func Next(tasks []*Task, agent string, now time.Time, grace time.Duration) *Task {
	var best *Task
	for _, t := range tasks {
		if Claimable(t, agent, now, grace) && (best == nil || PullCompare(t, best) < 0) {
			best = t
		}
	}
	return best
}

// ActionRescue is the trail's action for a claim that took a task from a
// holder whose lease had ended.
const ActionRescue = "rescue"

// ClaimEvent is the trail's entry for agent claiming was (the task as it
// stood before the claim) in run: a "claim", or a "rescue" naming the dead
// holder; its detail keeps the run ("from A4; run r-9", "run r-9"), so a
// past claim's run stays in the history once the claim is over.
func ClaimEvent(was *Task, agent, run string, at time.Time) Event {
	e := Event{At: at, Actor: agent, Action: EventClaim}
	if was.State == StateClaimed && was.claimRef().Holder == HolderAgent {
		e.Action, e.Detail = ActionRescue, "from "+was.claimRef().Name
	}
	if run = strings.TrimSpace(run); run != "" {
		e.Detail = strings.TrimPrefix(e.Detail+"; run "+run, "; ")
	}
	return e
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
	if t.State != StateClaimed || !t.Held() {
		return LeaseNone
	}
	if t.claimRef().Holder == HolderHuman {
		return LeaseHealthy
	}
	if t.claimRef().Expires.IsZero() || !now.Before(t.claimRef().Expires.Time()) {
		return LeaseExpired
	}
	if t.claimRef().Expires.Time().Sub(now) < p.HeartbeatEvery {
		return LeaseExpiring
	}
	return LeaseHealthy
}

// Remaining is the time left on the lease; negative once expired, zero when
// there is no expiry to count down to.
func Remaining(t *Task, now time.Time) time.Duration {
	if t.claimRef().Expires.IsZero() {
		return 0
	}
	return t.claimRef().Expires.Time().Sub(now)
}
