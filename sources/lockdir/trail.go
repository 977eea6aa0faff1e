package lockdir

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"

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
