package lockdir

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// historyBatch is how many unread archived files are read at a time: by
// Archive before it checks whether the newest q.Limit answers are settled,
// and by each poll that classifies history.
const historyBatch = 256

// classify reads up to historyBatch history files nobody has read yet,
// newest first. A final one stays history, out of the queue, its task
// dropped; a parked (review, blocked) or broken one is live work the
// seed's cleanup archived, and becomes a task again, with a generation of
// its own so incremental polls return it. With nothing left it reads
// nothing.
func (s *Source) classify(horizon time.Time) {
	v := &s.view
	if !v.sorted {
		slices.SortFunc(v.unclassified, func(a, b *seenFile) int { return cmp.Compare(a.sig.mtime, b.sig.mtime) })
		v.sorted = true
	}
	batch := make([]*seenFile, 0, min(len(v.unclassified), historyBatch))
	for n := len(v.unclassified); n > 0 && len(batch) < historyBatch; n-- {
		f := v.unclassified[n-1]
		v.unclassified[n-1] = nil
		v.unclassified = v.unclassified[:n-1]
		if v.history[f.id] == f && f.fs == nil {
			batch = append(batch, f)
		}
	}
	if len(v.unclassified) == 0 {
		v.unclassified = nil
	}
	read := make([]*fileState, len(batch))
	parallel(len(batch), func(i int) {
		f := batch[i]
		read[i] = readFile(s.path(f.id, f.kind), f.kind, nil)
	})
	live := map[string]struct{}{}
	for i, f := range batch {
		fs := read[i]
		if fs == nil { // vanished since its lstat: settle it as gone
			delete(v.archive.files, f.id+f.kind.suffix())
			live[f.id] = struct{}{}
			continue
		}
		f.sig = fs.sig
		var files [numKinds]*fileState
		files[f.kind] = fs
		if t := s.assemble(f.id, &files, v.entries[f.id]); t.State.Final() && t.More().Problem == "" {
			continue // history: out of the queue, never read here again
		}
		f.fs = fs
		live[f.id] = struct{}{}
	}
	s.settle(live, horizon)
}

// unreadTask is a history task Archive may have to read: its one archived
// file and its entry.
type unreadTask struct {
	id    string
	kind  kind
	at    model.Stamp // its file's mtime: the task's EditedAt once it is read
	entry *taskEntry
}

// Archive answers from the tasks the view holds and the history it left
// unread. An unread task's time is its file's mtime, so the unread are read
// newest first, and only until no older one could still be among the
// newest q.Limit answers.
func (s *Source) Archive(ctx context.Context, q sources.ArchiveQuery) ([]*model.Task, error) {
	if err := q.Check(); err != nil {
		return nil, err
	}
	if err := s.readGuard(ctx, "archive", "", false); err != nil {
		return nil, err
	}
	s.scanMu.Lock()
	if err := s.scan(time.Now(), keepHistory); err != nil {
		s.scanMu.Unlock()
		return nil, err
	}
	var found []*model.Task
	for _, tr := range s.view.tasks {
		if q.Matches(tr.task) {
			found = append(found, tr.task)
		}
	}
	var unread []unreadTask
	for id, f := range s.view.history {
		if at := model.StampOf(time.Unix(0, f.sig.mtime)); at.Time().Before(q.Before) {
			unread = append(unread, unreadTask{id: id, kind: f.kind, at: at, entry: s.view.entries[id]})
		}
	}
	s.scanMu.Unlock()

	slices.SortFunc(unread, func(a, b unreadTask) int {
		if c := cmp.Compare(b.at, a.at); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	limit := q.Limit
	if limit == 0 {
		limit = sources.DefaultArchiveLimit
	}
	for len(unread) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, sources.StorageErr("archive", "", err)
		}
		// Only the newest limit answers can still be returned.
		if found, _ = sources.ArchiveOf(found, q); len(found) == limit && after(unread[0], found[limit-1]) {
			break
		}
		batch := unread[:min(len(unread), historyBatch)]
		unread = unread[len(batch):]
		read := make([]*model.Task, len(batch))
		parallel(len(batch), func(i int) {
			u := batch[i]
			var files [numKinds]*fileState
			if files[u.kind] = readFile(s.path(u.id, u.kind), u.kind, nil); files[u.kind] != nil {
				read[i] = s.assemble(u.id, &files, u.entry)
			}
		})
		for _, t := range read {
			if t != nil && q.Matches(t) {
				found = append(found, t)
			}
		}
	}
	return sources.ArchiveOf(found, q)
}

// after says whether an unread task sorts after t in ArchiveOf's order
// (newest first, then by id), and so does every unread task after it.
func after(u unreadTask, t *model.Task) bool {
	return u.at < t.EditedAt || (u.at == t.EditedAt && u.id > t.ID)
}
