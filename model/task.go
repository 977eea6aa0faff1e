package model

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// State is the normalized lifecycle state of a task. Each backend maps its
// own vocabulary onto it and keeps the raw value in Task.RawStatus.
type State uint8

// The lifecycle states. StateUnknown marks a raw status outside the backend's
// vocabulary: the task is shown, never pulled, and carries a Problem.
const (
	StateUnknown State = iota
	StateQueued
	StateClaimed
	StateBlocked
	StateReview
	StateDone
	StateFailed
	StateCanceled
)

var stateNames = [...]string{"unknown", "queued", "claimed", "blocked", "review", "done", "failed", "canceled"}

func (s State) String() string {
	if int(s) >= len(stateNames) {
		return "state(" + strconv.Itoa(int(s)) + ")"
	}
	return stateNames[s]
}

// Final reports whether the task has left the queue for good.
func (s State) Final() bool { return s == StateDone || s == StateFailed || s == StateCanceled }

// ParseState reads a normalized state name as String prints it.
func ParseState(name string) (State, error) {
	if i := namedIndex(stateNames[:], name); i > 0 {
		return State(i), nil
	}
	return StateUnknown, fmt.Errorf("unknown state %q (want one of queued, claimed, blocked, review, done, failed, canceled)", name)
}

// namedIndex is the index of name, in any case and spacing, among names
// whose first entry is the zero value's and never matches; 0 when none.
func namedIndex(names []string, name string) int {
	n := strings.ToLower(strings.TrimSpace(name))
	for i, s := range names[1:] {
		if s == n {
			return i + 1
		}
	}
	return 0
}

// Class is the service class of seed 002; its value is the rank used by the
// pull order, lower first.
type Class uint8

// The service classes with their seed 002 ranks.
const (
	ClassExpedite   Class = 1
	ClassFixedDate  Class = 2
	ClassStandard   Class = 3
	ClassIntangible Class = 4
)

func (c Class) String() string {
	switch c {
	case ClassExpedite:
		return "EXPEDITE"
	case ClassFixedDate:
		return "FIXED_DATE"
	case ClassIntangible:
		return "INTANGIBLE"
	default:
		return "STANDARD"
	}
}

// Rank is the sort key of the class; anything unset ranks as STANDARD
// ("Tasks missing Class are treated as STANDARD (rank 3)", seed 002).
func (c Class) Rank() int {
	if c < ClassExpedite || c > ClassIntangible {
		return int(ClassStandard)
	}
	return int(c)
}

// ParseClass reads a class name. An empty name is STANDARD; an unknown one
// is an error so that a typo in a tasks file is reported, not silently ranked.
func ParseClass(name string) (Class, error) {
	switch strings.ToUpper(strings.Join(strings.FieldsFunc(name, func(r rune) bool { return r == ' ' || r == '-' || r == '_' }), "_")) {
	case "EXPEDITE":
		return ClassExpedite, nil
	case "FIXED_DATE", "FIXEDDATE":
		return ClassFixedDate, nil
	case "", "STANDARD":
		return ClassStandard, nil
	case "INTANGIBLE":
		return ClassIntangible, nil
	}
	return ClassStandard, fmt.Errorf("unknown class %q (want EXPEDITE, FIXED_DATE, STANDARD or INTANGIBLE)", name)
}

// Seed 003's named priorities on the numeric scale, higher = more urgent.
// Anything unnamed (seed 003's "ELSE 5") sorts below low.
const (
	PriorityNone     = 0
	PriorityLow      = 1
	PriorityMedium   = 2
	PriorityHigh     = 3
	PriorityCritical = 4
)

// ParsePriority reads a priority as a number or one of seed 003's names
// (critical, high, medium, low) or seed 001's hand-off names (normal,
// urgent). An empty string is PriorityNone.
func ParsePriority(s string) (int, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	switch v {
	case "":
		return PriorityNone, nil
	case "critical":
		return PriorityCritical, nil
	case "high", "urgent":
		return PriorityHigh, nil
	case "medium", "normal":
		return PriorityMedium, nil
	case "low":
		return PriorityLow, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return PriorityNone, fmt.Errorf("unknown priority %q (want a number or critical, high, medium, low)", s)
	}
	if err != nil {
		return PriorityNone, fmt.Errorf("priority %s is out of range (want a number from %d to %d)", v, MinPriority, MaxPriority)
	}
	if err := CheckPriority(n); err != nil {
		return PriorityNone, err
	}
	return n, nil
}

// PriorityName is the seed 003 name of a numeric priority, or the number.
func PriorityName(p int) string {
	switch p {
	case PriorityCritical:
		return "critical"
	case PriorityHigh:
		return "high"
	case PriorityMedium:
		return "medium"
	case PriorityLow:
		return "low"
	case PriorityNone:
		return ""
	}
	return strconv.Itoa(p)
}

// HandoffPriority is seed 001's hand-off priority (normal, urgent,
// critical) for a task priority, so a person picks in the tasks' own words
// and the Handoff Queue gets its own: ParsePriority reads it back as high
// for urgent and medium for normal.
func HandoffPriority(p int) string {
	switch {
	case p >= PriorityCritical:
		return "critical"
	case p == PriorityHigh:
		return "urgent"
	}
	return "normal"
}

// HolderKind says who holds a claim. Seed 002's `Claimed By` select.
type HolderKind int

// Holder kinds.
const (
	HolderNone HolderKind = iota
	HolderAgent
	HolderHuman
)

func (h HolderKind) String() string {
	switch h {
	case HolderAgent:
		return "AGENT"
	case HolderHuman:
		return "HUMAN"
	}
	return ""
}

// HumanPrefix marks a holder name taken over by a person: "HUMAN:alice".
const HumanPrefix = "HUMAN:"

// AnyAgent is the hand-off target that lets every agent take the task
// ("Target agent (or ANY for mesh)", seed 001).
const AnyAgent = "ANY"

// Claim is the lease on a task as the backend records it.
type Claim struct {
	Holder      HolderKind
	Name        string // agent name, worker id or HUMAN:<actor>
	RunID       string
	Node        string
	Token       string // fencing token; every holder write names it
	ClaimedAt   Stamp
	HeartbeatAt Stamp
	// Expires is the lease expiry: explicit, or claimed-at + timeout where the
	// backend stores only claimed-at. Zero means no expiry.
	Expires Stamp
}

// Held reports whether anybody holds the task.
func (c Claim) Held() bool { return c.Holder != HolderNone }

// Granted is the lease the claim was last given: from its last sign of
// life (a heartbeat, else the claim) to its expiry; zero when either is
// unknown. A 2-minute lease is 2 minutes here, whatever the policy's.
func (c Claim) Granted() time.Duration {
	alive, until := c.LastAlive(), c.Expires.Time()
	if alive.IsZero() || c.Expires.IsZero() || !until.After(alive) {
		return 0
	}
	return until.Sub(alive)
}

// LastAlive is the last sign of life from the holder.
func (c Claim) LastAlive() time.Time {
	if c.HeartbeatAt.Time().After(c.ClaimedAt.Time()) {
		return c.HeartbeatAt.Time()
	}
	return c.ClaimedAt.Time()
}

// Reservation is a hand-off: the task is kept for one agent (or ANY) until
// the reservation expires. A zero Until never expires.
type Reservation struct {
	For      string
	Until    time.Time
	By       string
	Reason   string
	Priority string // seed 001: normal, urgent, critical
}

// Active reports whether the reservation still binds at now; a nil one
// (the task was not handed off) never does.
func (r *Reservation) Active(now time.Time) bool {
	return r != nil && r.For != "" && (r.Until.IsZero() || now.Before(r.Until))
}

// Allows reports whether agent may take a task under this reservation.
func (r *Reservation) Allows(agent string, now time.Time) bool {
	return !r.Active(now) || r.For == AnyAgent || strings.EqualFold(r.For, agent)
}

// Unblock is what a blocked task waits for: the action that frees it and
// when to look again.
type Unblock struct {
	Action      string
	NextCheckAt time.Time
}

// UnblockOf is the Unblock of action and next check, nil when both are
// unset, as they are on every task that was never blocked.
func UnblockOf(action string, next time.Time) *Unblock {
	if action == "" && next.IsZero() {
		return nil
	}
	return &Unblock{Action: action, NextCheckAt: next}
}

// Event is one entry of a task's claim history.
type Event struct {
	At     time.Time
	Actor  string
	Action string
	Reason string
	Detail string
	// Door is where the request came in, where the trail recorded it.
	Door Door
	// Result is "" (or ResultApplied) for a step that was taken, else the
	// code it was refused with: a refused attempt is kept in the trail
	// too, and never read as the step it attempted.
	Result string
}

// ResultApplied is the Result of a step that was taken.
const ResultApplied = "applied"

// Applied reports whether the event records a step taken, not a refused
// attempt.
func (e Event) Applied() bool { return e.Result == "" || e.Result == ResultApplied }

// Carried is what a backend keeps of a task beyond what claimdeck acts on:
// seed 003's task_type, who worked a task no longer claimed and when that
// run started and ended, and a lock file's fields claimdeck does not read.
type Carried struct {
	TaskType    string
	Worker      string    // the last holder of a task not claimed now
	StartedAt   time.Time // when that run started
	CompletedAt time.Time // when it was completed, failed or canceled
	// LeaseUnset says the live claim was written with no lease expiry and
	// no holder kind (seed 003's own claim, which records started_at
	// only): the claim's Expires is derived, and a copy derives it again.
	LeaseUnset bool
	// Extra holds fields the backend keeps that claimdeck does not read,
	// each as its raw JSON text, by name.
	Extra map[string]string
}

// Task is the one normalized task every backend produces.
type Task struct {
	Source      string
	ID          string // native id: page id, row id, lock-file task id
	Key         string // display key, e.g. TASK-42; falls back to ID
	Title       string
	Description string

	RawStatus string

	Priority int
	// The small fields share one word; TestTaskSize says why it matters.
	State State
	Class Class
	// Escalated is the escalation level the backend has recorded, so that
	// enforcement acts once per level.
	Escalated Level
	// OpenSubtasks counts sub-tasks not yet done, failed or canceled; a
	// task with any cannot be completed (INCOMPLETE_SUBTASKS).
	OpenSubtasks int32

	CreatedAt Stamp
	EditedAt  Stamp

	// claim is who holds the task, nil when nothing of a holder is
	// recorded: most of a big queue is unclaimed, and a Claim is 96 bytes.
	// Read it with Claim, write it with SetClaim or EditClaim.
	claim *Claim
	// more holds what a poll seldom fills; nil when none of it is set. Read
	// it with More, write it with SetMore or EditMore.
	more *More

	// Version identifies what a human saw; a human action is applied only if
	// the task still has this version. Opaque, defined by the backend.
	Version string
}

// More is the part of a task a poll seldom fills: of 100,000 live tasks
// most have none of it, so a task keeps it behind one pointer and stays in
// the 160-byte allocation size class with its Stamps (TestTaskSize).
// A task read on its own (Source.Get) fills more of it.
type More struct {
	Reason string // blocker or cancel/fail reason, a review's summary
	// Unblock is nil unless the task was blocked with an unblock action or
	// a next check; read it with UnblockAction and NextCheckAt.
	Unblock   *Unblock
	Artifacts string
	// Parent is the native id of the task this one is a sub-task of.
	Parent string
	// Family holds the sub-tasks where the backend keeps them and the task
	// was read on its own (Source.Get); nil from a poll.
	Family *Family

	History []Event
	// ReviewBy is who sent the task to Review, as the backend stored it in
	// the write that moved it there (a column, a lock file's field,
	// claimdeck's signed note): the caller's name, else the holder whose
	// token was used. Empty when the task is not in Review or the backend
	// did not record it (the task went there outside claimdeck).
	ReviewBy string
	// Carried is what the backend keeps of the task that claimdeck shows
	// but does not act on; Source.Get fills it (nil from a poll), so that
	// `copy` moves it unchanged.
	Carried *Carried

	// Problem explains a task read from bad data (an unknown status, a broken
	// lock file). Such tasks are shown, never pulled and never acted on.
	Problem string

	// Reservation is the hand-off the task is kept under; nil when it was
	// not handed off. Read it with Reserved or ReservedFor, write it with
	// SetReservation.
	Reservation *Reservation
}

// A task keeps its claim and its More behind pointers, nil when empty
// (TestTaskSize says why). They read as copies, so a write through one
// does not compile, and are written through a fresh copy each time, so a
// copy of the task made before (tasks are copied by value) keeps what it
// had, as it would if the fields were the task's own.

// behind reads a part kept behind a pointer: a copy, or its zero value.
func behind[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// put keeps v behind the pointer at p, or nothing when v is empty. It
// copies v into a new part rather than keeping &v, which would put v on
// the heap at every call, empty or not: 128 bytes of garbage for each of
// 100,000 tasks a full poll reads, most of which have no More.
func put[T any](p **T, v T, empty bool) {
	if empty {
		*p = nil
		return
	}
	kept := new(T)
	*kept = v
	*p = kept
}

// edit puts a fresh copy of the part behind the pointer at p and returns
// it to write to.
func edit[T any](p **T) *T {
	v := behind(*p)
	*p = &v
	return *p
}

// Claim returns a copy of who holds the task; its zero value when nobody
// does. Write it with SetClaim or EditClaim.
func (t *Task) Claim() Claim { return behind(t.claim) }

// Held reports whether anybody holds the task, as Claim().Held() does
// without copying the claim.
func (t *Task) Held() bool { return t.claim != nil && t.claim.Held() }

// noClaim is what claimRef reads for a task nobody holds.
var noClaim Claim

// claimRef is the task's claim to read in place, for the rules that read
// it for every task at every poll: never written through.
func (t *Task) claimRef() *Claim {
	if t.claim == nil {
		return &noClaim
	}
	return t.claim
}

// SetClaim replaces who holds the task; a zero c leaves none.
func (t *Task) SetClaim(c Claim) { put(&t.claim, c, c == Claim{}) }

// WithClaim sets who holds the task as SetClaim does and returns the task,
// for a task written as a literal.
func (t *Task) WithClaim(c Claim) *Task {
	t.SetClaim(c)
	return t
}

// EditClaim returns who holds the task to write to: a fresh copy.
func (t *Task) EditClaim() *Claim { return edit(&t.claim) }

// More returns a copy of the task's seldom-filled part; its zero value when
// none is set. Write it with SetMore or EditMore.
func (t *Task) More() More { return behind(t.more) }

// Problem is More().Problem, read in place: the rules read it for every
// task at every poll, and More copies its 128 bytes.
func (t *Task) Problem() string {
	if t.more == nil {
		return ""
	}
	return t.more.Problem
}

// Parent is More().Parent, read in place.
func (t *Task) Parent() string {
	if t.more == nil {
		return ""
	}
	return t.more.Parent
}

// SetMore replaces the task's seldom-filled part; a zero m leaves none.
func (t *Task) SetMore(m More) { put(&t.more, m, m.empty()) }

// WithMore sets the task's seldom-filled part as SetMore does and returns
// the task, for a task written as a literal.
func (t *Task) WithMore(m More) *Task {
	t.SetMore(m)
	return t
}

// EditMore returns the task's seldom-filled part to write to: a fresh copy.
func (t *Task) EditMore() *More { return edit(&t.more) }

func (m *More) empty() bool {
	return m.Reason == "" && m.Unblock == nil && m.Artifacts == "" && m.Parent == "" && m.Family == nil &&
		m.History == nil && m.ReviewBy == "" && m.Carried == nil && m.Problem == "" && m.Reservation == nil
}

// InBacklog reports whether the task is parked in ntask's Backlog: not yet
// triaged, never pulled, read from a status word "backlog" (Notion's
// option, seed 003's and a lock file's status claimdeck writes for it).
func (t *Task) InBacklog() bool {
	return t.State == StateBlocked && strings.EqualFold(strings.TrimSpace(t.RawStatus), "backlog")
}

// Untriaged reports whether a parked task is waiting to be triaged, not
// on a blocker: in the Backlog, or — where the database has no Backlog
// option and a parked task is written Blocked — blocked with no reason
// and no unblock action recorded. update may release it to the queue; a
// task blocked for a reason is released by unblock alone.
func (t *Task) Untriaged() bool {
	return t.InBacklog() || t.State == StateBlocked && strings.TrimSpace(t.More().Reason) == "" && t.UnblockAction() == ""
}

// DisplayKey is the key shown on screen.
func (t *Task) DisplayKey() string {
	if t.Key != "" {
		return t.Key
	}
	return t.ID
}

// ReservedFor is whom the task was handed off to, "" when it was not.
func (t *Task) ReservedFor() string {
	if r := t.Reserved(); r != nil {
		return r.For
	}
	return ""
}

// Reserved is the hand-off the task is kept under, nil when it was not
// handed off. It is shared with the task's copies: read it, never write
// through it (SetReservation replaces it).
func (t *Task) Reserved() *Reservation {
	if t.more == nil {
		return nil
	}
	return t.more.Reservation
}

// SetReservation replaces the hand-off the task is kept under; nil leaves
// none.
func (t *Task) SetReservation(r *Reservation) {
	if r == nil && t.more == nil {
		return
	}
	m := t.More()
	m.Reservation = r
	t.SetMore(m)
}

// WithReservation sets the hand-off as SetReservation does and returns
// the task, for a task written as a literal.
func (t *Task) WithReservation(r *Reservation) *Task {
	t.SetReservation(r)
	return t
}

// UnblockAction is what would unblock the task, "" when none was recorded.
func (t *Task) UnblockAction() string {
	if t.more == nil || t.more.Unblock == nil {
		return ""
	}
	return t.more.Unblock.Action
}

// NextCheckAt is when a blocked task is to be looked at again; zero when
// no time was recorded.
func (t *Task) NextCheckAt() time.Time {
	if t.more == nil || t.more.Unblock == nil {
		return time.Time{}
	}
	return t.more.Unblock.NextCheckAt
}

// Ref names a task across sources.
func (t *Task) Ref() string { return t.Source + "/" + t.ID }

// Archived reports whether t is history at horizon: final, and last changed
// before it. The dashboard keeps only what is not; a zero horizon keeps all.
func Archived(t *Task, horizon time.Time) bool {
	return !horizon.IsZero() && t.State.Final() && t.EditedAt.Time().Before(horizon)
}

// How closely a task id as an agent writes it names a task.
const (
	NamedNot      = 0
	NamedByNumber = 1 // the number alone on either side: "42" for TASK-42, "TASK-42" for key 42
	NamedExactly  = 2 // the native id, or the key in any case ("task-42" for TASK-42)
)

// NamedBy says how ref names t: exactly, by its number, or not at all. A
// caller resolving ref takes the exact names first.
func NamedBy(t *Task, ref string) int {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return NamedNot
	}
	key := strings.TrimSpace(t.DisplayKey())
	if ref == strings.TrimSpace(t.ID) || strings.EqualFold(ref, key) {
		return NamedExactly
	}
	if n := keyNumber(ref); n != "" && n == keyNumber(key) {
		return NamedByNumber
	}
	return NamedNot
}

// keyNumber is the number a key ends in ("42" of TASK-42 and of 42), ""
// when it does not end in one after a prefix of letters and a dash.
func keyNumber(key string) string {
	num := key
	if i := strings.LastIndexByte(key, '-'); i >= 0 {
		prefix := key[:i]
		if prefix == "" || strings.IndexFunc(prefix, func(r rune) bool { return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') }) >= 0 {
			return ""
		}
		num = key[i+1:]
	}
	if num == "" || strings.IndexFunc(num, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
		return ""
	}
	return strings.TrimLeft(num, "0")
}
