package sources

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

// A move hands a live queue to another source: the origin is frozen (every
// write refused with a retryable answer), every task is copied with its
// claim and history, and the origin is marked as moved, naming the target.
// From then on a source opened through Follow serves each call of the
// origin from the target.

// MoveState is where an origin stands in a move.
type MoveState uint8

// The states of a move marker.
const (
	MoveNone   MoveState = iota // no move: the source serves
	MoveFrozen                  // a move is under way: writes are refused, to be retried
	MoveDone                    // moved: the target serves
)

func (m MoveState) String() string {
	switch m {
	case MoveFrozen:
		return "frozen"
	case MoveDone:
		return "moved"
	}
	return "none"
}

// ParseMoveState reads a state as String writes it; the marker stores it.
func ParseMoveState(s string) (MoveState, error) {
	switch s {
	case "frozen":
		return MoveFrozen, nil
	case "moved":
		return MoveDone, nil
	case "none", "":
		return MoveNone, nil
	}
	return MoveNone, fmt.Errorf("move state %q: want frozen or moved", s)
}

// MoveMark is the durable marker a move leaves in its origin's store.
type MoveMark struct {
	State MoveState
	To    string // the target's configured source name
	At    time.Time
}

// Movable is implemented by sources that can be the origin of a move: their
// store keeps a marker that every write checks in the same step as it
// writes, so that no write lands once Freeze has returned.
type Movable interface {
	// MoveMark reads the marker, fresh from the store.
	MoveMark(ctx context.Context) (MoveMark, error)
	// Freeze marks the store frozen for a move to to. Once it returns,
	// writes already under way have landed and every later one is refused
	// with Frozen. Freezing again for the same target is no change; a
	// store frozen or moved towards another target is CONFLICT.
	Freeze(ctx context.Context, to string) error
	// MarkMoved turns the freeze towards to into the moved marker: every
	// later call is refused with Moved, which Follow turns into a call of
	// the target.
	MarkMoved(ctx context.Context, to string) error
	// Thaw removes the marker: the store serves again.
	Thaw(ctx context.Context) error
}

// ErrFrozen is the cause of the answer to a write on a frozen source.
var ErrFrozen = errors.New("the source is frozen for a move")

// MovedError is the cause of the answer to a call on a moved source.
type MovedError struct{ From, To string }

func (e *MovedError) Error() string { return "moved to " + e.To }

// Frozen is the answer to a write on a source frozen for a move to to:
// API_ERROR, which agents retry (ntask exit 30), never MISCONFIGURED.
func Frozen(op, id, from, to string) error {
	return model.Errorf(model.CodeAPIError, op, id, "source %s is frozen while its queue moves to %s: nothing was written; try again in a few seconds (%w)", from, to, ErrFrozen)
}

// Moved is the answer to a call on a source moved to to. Follow serves the
// call from the target instead; a caller without Follow gets API_ERROR, so
// an agent retries rather than dropping its claim.
func Moved(op, id, from, to string) error {
	return model.Errorf(model.CodeAPIError, op, id, "source %s was moved to %s: nothing was done here (%w)", from, to, &MovedError{From: from, To: to})
}

// MarkAnswer is the answer a write gets under mark, or nil without one.
func MarkAnswer(op, id, from string, m MoveMark) error {
	switch m.State {
	case MoveFrozen:
		return Frozen(op, id, from, m.To)
	case MoveDone:
		return Moved(op, id, from, m.To)
	}
	return nil
}

// MovedTo says where err says the source moved to.
func MovedTo(err error) (string, bool) {
	var m *MovedError
	if errors.As(err, &m) {
		return m.To, true
	}
	return "", false
}

// Target is the source a move writes into, by its configured name: Open
// opens it, and with prepare makes its store where there is none (the
// SQLite file, the PostgreSQL table with claimdeck's columns, the lock
// directory). A store that is not there answers an error wrapping
// ErrNotMade when prepare is false.
type Target struct {
	Name string
	Open func(ctx context.Context, prepare bool) (Source, error)
}

// ErrNotMade is the cause of the error a source opened without creating
// answers when its store does not exist yet.
var ErrNotMade = errors.New("the store does not exist yet")

// MoveOptions say how Move runs.
type MoveOptions struct {
	// DryRun reads both sides and says what would move; it writes nothing,
	// not even the target's store.
	DryRun   bool
	Progress Progress
}

// MoveReport is what a move did, or would do.
type MoveReport struct {
	From, To string
	DryRun   bool
	// Prepare is true when the target's store had to be made (or would
	// be, on a dry run).
	Prepare bool
	// Tasks are the tasks copied (or to copy), in id order.
	Tasks []*model.Task
	// Already are the ids the target held as the origin does: a move cut
	// short wrote them, so they were not written again.
	Already []string
	// Resumed is true when the origin was already frozen for this move.
	Resumed bool
	// Frozen is how long writes were refused: from the freeze to the mark.
	Frozen time.Duration
}

// Move moves the queue of from into to: it freezes from, copies every task
// with its claim, lock token, lease and history (a task to already holds
// as from does is left alone; one it holds otherwise is CONFLICT, naming
// it, and nothing is copied), and marks from as moved to to. A failure
// before the copy landed thaws from again, so agents go on there; once the
// copy landed, from stays frozen until a move run again marks it. A
// source already moved is refused; so is one frozen for another target,
// a target that is frozen or moved itself, and a target that cannot take
// tasks with their claims.
func Move(ctx context.Context, from Source, to Target, opt MoveOptions) (MoveReport, error) {
	const op = "move"
	from = Origin(from)
	rep := MoveReport{From: from.Name(), To: to.Name, DryRun: opt.DryRun}
	if to.Name == "" || to.Name == from.Name() {
		return rep, model.Errorf(model.CodeMisconfigured, op, "", "give two different sources: --from SOURCE --to SOURCE")
	}
	mv, ok := from.(Movable)
	if !ok {
		return rep, model.Errorf(model.CodeMisconfigured, op, "", "source %s cannot be frozen (its store has no conditional writes to hold a marker), so a move could do work twice: "+
			"stop its agents, claimdeck copy --from %s --to %s, then point them at %s", from.Name(), from.Name(), to.Name, to.Name)
	}
	mark, err := mv.MoveMark(ctx)
	if err != nil {
		return rep, err
	}
	switch {
	case mark.State == MoveDone:
		return rep, model.Errorf(model.CodeConflict, op, "", "source %s was already moved to %s (%s): nothing was done", from.Name(), mark.To, mark.At.UTC().Format(time.RFC3339))
	case mark.State == MoveFrozen && mark.To != to.Name:
		return rep, model.Errorf(model.CodeConflict, op, "", "source %s is frozen for a move to %s that did not finish: finish it (--to %s) or undo it first; nothing was done", from.Name(), mark.To, mark.To)
	}
	rep.Resumed = mark.State == MoveFrozen

	dst, err := to.Open(ctx, false)
	if errors.Is(err, ErrNotMade) {
		rep.Prepare = true
		if opt.DryRun {
			all, err := readAll(ctx, op, from, opt.Progress)
			rep.Tasks = all
			return rep, err
		}
	}
	if err == nil && !opt.DryRun {
		// Open the target as the move writes it: made where it is missing,
		// a team's table given claimdeck's columns.
		dst.Close()
		dst, err = nil, ErrNotMade
	}
	if errors.Is(err, ErrNotMade) && !opt.DryRun {
		dst, err = to.Open(ctx, true)
	}
	if err != nil {
		return rep, err
	}
	defer dst.Close()
	dst = Origin(dst)
	if err := moveTarget(ctx, op, from, dst); err != nil {
		return rep, err
	}
	if opt.DryRun {
		plan, err := planCopy(ctx, op, from, dst, true, opt.Progress)
		rep.Tasks, rep.Already = plan.Tasks, plan.Already
		return rep, err
	}

	if err := mv.Freeze(ctx, to.Name); err != nil {
		return rep, err
	}
	frozen := time.Now()
	thaw := func(err error) error {
		if terr := mv.Thaw(context.WithoutCancel(ctx)); terr != nil {
			return fmt.Errorf("%w; thawing %s failed too (%v): it stays frozen until the move is run again or undone", err, from.Name(), terr)
		}
		return model.Errorf(model.CodeOf(err), op, "", "nothing was moved and %s serves again: %v", from.Name(), err)
	}
	plan, err := planCopy(ctx, op, from, dst, true, opt.Progress)
	rep.Tasks, rep.Already = plan.Tasks, plan.Already
	if err != nil {
		return rep, thaw(err)
	}
	if _, err := plan.Apply(ctx, dst, opt.Progress); err != nil {
		return rep, thaw(err)
	}
	if err := mv.MarkMoved(context.WithoutCancel(ctx), to.Name); err != nil {
		return rep, model.Errorf(model.CodeOf(err), op, "", "every task was copied into %s, but marking %s as moved failed: %v; %s stays frozen: run the move again to finish it", to.Name, from.Name(), err, from.Name())
	}
	rep.Frozen = time.Since(frozen)
	return rep, nil
}

// moveTarget refuses, before anything is frozen, a target that cannot
// import, and one that is frozen or moved itself: its own agents would be
// sent on, or its copy would be lost.
func moveTarget(ctx context.Context, op string, from, dst Source) error {
	if _, ok := dst.(Importer); !ok {
		return model.Errorf(model.CodeMisconfigured, op, "", "source %s cannot take a moved queue: %s", dst.Name(), cannotImport(dst))
	}
	m, ok := dst.(Movable)
	if !ok {
		return nil
	}
	mark, err := m.MoveMark(ctx)
	if err != nil || mark.State == MoveNone {
		return err
	}
	if mark.State == MoveDone && mark.To == from.Name() {
		return model.Errorf(model.CodeConflict, op, "", "source %s was moved to %s: it holds the tasks as they were then, so moving back into it would clash with them; undo that move instead (claimdeck move --undo --from %s --to %s) or move into a fresh source", dst.Name(), from.Name(), dst.Name(), from.Name())
	}
	return model.Errorf(model.CodeConflict, op, "", "source %s is %s (towards %s): it cannot take a move; nothing was done", dst.Name(), mark.State, mark.To)
}

// Undo takes back the move of from into to. A move that did not finish
// (from frozen) thaws from: its agents go on there. A finished move is
// taken back only while to still holds every task exactly as the move
// left it — to is frozen while that is checked — so that no work done in
// to since is lost; otherwise it is CONFLICT naming what changed, and to
// goes on serving. Once taken back, from serves and to is marked as moved
// to from, so that whoever followed the move comes back; to keeps its
// copy, and a later move goes into another source (or to, emptied).
func Undo(ctx context.Context, from, to Source) error {
	const op = "undo move"
	from, to = Origin(from), Origin(to)
	mv, ok := from.(Movable)
	if !ok {
		return model.Errorf(model.CodeMisconfigured, op, "", "source %s is never moved: nothing to undo", from.Name())
	}
	mark, err := mv.MoveMark(ctx)
	if err != nil {
		return err
	}
	switch {
	case mark.State == MoveNone:
		return model.Errorf(model.CodeConflict, op, "", "source %s was not moved: nothing to undo", from.Name())
	case mark.To != to.Name():
		return model.Errorf(model.CodeConflict, op, "", "source %s was %s towards %s, not %s: name that one with --to", from.Name(), mark.State, mark.To, to.Name())
	case mark.State == MoveFrozen:
		return mv.Thaw(ctx)
	}
	tm, ok := to.(Movable)
	if !ok {
		return model.Errorf(model.CodeMisconfigured, op, "", "source %s cannot be frozen to check it: nothing was undone", to.Name())
	}
	if err := tm.Freeze(ctx, from.Name()); err != nil {
		return err
	}
	changed, err := changedSince(ctx, from, to)
	if err == nil && len(changed) > 0 {
		err = model.Errorf(model.CodeConflict, op, "", "%d task(s) changed in %s since the move (%s): undoing would lose that work; nothing was undone (move %s into a fresh source instead)", len(changed), to.Name(), idList(changed), to.Name())
	}
	if err == nil {
		err = mv.Thaw(ctx)
	}
	if err != nil {
		if terr := tm.Thaw(context.WithoutCancel(ctx)); terr != nil {
			return fmt.Errorf("%w; thawing %s failed too (%v)", err, to.Name(), terr)
		}
		return err
	}
	// The origin serves again; processes that followed the move to the
	// target (a dashboard, an MCP server) follow it back.
	return tm.MarkMoved(context.WithoutCancel(ctx), from.Name())
}

// changedSince lists the tasks of to that are not as the move left them:
// changed, with a lease run on, or new.
func changedSince(ctx context.Context, from, to Source) ([]string, error) {
	there, err := fullPoll(ctx, to)
	if err != nil {
		return nil, err
	}
	var changed []string
	for _, t := range there {
		full, err := to.Get(ctx, t.ID)
		if err != nil {
			return nil, err
		}
		was, err := from.Get(PastMark(ctx), t.ID)
		switch {
		case errors.Is(err, model.ErrNoSuchTask):
			changed = append(changed, t.ID)
		case err != nil:
			return nil, err
		case !sameCopy(was, full) || !sameLeaseEnd(was, full):
			changed = append(changed, t.ID)
		}
	}
	sort.Strings(changed)
	return changed, nil
}

// sameLeaseEnd says whether the target's lease end is the origin's as the
// copy wrote it (HoldUntil: the same, or rounded up to the target's
// resolution); a later one is a heartbeat since.
func sameLeaseEnd(was, there *model.Task) bool {
	w, t := was.Claim().Expires.Time(), there.Claim().Expires.Time()
	return !t.Before(w) && !t.After(HoldUntil(w, CoarsestTime))
}

type pastMark struct{}

// PastMark is ctx for reads that see a moved source's own tasks instead
// of being sent to its target: Undo compares them with the target's.
func PastMark(ctx context.Context) context.Context {
	return context.WithValue(ctx, pastMark{}, true)
}

// ReadsPastMark reports whether ctx came from PastMark.
func ReadsPastMark(ctx context.Context) bool {
	v, _ := ctx.Value(pastMark{}).(bool)
	return v
}

// readAll reads every task of s with its history, in id order.
func readAll(ctx context.Context, op string, s Source, progress Progress) ([]*model.Task, error) {
	all, err := fullPoll(ctx, s)
	if err != nil {
		return nil, err
	}
	out := make([]*model.Task, 0, len(all))
	for i, t := range all {
		if progress != nil {
			progress("reading", i, len(all))
		}
		if t.More().Problem != "" {
			return nil, model.Errorf(model.CodeMisconfigured, op, t.ID, "source %s: the task was read from bad data (%s): repair it first", s.Name(), t.More().Problem)
		}
		full, err := s.Get(ctx, t.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, full)
	}
	if progress != nil {
		progress("reading", len(all), len(all))
	}
	slices.SortFunc(out, func(a, b *model.Task) int { return compareIDs(a.ID, b.ID) })
	return out, nil
}

func compareIDs(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// NotMade marks e, a backend's answer to opening a store that does not
// exist yet, as ErrNotMade: a move's dry run says it would make it.
func NotMade(e *model.Error) error { return notMade{e} }

type notMade struct{ err *model.Error }

func (e notMade) Error() string { return e.err.Error() }

func (e notMade) Unwrap() error { return e.err }

func (e notMade) Is(target error) bool { return target == ErrNotMade }

// MarkEvery is how long a read trusts the last look at a move marker:
// a read a second late sees the moved queue as it was when it moved.
// Writes never trust it: the store checks the marker in the write itself.
const MarkEvery = time.Second

// MarkCache is a store's move marker as last read, for its reads.
type MarkCache struct {
	mu   sync.Mutex
	seen MoveMark
	at   time.Time
}

// Note keeps m as the marker read now.
func (c *MarkCache) Note(m MoveMark) {
	c.mu.Lock()
	c.seen, c.at = m, time.Now()
	c.mu.Unlock()
}

// ReadGuard is the answer to a read of from, a store that read marks
// with: Moved once it was moved (a frozen store is read as it stands),
// nil otherwise or under PastMark. The marker is read again after
// MarkEvery, and every time when fresh (a write that matched no row,
// whose refusal must not come from a queue that moved on).
func (c *MarkCache) ReadGuard(ctx context.Context, op, id, from string, fresh bool, read func(ctx context.Context) (MoveMark, error)) error {
	if ReadsPastMark(ctx) {
		return nil
	}
	c.mu.Lock()
	m, at := c.seen, c.at
	c.mu.Unlock()
	if fresh || time.Since(at) >= MarkEvery {
		var err error
		if m, err = read(ctx); err != nil {
			return err
		}
	}
	if m.State == MoveDone {
		return Moved(op, id, from, m.To)
	}
	return nil
}
