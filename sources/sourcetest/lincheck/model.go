package lincheck

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Rules are what a history does not say about the queue it came from.
type Rules struct {
	// Grace is how long an agent's ended lease waits before its task may be
	// claimed again (the configuration's grace).
	Grace time.Duration
	// Rescue is true where claim-next hands out an agent's claim whose
	// lease and grace have ended; false where, as in seed 002, such a task
	// stays out of next until a sweep puts it back.
	Rescue bool
	// RescueByID is true where a claim of a named task takes an agent's
	// claim whose lease and grace have ended even though claim-next does
	// not (Notion: seed 002's filter leaves such a task out of next, and
	// claim --task rescues it). Rescue implies it.
	RescueByID bool
	// Lease is the lease an operation that names none was given.
	Lease time.Duration
	// Resolution is how finely answers print times: a time printed as R
	// was an instant in [R, R+Resolution] (RFC 3339 without fractions
	// truncates to the second).
	Resolution time.Duration
	// Timeout bounds the search of one task's history; zero waits for the
	// verdict. A task the search gives up on is reported, not passed.
	Timeout time.Duration
}

// never is a lease end or a return that no judgement reaches.
const never = math.MaxInt64 / 4

// Holder kinds, as seed 002's Claimed By spells them.
const (
	agent = "AGENT"
	human = "HUMAN"
)

// state is one task as the protocol sees it. Times are nanoseconds on the
// backend's clock; a lease end known only to an interval is [eLo, eHi].
type state struct {
	exists   bool
	status   string // queued, claimed, blocked, review, done, canceled, failed
	holder   string // "", AGENT or HUMAN
	token    string // "?" for a claim whose answer was lost
	eLo, eHi int64
	resFor   string // a hand-off's reservation: for whom, until [rLo, rHi]
	rLo, rHi int64
}

const lostToken = "?"

// call is one operation on one task, as the model steps it.
type call struct {
	op     *Op
	lo, hi int64 // the instants at which it may have taken effect
	seen   *Seen // the task as the answer showed it, if it did
}

func final(status string) bool { return status == "done" || status == "canceled" || status == "failed" }

// reservedAway says whether a hand-off surely keeps the task from agent
// until after at.
func reservedAway(s state, who string, at int64) bool {
	return s.resFor != "" && s.resFor != "ANY" && s.resFor != who && s.rLo > at
}

// rescues says whether a claim of kind k takes an agent's claim whose
// lease and grace have ended.
func (r Rules) rescues(k Kind) bool {
	return r.Rescue || r.RescueByID && k == Claim
}

// claimable: seed 002's filter (READY, not HUMAN, lock empty or expired)
// with the hand-off's reservation, or, where a claim of kind k rescues, an
// agent's claim whose lease and grace have ended — possible at some
// instant up to hi.
func (r Rules) claimable(s state, k Kind, who string, hi int64) bool {
	switch {
	case !s.exists:
		return false
	case s.status == "queued":
		return s.holder != human && (s.holder != agent || s.eLo == 0 || s.eLo <= hi) && !reservedAway(s, who, hi)
	case s.status == "claimed":
		return r.rescues(k) && s.holder == agent && s.eLo+int64(r.Grace) <= hi
	}
	return false
}

// unclaimable: possible at some instant from lo on that the task was not
// claimable for who by a claim of kind k.
func (r Rules) unclaimable(s state, k Kind, who string, lo int64) bool {
	switch {
	case !s.exists:
		return true
	case s.status == "queued":
		return s.holder == human || s.holder == agent && s.eLo != 0 && s.eHi > lo ||
			s.resFor != "" && s.resFor != "ANY" && s.resFor != who && s.rHi > lo
	case s.status == "claimed":
		return !r.rescues(k) || s.holder != agent || s.eHi+int64(r.Grace) > lo
	}
	return true
}

// current: the token names the claim and, for an agent, its lease has not
// ended — possible at some instant from lo on. Tokens are fences.
func current(s state, token string, lo int64) bool {
	return s.status == "claimed" && token != "" && names(s.token, token) && (s.holder == human || lo < s.eHi)
}

// stale: possible at some instant up to hi that the token is not current.
func stale(s state, token string, hi int64) bool {
	return s.status != "claimed" || !names(s.token, token) || token == "" || s.holder == agent && hi >= s.eLo
}

// shownMark ends a token a read showed only in part: reads show a prefix
// (the whole token is handed only to its holder), so a read names a token
// by its first characters.
const shownMark = "…"

// names reports whether two tokens can be one: equal, or one a shown
// prefix of the other. A lost claim known only from a read is known by its
// prefix; the full token, when a call names it, must begin with it.
func names(a, b string) bool {
	if a == b {
		return true
	}
	pa, sa := strings.CutSuffix(a, shownMark)
	pb, sb := strings.CutSuffix(b, shownMark)
	switch {
	case a == lostToken || b == lostToken || pa == "" || pb == "":
		return false
	case sa && sb:
		return strings.HasPrefix(pa, pb) || strings.HasPrefix(pb, pa)
	case sa:
		return strings.HasPrefix(b, pa)
	case sb:
		return strings.HasPrefix(a, pb)
	}
	return false
}

// leaseEnd is the end of the lease an answer granted: the lease asked for
// from an instant of the call's window, narrowed by the end the answer
// carries (printed truncated to the resolution). An answer whose end is
// outside that window granted another lease: its end is taken as printed.
func (r Rules) leaseEnd(c call) (int64, int64) {
	lease := c.op.Lease
	if lease == 0 {
		lease = r.Lease
	}
	lo, hi := c.lo+int64(lease), min(c.hi+int64(lease), never)
	if c.seen != nil && !c.seen.Expires.IsZero() {
		at := c.seen.Expires.UnixNano()
		if at > hi || at+int64(r.Resolution) < lo {
			return at, at + int64(r.Resolution)
		}
		lo, hi = max(lo, at), min(hi, at+int64(r.Resolution))
	}
	return lo, hi
}

func cleared(status string) state { return state{exists: true, status: status} }

// apply is the operation taking effect: the next state, or false when the
// protocol forbids it here.
func (r Rules) apply(s state, c call) (state, bool) {
	o := c.op
	switch o.Kind {
	case Create:
		return cleared("queued"), !s.exists
	case Claim, ClaimNext:
		if !r.claimable(s, o.Kind, o.Agent, c.hi) {
			return s, false
		}
		n := cleared("claimed")
		n.holder, n.token = agent, lostToken
		if c.seen != nil {
			n.token = c.seen.Token
			if names(n.token, s.token) {
				return s, false // a claim hands out a new token
			}
		}
		n.eLo, n.eHi = r.leaseEnd(c)
		return n, true
	case Heartbeat:
		if !current(s, o.Token, c.lo) {
			return s, false
		}
		if s.holder == agent {
			s.eLo, s.eHi = r.leaseEnd(c)
		}
		return s, true
	case Finish:
		if !current(s, o.Token, c.lo) {
			return s, false
		}
		return cleared(o.Outcome), true
	case Takeover:
		if !s.exists || s.status != "queued" && s.status != "claimed" {
			return s, false
		}
		n := cleared("claimed")
		n.holder, n.token = human, lostToken
		if c.seen != nil {
			n.token = c.seen.Token
		}
		return n, true
	case ForceRelease:
		return cleared("queued"), s.exists && !final(s.status)
	case CancelTask:
		return cleared("canceled"), s.exists && !final(s.status)
	case Handoff:
		if o.Token != "" && !current(s, o.Token, c.lo) || !s.exists || final(s.status) {
			return s, false
		}
		n := cleared("queued")
		n.resFor, n.rLo, n.rHi = o.Outcome, never, never
		if o.Lease > 0 {
			n.rLo, n.rHi = c.lo+int64(o.Lease), min(c.hi+int64(o.Lease), never)
		}
		return n, true
	case Read:
		return r.read(s, c)
	}
	return s, false
}

// read matches what an answer showed against the state; a claim whose
// answer was lost is known by its token from here on.
func (r Rules) read(s state, c call) (state, bool) {
	v := c.seen
	if v == nil {
		return s, true
	}
	if !s.exists || v.State != s.status {
		return s, false
	}
	if s.status != "claimed" {
		return s, true
	}
	if v.Holder != s.holder || s.token != lostToken && !names(s.token, v.Token) {
		return s, false
	}
	if s.token == lostToken || !strings.HasSuffix(v.Token, shownMark) {
		s.token = v.Token // a prefix never replaces the whole token
	}
	if s.holder == agent && !v.Expires.IsZero() {
		at := v.Expires.UnixNano()
		lo, hi := max(s.eLo, at), min(s.eHi, at+int64(r.Resolution))
		if lo > hi {
			return s, false
		}
		s.eLo, s.eHi = lo, hi
	}
	return s, true
}

// step is the protocol's answer to one operation: the states it may leave.
func (r Rules) step(s state, c call) []state {
	o := c.op
	switch o.Result {
	case OK:
		if n, ok := r.apply(s, c); ok {
			return []state{n}
		}
		return nil
	case Unknown:
		out := []state{s}
		if n, ok := r.apply(s, c); ok && n != s {
			out = append(out, n)
		}
		return out
	case None:
		if r.unclaimable(s, o.Kind, o.Agent, c.lo) {
			return []state{s}
		}
		return nil
	case "CONFLICT":
		if (o.Kind == Claim || o.Kind == ClaimNext) && !r.unclaimable(s, o.Kind, o.Agent, c.lo) {
			return nil
		}
		return []state{s} // a human's action on a version it no longer holds
	case "LOST_LOCK":
		if o.Token != "" && !stale(s, o.Token, c.hi) {
			return nil
		}
		return []state{s}
	}
	return []state{s} // refused for a reason outside the lease protocol: nothing changed
}

func (s state) String() string {
	if !s.exists {
		return "absent"
	}
	out := s.status
	if s.holder != "" {
		out += fmt.Sprintf(" by %s token %s", s.holder, short(s.token))
		if s.holder == agent {
			out += " lease ends " + span(s.eLo, s.eHi)
		}
	}
	if s.resFor != "" {
		out += " reserved for " + s.resFor
	}
	return out
}

func (c call) String() string {
	o := c.op
	out := string(o.Kind)
	if o.Kind == Finish || o.Kind == Handoff {
		out += " " + o.Outcome
	}
	if o.Agent != "" {
		out += " by " + o.Agent
	}
	if o.Token != "" {
		out += " token " + short(o.Token)
	}
	out += " → " + o.Result
	if c.seen != nil && c.seen.Token != "" {
		out += " token " + short(c.seen.Token)
	}
	if c.seen != nil && o.Kind == Read {
		out += " " + c.seen.State
	}
	return out
}

func short(token string) string {
	if len(token) > 8 {
		return token[:8]
	}
	return token
}

func span(lo, hi int64) string {
	f := func(ns int64) string {
		if ns >= never {
			return "never"
		}
		return time.Unix(0, ns).UTC().Format("15:04:05.000")
	}
	if lo == hi {
		return f(lo)
	}
	return "[" + f(lo) + ", " + f(hi) + "]"
}
