package sources

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

// OpenByName opens a configured source by its name; Follow calls it with
// the target a moved source names.
type OpenByName func(ctx context.Context, name string) (Source, error)

// Follow serves src's calls from wherever its queue was moved: a call that
// src answers with Moved is made again on the target, opened by open, and
// every later call goes there — with no restart and no change of
// configuration. Moves in a row are followed, a few at most. A source
// that cannot be moved (not Movable) is returned as it is.
//
// A target open cannot open (not configured here) is answered
// MISCONFIGURED, naming it and how to add it.
func Follow(src Source, open OpenByName) Source {
	if _, ok := src.(Movable); !ok || open == nil {
		return src
	}
	return &following{origin: src, cur: src, open: open}
}

// Origin is the source Follow was given, or s itself: the commands that
// work on one store (move, copy, migrate, doctor) act on the origin.
func Origin(s Source) Source {
	if f, ok := s.(*following); ok {
		return f.origin
	}
	return s
}

// mostHops bounds the moves Follow follows in a row (a cycle, or a chain
// of forgotten moves, ends with the last answer).
const mostHops = 4

type following struct {
	origin Source
	open   OpenByName

	mu   sync.Mutex
	cur  Source
	hops int      // moves followed so far
	also []Source // the sources passed through, closed with this one
}

var (
	_ Source  = (*following)(nil)
	_ Watcher = (*following)(nil)
)

func (f *following) current() (Source, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cur, f.hops
}

// follow moves on from was (which answered moved to to), unless another
// call did already.
func (f *following) follow(ctx context.Context, was Source, to string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cur != was {
		return nil
	}
	if f.hops >= mostHops {
		return model.Errorf(model.CodeMisconfigured, "", "", "source %s was moved %d times in a row (last to %s): name the source that serves now with --source", f.origin.Name(), f.hops, to)
	}
	next, err := f.open(ctx, to)
	if err != nil {
		if model.CodeOf(err) == model.CodeAPIError {
			return err // the target is there but did not answer: worth a retry
		}
		return model.Errorf(model.CodeMisconfigured, "", "", "source %s was moved to %s, which this configuration cannot open (%v): "+
			"add a source named %s to the configuration, the same entry as where the move was run (claimdeck config shows it)", was.Name(), to, err, to)
	}
	// open may hand back a source of its own Follow: this one follows
	// what comes next, and closing the source closes all Follow holds.
	f.also = append(f.also, f.cur)
	f.cur, f.hops = Origin(next), f.hops+1
	return nil
}

// call runs fn on the source that serves now, following a move it answers.
func call[T any](f *following, ctx context.Context, fn func(s Source) (T, error)) (T, error) {
	for {
		s, _ := f.current()
		v, err := fn(s)
		to, moved := MovedTo(err)
		if !moved && refusal(err) {
			// An answer of the store as it was when it moved (a token the
			// target issued since is unknown there): ask the marker.
			to, moved = movedSince(ctx, s)
		}
		if !moved || ReadsPastMark(ctx) {
			return v, err
		}
		if ferr := f.follow(ctx, s, to); ferr != nil {
			var zero T
			return zero, ferr
		}
		if cur, _ := f.current(); cur == s {
			return v, err
		}
	}
}

func (f *following) Name() string {
	s, _ := f.current()
	return s.Name()
}

func (f *following) Caps() Caps {
	s, _ := f.current()
	return s.Caps()
}

// movedCursor marks a cursor of the source serving after hops moves; a
// cursor of another one reads the whole queue again.
func movedCursor(hops int) string { return "moved" + strconv.Itoa(hops) + ":" }

func (f *following) Poll(ctx context.Context, since Cursor, opt ...PollOption) (Delta, error) {
	return call(f, ctx, func(s Source) (Delta, error) {
		_, hops := f.current()
		c := since
		if hops > 0 {
			rest, ok := strings.CutPrefix(string(since), movedCursor(hops))
			c = Cursor(rest)
			if !ok {
				c = ""
			}
		}
		d, err := s.Poll(ctx, c, opt...)
		if err == nil && hops > 0 && d.Cursor != "" {
			d.Cursor = Cursor(movedCursor(hops)) + d.Cursor
		}
		return d, err
	})
}

func (f *following) Archive(ctx context.Context, q ArchiveQuery) ([]*model.Task, error) {
	return call(f, ctx, func(s Source) ([]*model.Task, error) { return s.Archive(ctx, q) })
}

func (f *following) Get(ctx context.Context, id string) (*model.Task, error) {
	return call(f, ctx, func(s Source) (*model.Task, error) { return s.Get(ctx, id) })
}

func (f *following) Create(ctx context.Context, n NewTask) (*model.Task, error) {
	return call(f, ctx, func(s Source) (*model.Task, error) { return s.Create(ctx, n) })
}

func (f *following) Next(ctx context.Context, agent string) (*model.Task, error) {
	return call(f, ctx, func(s Source) (*model.Task, error) { return s.Next(ctx, agent) })
}

func (f *following) Claim(ctx context.Context, id string, c ClaimRequest) (*model.Task, error) {
	return call(f, ctx, func(s Source) (*model.Task, error) { return s.Claim(ctx, id, c) })
}

func (f *following) ClaimNext(ctx context.Context, c ClaimRequest) (*model.Task, error) {
	return call(f, ctx, func(s Source) (*model.Task, error) { return s.ClaimNext(ctx, c) })
}

func (f *following) Heartbeat(ctx context.Context, id, token string, lease time.Duration) (*model.Task, error) {
	return call(f, ctx, func(s Source) (*model.Task, error) { return s.Heartbeat(ctx, id, token, lease) })
}

func (f *following) Finish(ctx context.Context, id, token string, o Outcome) (*model.Task, error) {
	return call(f, ctx, func(s Source) (*model.Task, error) { return s.Finish(ctx, id, token, o) })
}

func (f *following) Takeover(ctx context.Context, id string, h Human) (*model.Task, error) {
	return call(f, ctx, func(s Source) (*model.Task, error) { return s.Takeover(ctx, id, h) })
}

func (f *following) ForceRelease(ctx context.Context, id string, h Human) (*model.Task, error) {
	return call(f, ctx, func(s Source) (*model.Task, error) { return s.ForceRelease(ctx, id, h) })
}

func (f *following) Cancel(ctx context.Context, id string, h Human) (*model.Task, error) {
	return call(f, ctx, func(s Source) (*model.Task, error) { return s.Cancel(ctx, id, h) })
}

func (f *following) Handoff(ctx context.Context, id string, h Handoff) (*model.Task, error) {
	return call(f, ctx, func(s Source) (*model.Task, error) { return s.Handoff(ctx, id, h) })
}

func (f *following) Comment(ctx context.Context, id string, n Note) error {
	_, err := call(f, ctx, func(s Source) (struct{}, error) { return struct{}{}, s.Comment(ctx, id, n) })
	return err
}

func (f *following) Update(ctx context.Context, id string, e Edit) (*model.Task, error) {
	return call(f, ctx, func(s Source) (*model.Task, error) { return s.Update(ctx, id, e) })
}

func (f *following) MarkEscalation(ctx context.Context, id, token string, level model.Level) error {
	_, err := call(f, ctx, func(s Source) (struct{}, error) { return struct{}{}, s.MarkEscalation(ctx, id, token, level) })
	return err
}

func (f *following) CheckWrite(ctx context.Context) error {
	_, err := call(f, ctx, func(s Source) (struct{}, error) { return struct{}{}, s.CheckWrite(ctx) })
	return err
}

// Watch watches the source serving now; after a move the watcher's
// polls find the move and follow it, and the poll timer carries on.
func (f *following) Watch(ctx context.Context) (<-chan struct{}, error) {
	s, _ := f.current()
	w, ok := s.(Watcher)
	if !ok {
		return nil, model.Errorf(model.CodeMisconfigured, "watch", "", "source %s pushes no changes", s.Name())
	}
	return w.Watch(ctx)
}

func (f *following) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	err := f.cur.Close()
	for _, s := range f.also {
		if s != f.cur {
			s.Close()
		}
	}
	f.also = nil
	return err
}

// refusal reports an answer that a moved store could give for the queue it
// held instead of the one that serves now.
func refusal(err error) bool {
	switch model.CodeOf(err) {
	case model.CodeConflict, model.CodeLostLock, model.CodeMisconfigured, model.CodeIncompleteSubtasks:
		return true
	}
	return false
}

// movedSince reads s's marker: where it moved to, if it did.
func movedSince(ctx context.Context, s Source) (string, bool) {
	m, ok := s.(Movable)
	if !ok {
		return "", false
	}
	mark, err := m.MoveMark(ctx)
	if err != nil || mark.State != MoveDone {
		return "", false
	}
	return mark.To, true
}

var _ Importer = (*following)(nil)

// ImportAll imports into the source serving now: only sources that can
// move are followed, and each of them imports.
func (f *following) ImportAll(ctx context.Context, ts []*model.Task, done func(n int)) error {
	_, err := call(f, ctx, func(s Source) (struct{}, error) {
		imp, ok := s.(Importer)
		if !ok {
			return struct{}{}, model.Errorf(model.CodeMisconfigured, "copy", "", "source %s cannot take a copied queue: %s", s.Name(), cannotImport(s))
		}
		return struct{}{}, imp.ImportAll(ctx, ts, done)
	})
	return err
}

// TrailSince reads the trail of the store now serving the queue
// (TrailReader); one that cannot answers ErrNoTrailRead.
func (f *following) TrailSince(ctx context.Context, since time.Time, limit int) ([]TrailEntry, error) {
	return call(f, ctx, func(s Source) ([]TrailEntry, error) {
		tr, ok := s.(TrailReader)
		if !ok {
			return nil, NoTrailRead(s.Name(), "this kind of source keeps no trail to read across tasks")
		}
		return tr.TrailSince(ctx, since, limit)
	})
}

// Record keeps a refused attempt in the trail of the store now serving
// the queue (Trail): a moved queue's refusals go where its tasks are.
func (f *following) Record(ctx context.Context, id string, e model.Event) error {
	_, err := call(f, ctx, func(s Source) (struct{}, error) {
		tr, ok := s.(Trail)
		if !ok {
			return struct{}{}, model.Errorf(model.CodeMisconfigured, "record", id, "source %s keeps no shared trail", s.Name())
		}
		return struct{}{}, tr.Record(ctx, id, e)
	})
	return err
}
