package lockdir

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// A move's marker is the file .claimdeck.move in the lock directory,
// written and removed under the directory's write lock, which every
// claimdeck writer takes and then reads the marker under: no write of
// claimdeck's lands after the freeze. Seed 004's own scripts do not read
// it (they take no lock either): stop them before a move.

// moveName is the marker file.
const moveName = ".claimdeck.move"

var _ sources.Movable = (*Source)(nil)

type wireMove struct {
	State string    `json:"state"`
	To    string    `json:"to"`
	At    time.Time `json:"at"`
}

// readMark reads the marker file; none means no move.
func (s *Source) readMark() (sources.MoveMark, error) {
	var m sources.MoveMark
	data, err := os.ReadFile(filepath.Join(s.dir, moveName))
	if errors.Is(err, os.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return m, sources.StorageErr("move", "", err)
	}
	var w wireMove
	if err := json.Unmarshal(data, &w); err != nil {
		return m, model.Errorf(model.CodeMisconfigured, "move", "", "%s is not a move marker (%v): it was written by hand or cut short; remove it only if no move is under way", filepath.Join(s.dir, moveName), err)
	}
	st, err := sources.ParseMoveState(w.State)
	if err != nil || st == sources.MoveNone || w.To == "" {
		return m, model.Errorf(model.CodeMisconfigured, "move", "", "%s is not a move marker (state %q, to %q): remove it only if no move is under way", filepath.Join(s.dir, moveName), w.State, w.To)
	}
	m = sources.MoveMark{State: st, To: w.To, At: w.At}
	s.marks.Note(m)
	return m, nil
}

// writeMark replaces the marker (nil removes it), under the write lock.
func (s *Source) writeMark(m *sources.MoveMark) error {
	p := filepath.Join(s.dir, moveName)
	if m == nil {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return sources.StorageErr("thaw", "", err)
		}
		s.marks.Note(sources.MoveMark{})
		return syncDir(s.dir)
	}
	data, _ := json.Marshal(wireMove{State: m.State.String(), To: m.To, At: m.At.UTC()})
	tmp := filepath.Join(s.dir, tempPrefix+"move-"+randomHex(6))
	if err := os.WriteFile(tmp, data, s.fileMode|0o600); err != nil {
		return sources.StorageErr("move", "", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return sources.StorageErr("move", "", err)
	}
	s.marks.Note(*m)
	return syncDir(s.dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return sources.StorageErr("move", "", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return sources.StorageErr("move", "", err)
	}
	return nil
}

// writeGuard is the answer to a write under the directory's lock while a
// move is marked, or nil.
func (s *Source) writeGuard(op string) error {
	m, err := s.readMark()
	if err != nil {
		return err
	}
	return sources.MarkAnswer(op, "", s.cfg.Name, m)
}

// readGuard sends a read of a moved directory to its target.
func (s *Source) readGuard(ctx context.Context, op, id string, fresh bool) error {
	return s.marks.ReadGuard(ctx, op, id, s.cfg.Name, fresh, s.MoveMark)
}

// MoveMark reads the marker.
func (s *Source) MoveMark(ctx context.Context) (sources.MoveMark, error) { return s.readMark() }

// changeMark runs change on the marker under the directory's write lock.
func (s *Source) changeMark(ctx context.Context, op string, change func(m sources.MoveMark) (*sources.MoveMark, error)) error {
	unlock, err := s.lockUnguarded(ctx, op)
	if err != nil {
		return err
	}
	defer unlock()
	m, err := s.readMark()
	if err != nil {
		return err
	}
	next, err := change(m)
	if err != nil || next != nil && *next == m {
		return err
	}
	return s.writeMark(next)
}

// Freeze marks the directory frozen for a move to to.
func (s *Source) Freeze(ctx context.Context, to string) error {
	return s.changeMark(ctx, "freeze", func(m sources.MoveMark) (*sources.MoveMark, error) {
		switch {
		case m.State == sources.MoveFrozen && m.To == to:
			return &m, nil
		case m.State != sources.MoveNone:
			return nil, model.Errorf(model.CodeConflict, "freeze", "", "source %s is already %s (towards %s): nothing was done", s.cfg.Name, m.State, m.To)
		}
		return &sources.MoveMark{State: sources.MoveFrozen, To: to, At: time.Now()}, nil
	})
}

// MarkMoved turns the freeze towards to into the moved marker.
func (s *Source) MarkMoved(ctx context.Context, to string) error {
	return s.changeMark(ctx, "move", func(m sources.MoveMark) (*sources.MoveMark, error) {
		if m.State == sources.MoveNone || m.To != to {
			return nil, model.Errorf(model.CodeConflict, "move", "", "source %s is not frozen for a move to %s: nothing was marked", s.cfg.Name, to)
		}
		if m.State == sources.MoveDone {
			return &m, nil
		}
		return &sources.MoveMark{State: sources.MoveDone, To: to, At: time.Now()}, nil
	})
}

// Thaw removes the marker.
func (s *Source) Thaw(ctx context.Context) error {
	return s.changeMark(ctx, "thaw", func(m sources.MoveMark) (*sources.MoveMark, error) {
		if m.State == sources.MoveNone {
			return &m, nil
		}
		return nil, nil
	})
}
