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

// historyBatch is how many unread archived files Archive reads before it
// checks whether the newest q.Limit answers are settled.
const historyBatch = 256

// unreadTask is a history task Archive may have to read: its one archived
// file and its entry.
type unreadTask struct {
	id    string
	kind  kind
	mtime int64
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
	before := q.Before.UnixNano()
	var unread []unreadTask
	for id, f := range s.view.history {
		if f.sig.mtime < before {
			unread = append(unread, unreadTask{id: id, kind: f.kind, mtime: f.sig.mtime, entry: s.view.entries[id]})
		}
	}
	s.scanMu.Unlock()

	slices.SortFunc(unread, func(a, b unreadTask) int {
		if c := cmp.Compare(b.mtime, a.mtime); c != 0 {
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
	at := t.EditedAt.UnixNano()
	return u.mtime < at || (u.mtime == at && u.id > t.ID)
}
