// Package sources defines the Source interface every task-queue backend
// implements, the desk through which human overrides are applied and
// audited, and the hub that polls sources for the dashboard.
//
// It knows the lease protocol but no backend's schema: SQL rows,
// Notion properties and lock files stay inside their own packages.
package sources

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

// Source is one task queue. Every method is safe for concurrent use. Errors
// are *model.Error values carrying a code of the ntask contract: CONFLICT,
// MISCONFIGURED, LOST_LOCK, API_ERROR or INCOMPLETE_SUBTASKS.
type Source interface {
	// Name is the configured source name; every task it returns carries it.
	Name() string
	// Caps says what the backend can promise.
	Caps() Caps

	// Poll returns the tasks changed since the cursor, or every task when the
	// cursor is empty (Delta.Full). The returned cursor is passed to the next
	// call. An idle incremental poll must not cost more on a larger queue.
	// A PollOption with FinishedAfter leaves history out of a full poll.
	Poll(ctx context.Context, since Cursor, opt ...PollOption) (Delta, error)
	// Archive reads on demand the history a windowed poll leaves out.
	Archive(ctx context.Context, q ArchiveQuery) ([]*model.Task, error)
	// Get reads one task fresh from the backend, with its history.
	Get(ctx context.Context, id string) (*model.Task, error)
	// Create adds a task to the queue.
	Create(ctx context.Context, n NewTask) (*model.Task, error)

	// Next is seed 002's `next`: the first task in pull order eligible for the
	// agent, or nil when there is none. It claims nothing.
	Next(ctx context.Context, agent string) (*model.Task, error)
	// Claim takes a task that model.Claimable allows: a new lock token, the
	// lease from now. CONFLICT when someone else holds it.
	Claim(ctx context.Context, id string, c ClaimRequest) (*model.Task, error)
	// ClaimNext claims the first eligible task in one step, or returns nil
	// when there is none.
	ClaimNext(ctx context.Context, c ClaimRequest) (*model.Task, error)
	// Heartbeat extends the lease of the holder of token. LOST_LOCK when the
	// token is no longer current.
	Heartbeat(ctx context.Context, id, token string, lease time.Duration) (*model.Task, error)
	// Finish ends or parks the holder's claim (complete, block, review,
	// cancel, fail) and clears the lock. LOST_LOCK when the token is stale.
	Finish(ctx context.Context, id, token string, o Outcome) (*model.Task, error)

	// Takeover claims the task as HUMAN:<actor>: never pulled, never stale.
	Takeover(ctx context.Context, id string, h Human) (*model.Task, error)
	// ForceRelease puts the task back in the queue; the old token dies.
	ForceRelease(ctx context.Context, id string, h Human) (*model.Task, error)
	// Cancel ends the task as canceled with the human's reason.
	Cancel(ctx context.Context, id string, h Human) (*model.Task, error)
	// Handoff releases the task and reserves it for one agent (or ANY).
	Handoff(ctx context.Context, id string, h Handoff) (*model.Task, error)

	// Comment keeps a note in the task's own trail (a Notion comment, a row
	// of the SQL audit trail, a line in the lock directory's history).
	Comment(ctx context.Context, id string, n Note) error
	// Update edits a task's descriptive fields outside the lease protocol,
	// checked with CheckEdit against the task as read in the same write.
	Update(ctx context.Context, id string, e Edit) (*model.Task, error)
	// MarkEscalation records seed 001's level on an agent's stuck claim,
	// conditional on token still being its lock token (LOST_LOCK
	// otherwise); a heartbeat clears it. Without Caps.Escalation it is
	// MISCONFIGURED and Caps.Lacks says why.
	MarkEscalation(ctx context.Context, id, token string, level model.Level) error
	// CheckWrite says, changing no task, whether this process may write
	// (`claimdeck doctor`). Without Caps.WriteCheck it is MISCONFIGURED:
	// the backend cannot tell without writing.
	CheckWrite(ctx context.Context) error

	Close() error
}

// Trail is implemented by sources that declare Caps.Trail: claimdeck's
// own entry in a task's shared trail — a refused attempt, with who asked,
// through which door, and why it was refused — written where no caller's
// comment reaches (a row of the SQL audit table, a lock file's history,
// a signed Notion note) and read back by every process through Get. It
// changes nothing of the task's claim.
type Trail interface {
	Record(ctx context.Context, id string, e model.Event) error
}

// Watcher is implemented by sources that declare Caps.Watch: they push a
// hint that something changed (PostgreSQL LISTEN/NOTIFY, fsnotify). The hub
// polls on each hint; polling on a timer stays the fallback. The channel
// closes when ctx ends or watching fails for good.
type Watcher interface {
	Watch(ctx context.Context) (<-chan struct{}, error)
}

// Caps describes what a backend can promise.
type Caps struct {
	// AtomicClaim is false for backends without conditional writes (Notion):
	// claims are verified by re-reading, which narrows the race but cannot
	// close it. The conformance kit measures double claims instead of
	// asserting there are none.
	AtomicClaim bool
	// Subtasks is true when completing a task checks its open sub-tasks.
	Subtasks bool
	// Rescue is true when next and claim-next hand out a task whose agent's
	// lease ended model.Policy.Grace ago. False where a seed keeps such a
	// task out of `next` (seed 002: Status stays IN_PROGRESS); there the
	// sweep puts it back.
	Rescue bool
	// Watch is true when the source pushes change hints (it is a Watcher);
	// false, the hub finds changes by polling alone.
	Watch bool
	// Escalation is true when MarkEscalation records levels.
	Escalation bool
	// WriteCheck is true when CheckWrite can tell without writing.
	WriteCheck bool
	// Trail is true when the source is a Trail: refused attempts are kept
	// in the task's shared trail, not only in a local journal.
	Trail bool
	// Lacks says, in a person's words, what this configured source cannot
	// do and why: one line for each of AtomicClaim, Subtasks, Watch,
	// Escalation and WriteCheck that is false (Rescue is a seed's protocol,
	// not a lack: testRescue holds either answer).
	Lacks []string
	// ClaimsAnyID is true when a claim of an id the backend has never seen
	// takes it as a new task (seed 004's lock directories); otherwise such
	// a claim is NotFound.
	ClaimsAnyID bool
	// CostlyCount is true where counting the history a windowed poll leaves
	// out means reading all of it (Notion: a query of every old finished
	// page at about 3 requests a second). The source still counts when asked;
	// the dashboard's hub does not ask, and shows no count.
	CostlyCount bool
	// Reads names how the backend reads its store where it reads more
	// than one kind (Notion's ntask schema: "ntask (today's notion-task
	// skill)" or "ntask (seed 002)"); the dashboard's source line and
	// doctor show it. Empty elsewhere.
	Reads string
}

// Cursor is an opaque incremental-poll watermark.
type Cursor string

// Delta is the answer to a poll.
type Delta struct {
	// Full means Tasks is the whole queue: anything not in it is gone.
	Full    bool
	Tasks   []*model.Task
	Removed []string // native ids deleted since the cursor
	Cursor  Cursor
	// Archived counts, on a full poll with FinishedAfter, the final tasks
	// it left out; Archive reads them.
	Archived int
	// Partial marks the first screen a PollOption.First asked for: some
	// tasks, nothing removed, and no cursor; the full poll follows.
	Partial bool
}

// NewTask is a task to create. An empty ID lets the backend choose one.
type NewTask struct {
	ID          string
	Title       string
	Description string
	Priority    int
	Class       model.Class
	// Parent makes the task a sub-task: the parent cannot be completed
	// while it is open. Only sources with Caps.Subtasks accept it.
	Parent string
	// Parked makes the task in ntask's Backlog: not yet triaged, shown
	// with the parked tasks (StateBlocked, RawStatus "backlog"), never
	// pulled by next until a person or `update --status Ready` releases it.
	Parked bool
}

// ClaimRequest says who claims and for how long.
type ClaimRequest struct {
	Agent string
	RunID string
	Node  string
	// Lease is the lease to grant; zero means the source's default.
	Lease time.Duration
	// Door is where the request came in; the claim's trail entry records
	// it where the backend writes one in the same write.
	Door model.Door
}

// Outcome is how a holder ends or parks its claim.
type Outcome struct {
	// State is StateDone (complete), StateBlocked, StateReview,
	// StateCanceled or StateFailed.
	State         model.State
	Reason        string
	UnblockAction string
	NextCheckAt   time.Time
	Artifacts     string
	// Writer is who the caller is (model.WriterName), recorded in the
	// trail: whoever holds the token may write, so the trail names the
	// caller, not the claim's holder. Empty means the holder itself.
	Writer string
	// Door is where the request came in; the trail entry of the step
	// records it where the backend writes one in the same write.
	Door model.Door
}

// By is who the trail records the outcome as, given the claim's holder
// (model.TokenWriter): the writer, else the holder the token names.
func (o Outcome) By(holder string) string { return model.TokenWriter(o.Writer, holder) }

// Event is the trail's entry of the outcome at at, ending holder's claim:
// who (By), the step (model.FinishStep), the reason and the door. Every
// backend that writes one in the finish's own write writes this.
func (o Outcome) Event(holder string, at time.Time) model.Event {
	return model.Event{At: at, Actor: o.By(holder), Action: model.FinishStep(o.State), Reason: o.Reason, Door: o.Door}
}

// Event is the trail's entry of this claim of was at at (model.ClaimEvent:
// a claim, or a rescue naming the dead holder), with the door.
func (c ClaimRequest) Event(was *model.Task, at time.Time) model.Event {
	e := model.ClaimEvent(was, c.Agent, c.RunID, at)
	e.Door = c.Door
	return e
}

// Human is who acts and on what they saw. A human action is applied only if
// the task's version is still Expect ("never trust the screen") or, when
// Seen is the task at that version, its claim is still the one seen, its
// lease's expiry included (CheckHuman, ClaimChanges): a heartbeat since
// refuses, "renewed since you looked".
type Human struct {
	Actor string
	// Door is where the request came in; the trail records it.
	Door model.Door
	// Key is the SSH key a person at door ssh was known by (SHA256:…):
	// the trail's detail names it (HumanDetail).
	Key    string
	Reason string
	Expect string
	// Seen is the task as the person saw it; nil holds the action to the
	// exact version (a rescue: a heartbeat proves the holder alive).
	Seen *model.Task
}

// Handoff hands a task to another agent. A human hand-off is conditional on
// Expect; an agent handing off its own task names its lock Token instead.
type Handoff struct {
	Human
	Token    string
	To       string        // agent name or model.AnyAgent
	For      time.Duration // how long the reservation holds; zero = default
	Priority string        // seed 001: normal, urgent, critical
}

// Lost is the LOST_LOCK error every backend returns for a stale token.
func Lost(op, id string) error {
	return model.Errorf(model.CodeLostLock, op, id, "the lock token is no longer current (released, taken over or expired)")
}

// NotFound is the error for a task id the backend does not have: an answer
// to act on (fix the id), not a fault to retry, hence MISCONFIGURED.
func NotFound(op, id string) error {
	return model.Errorf(model.CodeMisconfigured, op, id, "%w: check the id (claimdeck list shows them)", model.ErrNoSuchTask)
}

// Note is one comment on a task.
type Note struct {
	Author string
	Text   string
}

// Edit changes a task's descriptive fields; nil leaves a field alone and
// StateUnknown leaves the state alone. A task under a live claim can only be
// edited by its holder, naming the lock Token.
type Edit struct {
	Actor    string     // who edits, for the backend's trail
	Door     model.Door // where the request came in, for the trail
	Token    string
	Title    *string
	Priority *int
	Class    *model.Class
	State    model.State
	Reason   string
	// Expect, when set, makes the edit conditional on the version the
	// caller saw: CONFLICT, carrying the task as it is now, otherwise.
	Expect string
	// Move, when set, is a lock-free lifecycle transition (approve, rework,
	// unblock) checked with model.CheckMove in the same write; build it
	// with MoveEdit so that State is the move's target.
	Move model.Move
}

// MoveEdit is the edit that applies move m as h: conditional on the version
// h saw when h.Expect is set, recorded in the trail under the move's name
// with h's reason.
func MoveEdit(m model.Move, h Human) Edit {
	return Edit{Actor: h.Actor, Door: h.Door, Reason: h.Reason, Expect: h.Expect, Move: m, State: m.To()}
}

// Action is the name the backend's trail records the edit under: the
// move's, or "update".
func (e Edit) Action() string {
	if e.Move != model.MoveNone {
		return e.Move.String()
	}
	return "update"
}

// Empty reports whether the edit changes nothing.
func (e Edit) Empty() bool {
	return e.Title == nil && e.Priority == nil && e.Class == nil && e.State == model.StateUnknown
}

// CheckEdit says whether e may be applied to t at now. States move only
// between queued, blocked, review and the final states: a claim goes through
// Claim and ends through Finish, so the lease fields stay the protocol's.
func CheckEdit(t *model.Task, e Edit, now time.Time) error {
	op := e.Action()
	if e.Expect != "" && t.Version != e.Expect {
		err := model.Errorf(model.CodeConflict, op, t.ID, "the task changed since it was read (version %s, now %s): nothing was done", e.Expect, t.Version)
		err.Current = t
		return err
	}
	if e.Move != model.MoveNone {
		if e.State != e.Move.To() || e.Title != nil || e.Priority != nil || e.Class != nil || e.Token != "" {
			return model.Errorf(model.CodeMisconfigured, op, t.ID, "a move changes the state alone, to %s (build it with MoveEdit)", e.Move.To())
		}
		if strings.TrimSpace(e.Actor) == "" {
			return model.Errorf(model.CodeMisconfigured, op, t.ID, "no actor")
		}
		if t.More().Problem != "" {
			err := model.Errorf(model.CodeConflict, op, t.ID, "the task was read from bad data (%s); repair it by hand", t.More().Problem)
			err.Current = t
			return err
		}
		return model.CheckMove(t, e.Move, e.Reason)
	}
	if e.Empty() {
		return model.Errorf(model.CodeMisconfigured, op, t.ID, "nothing to update: give --title, --priority, --class or --status")
	}
	if strings.TrimSpace(e.Actor) == "" {
		return model.Errorf(model.CodeMisconfigured, op, t.ID, "no actor")
	}
	if e.Title != nil && strings.TrimSpace(*e.Title) == "" {
		return model.Errorf(model.CodeMisconfigured, op, t.ID, "the title cannot be empty")
	}
	if err := model.CheckStatusEdit(t, e.State); err != nil {
		return err
	}
	c := t.Claim()
	held := c.Holder == model.HolderHuman ||
		(c.Holder == model.HolderAgent && !c.Expires.IsZero() && now.Before(c.Expires.Time()))
	switch {
	case held && e.Token == "":
		return model.Errorf(model.CodeConflict, op, t.ID,
			"the task is claimed by %s: only its holder may update it (give --lock-token)", c.Name)
	case e.Token != "" && !model.TokenCurrent(t, e.Token, now):
		return Lost(op, t.ID)
	case held && e.State != model.StateUnknown:
		return model.Errorf(model.CodeMisconfigured, op, t.ID,
			"the task is claimed: end the claim with complete, block, review or cancel instead of --status")
	}
	return nil
}

// EditApplied reports whether t already shows every change e makes: after
// a write whose answer was lost, the edit landed and must not be sent again.
func EditApplied(t *model.Task, e Edit) bool {
	return !e.Empty() &&
		(e.Title == nil || t.Title == *e.Title) &&
		(e.Priority == nil || t.Priority == *e.Priority) &&
		(e.Class == nil || t.Class == *e.Class) &&
		(e.State == model.StateUnknown || t.State == e.State)
}

// EditDetail says what an edit changes, for the backend's trail.
func EditDetail(e Edit) string {
	var parts []string
	if e.Title != nil {
		parts = append(parts, fmt.Sprintf("title %q", *e.Title))
	}
	if e.Priority != nil {
		parts = append(parts, fmt.Sprintf("priority %d", *e.Priority))
	}
	if e.Class != nil {
		parts = append(parts, "class "+e.Class.String())
	}
	if e.State != model.StateUnknown {
		parts = append(parts, "state "+e.State.String())
	}
	return strings.Join(parts, ", ")
}
