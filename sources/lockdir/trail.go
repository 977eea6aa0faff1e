package lockdir

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// trailSuffix names, in archive/, a task's trail of refused attempts:
// archive/{id}.claimdeck-trail.jsonl, one event a line, appended only by
// claimdeck. It lives beside the task's files, not in them, so a refused
// attempt never changes the task's version (a person's view stays good)
// and no agent's comment can push it out; the seed's scripts never write
// there (their globs are *.lock, *.done, *.failed).
const trailSuffix = ".claimdeck-trail.jsonl"

func (s *Source) trailPath(id string) string { return filepath.Join(s.archive, id+trailSuffix) }

// Record appends claimdeck's own entry — a refused attempt — to the task's
// trail file, which Get reads back into the task's history (sources.Trail).
// A file past maxFile starts again, its older half kept as .1.
func (s *Source) Record(ctx context.Context, id string, e model.Event) error {
	const op = "record"
	if err := sources.CheckEvent(op, id, e); err != nil {
		return err
	}
	if err := refuseID(op, id); err != nil {
		return err
	}
	if t, _, err := s.readTask(id); err != nil {
		return err
	} else if t == nil {
		return sources.NotFound(op, id)
	}
	if e.At.IsZero() {
		e.At = s.now()
	}
	line, err := json.Marshal(wireEvent{At: formatTime(e.At), Actor: e.Actor, Action: e.Action, Reason: e.Reason,
		Detail: e.Detail, Door: string(e.Door), Result: e.Result})
	if err != nil {
		return model.Wrap(model.CodeMisconfigured, op, id, err)
	}
	if err := s.appendTrail(id, append(line, '\n')); err != nil {
		return sources.StorageErr(op, id, err)
	}
	return nil
}

func (s *Source) appendTrail(id string, line []byte) error {
	dir, err := s.openArchive()
	if err != nil {
		return err
	}
	defer syscall.Close(dir)
	name := id + trailSuffix
	var st unix.Stat_t
	if unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Size+int64(len(line)) > maxFile {
		if err := unix.Renameat(dir, name, dir, name+".1"); err != nil {
			return err
		}
	}
	fd, err := unix.Openat(dir, name, unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(s.fileMode))
	if err != nil {
		return &os.PathError{Op: "open", Path: s.trailPath(id), Err: err}
	}
	_, err = unix.Write(fd, line) // one write: O_APPEND keeps lines whole between writers
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	return err
}

// trail reads a task's trail files back, oldest first; a line that does
// not parse is skipped (the file is claimdeck's, but the disk may not be).
func (s *Source) trail(id string) []model.Event {
	var out []model.Event
	for _, p := range []string{s.trailPath(id) + ".1", s.trailPath(id)} {
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxFile {
			continue
		}
		data, err := readSmall(p, fi.Size())
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 64<<10), maxFile)
		for sc.Scan() {
			var w wireEvent
			if json.Unmarshal(sc.Bytes(), &w) != nil || w.Action == "" {
				continue
			}
			at, _ := parseTime(w.At)
			out = append(out, model.Event{At: at, Actor: w.Actor, Action: w.Action, Reason: w.Reason, Detail: w.Detail,
				Door: model.Door(w.Door), Result: w.Result})
		}
	}
	return out
}

// TrailSince reads the directory's trail from since on, oldest first
// (sources.TrailReader): the history of every task a poll's scan reads
// (a stat of every file, a read of those changed since the last scan;
// tasks the seed's cleanup moved to archive/ are not read) and the
// refused attempts of every trail file written since. Its cost grows with
// the directory, not with the time asked for: a poll's, once per call.
func (s *Source) TrailSince(ctx context.Context, since time.Time, limit int) ([]sources.TrailEntry, error) {
	const op = "trail"
	if err := s.readGuard(ctx, op, "", false); err != nil {
		return nil, err
	}
	tasks, err := s.snapshot()
	if err != nil {
		return nil, err
	}
	var out []sources.TrailEntry
	keep := func(id string, evs []model.Event) {
		for _, e := range evs {
			if !e.At.Before(since) {
				out = append(out, sources.TrailEntry{Task: id, Event: e})
			}
		}
	}
	for _, t := range tasks {
		keep(t.ID, t.More().History)
	}
	names, err := filepath.Glob(filepath.Join(s.archive, "*"+trailSuffix+"*"))
	if err != nil {
		return nil, sources.StorageErr(op, "", err)
	}
	done := map[string]bool{}
	for _, p := range names {
		id, _, ok := strings.Cut(filepath.Base(p), trailSuffix)
		if !ok || done[id] || refuseID(op, id) != nil {
			continue
		}
		if fi, err := os.Lstat(p); err != nil || fi.ModTime().Before(since.Add(-trailClockSkew)) {
			continue
		}
		done[id] = true
		keep(id, s.trail(id))
	}
	return sources.SortTrail(out, limit), nil
}

// trailClockSkew is how far a trail file's modification time (the file
// server's clock) may lag the time in its last line (the writer's clock)
// before TrailSince skips the file as unchanged since.
const trailClockSkew = 10 * time.Minute
