package lockdir

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// view is the directory as last scanned: the files of the lock directory
// and of archive/ by name, with their stat signatures and what was read of
// them, and every task with the generation at which it last changed. A
// scan looks again only at the names the kernel says changed (notify.go),
// or lists and lstats everything where it cannot say, and reads a file
// only when its signature moved or the kernel named it.
//
// archive/ is read lazily. A task whose only file is an archived one older
// than the horizon the caller asked for is history: it is kept as its name
// and lstat (history), counted, and read only when a poll's window reaches
// it, Archive asks for it, or another file of the task appears. Polls read
// it in the background too, a batch each (classify), to find the parked
// and broken tasks among it.
type view struct {
	dir, archive  dirView
	tasks         map[string]*tracked
	removed       map[string]uint64    // task id → generation it disappeared at
	history       map[string]*seenFile // task id → its lone archived file, not held read
	historyNewest int64                // no file in history has a later mtime (Unix ns)
	// unclassified holds each history file that no classify batch has
	// read (and stale ones, skipped), oldest first once sorted: classify
	// takes from the end. A file enters it once, when it enters history; a
	// changed file is a new seenFile.
	unclassified []*seenFile
	sorted       bool
	// finished holds the tasks a scan for next or claim-next (keepHistory)
	// left unassembled: no lock and no queued file, a done or failed one,
	// which no content makes claimable, so the scan did not open it. The
	// next scan for anyone else reads and assembles them.
	finished   map[string]struct{}
	entries    map[string]*taskEntry
	entriesGen uint64 // the parse of the tasks file the tasks were assembled from
	gen        uint64
	changes    []change  // the task of each generation, oldest first
	scanned    time.Time // when the last scan started
}

// change is a generation and the task it changed: an incremental poll
// reads the tail past its cursor, so an idle one costs nothing per task.
type change struct {
	gen uint64
	id  string
}

// bump starts a generation for a task that changed or went.
func (v *view) bump(id string) uint64 {
	v.gen++
	v.changes = append(v.changes, change{v.gen, id})
	if n := len(v.changes); n > 1024 && n > 2*(len(v.tasks)+len(v.removed)) {
		v.compact()
	}
	return v.gen
}

// compact keeps each task's latest change only, in order: what an
// incremental poll from any cursor needs.
func (v *view) compact() {
	kept := v.changes[:0]
	for _, c := range v.changes {
		if tr := v.tasks[c.id]; (tr != nil && tr.gen == c.gen) || (tr == nil && v.removed[c.id] == c.gen) || c.gen == v.gen {
			kept = append(kept, c)
		}
	}
	clear(v.changes[len(kept):])
	v.changes = kept
}

// dirView is one directory's files as last seen.
type dirView struct {
	files map[string]*seenFile // by name: the names a task's file can have
	temps map[string]time.Time // temp files by name, with their mtime
	// relist asks the next scan to list the directory whole: it never has,
	// or a file had several links, and a write through a link in another
	// directory raises no event here.
	relist bool
}

// seenFile is one file of a task as last lstat'ed, and as read.
type seenFile struct {
	id   string
	kind kind
	sig  fileSig
	fs   *fileState // nil: an archived file left unread
}

// tracked is a task with what it was assembled from: the same file states
// (kept while their signatures hold) and the same entry mean the same task.
type tracked struct {
	task  *model.Task
	files [numKinds]*fileState
	entry string // the entry's version
	gen   uint64
}

func (v *view) init() {
	v.dir = dirView{files: map[string]*seenFile{}, temps: map[string]time.Time{}, relist: true}
	v.archive = dirView{files: map[string]*seenFile{}, temps: map[string]time.Time{}, relist: true}
	v.tasks = map[string]*tracked{}
	v.removed = map[string]uint64{}
	v.history = map[string]*seenFile{}
	v.finished = map[string]struct{}{}
}

// keepHistory is the horizon of a caller that needs no archived task read
// (claim-next: history is never claimable; Archive reads its own). Such a
// scan leaves the done and failed files of finished tasks unopened too
// (view.finished). The zero horizon is that of one that wants every task
// read.
var keepHistory = time.Unix(0, math.MaxInt64)

// entries returns the tasks file's entries as of now, and the count of
// parses they come from: the same count, the same entries.
func (s *Source) entries() (map[string]*taskEntry, uint64, error) {
	s.tasksMu.Lock()
	defer s.tasksMu.Unlock()
	if err := s.tasks.load(); err != nil {
		return nil, 0, err
	}
	return s.tasks.byID, s.tasks.gen, nil
}

// entry returns the tasks file's entry of id as of now (nil: none),
// reading no more of the file than it must (tasksFile.lookup).
func (s *Source) entry(id string) (*taskEntry, error) {
	s.tasksMu.Lock()
	defer s.tasksMu.Unlock()
	return s.tasks.lookup(id)
}

// notifier is the source's inotify queue, made on first use: before the
// first scan's listing, which reads the directory whole while anything
// that changes during it is queued. The caller holds scanMu.
func (s *Source) notifier() *notifier {
	if s.notify == nil {
		s.notify = newNotifier(s.dir)
	}
	return s.notify
}

// scan brings the view up to date for a caller that asked at `asked` and
// needs every task inside horizon read (zero: every task). It reuses a
// scan that started after the caller asked: under contention many callers
// share one look at the directory instead of queueing for their own. The
// caller holds scanMu.
func (s *Source) scan(asked, horizon time.Time) error {
	if !s.view.scanned.After(asked) {
		if err := s.rescan(horizon); err != nil {
			return err
		}
	}
	if horizon != keepHistory && len(s.view.finished) > 0 {
		s.settle(maps.Clone(s.view.finished), horizon) // left unread by a scan for next: read now
	}
	s.promote(horizon)
	return nil
}

func (s *Source) rescan(horizon time.Time) error {
	start := time.Now()
	byID, gen, err := s.entries()
	if err != nil {
		return err
	}
	v := &s.view
	news := s.notifier().drain()
	touched := map[string]struct{}{} // task ids
	err = s.refresh(&v.dir, s.dir, false, news.dirAll, news.dir, touched, horizon == keepHistory)
	if err == nil {
		if news.archiveAll || v.archive.relist {
			s.notify.watchArchive(s.archive)
		}
		err = s.refresh(&v.archive, s.archive, true, news.archiveAll, news.archive, touched, false)
	}
	if err != nil {
		// What the kernel said is spent: the next scan lists both.
		v.dir.relist, v.archive.relist = true, true
		return sources.StorageErr("poll", "", err)
	}
	s.removeStaleTemps()
	if v.entries == nil || gen != v.entriesGen {
		for id, e := range byID {
			if old := v.entries[id]; old == nil || old.version != e.version {
				touched[id] = struct{}{}
			}
		}
		for id := range v.entries {
			if byID[id] == nil {
				touched[id] = struct{}{}
			}
		}
		v.entries, v.entriesGen = byID, gen
	}
	s.settle(touched, horizon)
	v.scanned = start
	return nil
}

// candidate is a name a scan looks at: what the name says, the file as
// seen before (old) and now (now, nil when it is gone).
type candidate struct {
	name     string
	id       string
	kind     kind
	old, now *seenFile
}

// taskFile says which task file name is in the lock directory (archived:
// in archive/), if any. Held files count in the lock directory only.
func taskFile(name string, archived bool) (id string, k kind, ok bool) {
	kinds := []kind{kindLock, kindDone, kindFailed, kindQueued}
	if archived {
		kinds = []kind{kindArchivedDone, kindArchivedFailed}
	}
	for _, k := range kinds {
		if strings.HasSuffix(name, k.suffix()) {
			base, held := strings.CutPrefix(name, heldPrefix)
			id := strings.TrimSuffix(base, k.suffix())
			return id, k, id != "" && !strings.HasPrefix(base, ".") && (!held || !archived)
		}
	}
	return "", 0, false
}

// refresh brings one directory's files up to date and adds to touched the
// tasks whose files changed: every name after listing the directory whole
// (all, or a relist it asked for), else only the names the kernel
// reported. A name the kernel reported is read again whatever its
// signature says: a rewrite of the same size within one clock tick keeps
// it. Files in the lock directory are read at once; archived ones are left
// for settle to decide, and so, with finishedUnread (a scan for next or
// claim-next), are done and failed files under their own names.
func (s *Source) refresh(d *dirView, dir string, archived, all bool, named map[string]struct{}, touched map[string]struct{}, finishedUnread bool) error {
	var cands []candidate
	var temps []string
	add := func(name string) {
		if !archived && strings.HasPrefix(name, tempPrefix) {
			temps = append(temps, name)
		} else if id, k, ok := taskFile(name, archived); ok {
			cands = append(cands, candidate{name: name, id: id, kind: k, old: d.files[name]})
		}
	}
	whole := all || d.relist
	if whole {
		if err := eachName(dir, archived, add); err != nil && !(archived && os.IsNotExist(err)) {
			if archived {
				return s.archiveRefused("poll", err)
			}
			return err
		}
	} else {
		for name := range named {
			add(name)
		}
	}
	var linked atomic.Bool
	parallel(len(cands), func(i int) {
		c := &cands[i]
		_, kernelSaid := named[c.name]
		if s.look(dir, c, archived, kernelSaid, finishedUnread) {
			linked.Store(true)
		}
	})
	if whole {
		files := make(map[string]*seenFile, len(cands))
		for _, c := range cands {
			if c.now != nil {
				files[c.name] = c.now
			}
		}
		for name, f := range d.files {
			if files[name] == nil {
				touched[f.id] = struct{}{}
			}
		}
		d.files = files
		d.temps = map[string]time.Time{}
	}
	for _, c := range cands {
		if c.now != c.old {
			touched[c.id] = struct{}{}
		}
		if !whole {
			if c.now == nil {
				delete(d.files, c.name)
			} else {
				d.files[c.name] = c.now
			}
		}
	}
	for _, name := range temps {
		p := dir + string(os.PathSeparator) + name
		onDisk("lstat", p)
		if fi, err := os.Lstat(p); err == nil {
			d.temps[name] = fi.ModTime()
		} else {
			delete(d.temps, name)
		}
	}
	d.relist = linked.Load()
	return nil
}

// look lstats one candidate and, in the lock directory, reads it when its
// signature moved or the kernel named it (with finishedUnread, not a done
// or failed file under its own name: settle reads it if the task needs
// it). It reports a file with more than one link.
func (s *Source) look(dir string, c *candidate, archived, kernelSaid, finishedUnread bool) (linked bool) {
	p := dir + string(os.PathSeparator) + c.name
	onDisk("lstat", p)
	fi, err := os.Lstat(p)
	switch {
	case err != nil && os.IsNotExist(err):
		return false // gone since readdir, or removed: a writer renamed it
	case err == nil && c.old != nil && !kernelSaid && sigOf(fi) == c.old.sig:
		c.now = c.old
	case err == nil && (archived || finishedUnread && (c.kind == kindDone || c.kind == kindFailed) && c.name == c.id+c.kind.suffix()):
		c.now = &seenFile{id: c.id, kind: c.kind, sig: sigOf(fi)}
	default:
		if err != nil {
			fi = nil
		}
		if fs := readFile(p, c.kind, fi); fs != nil {
			c.now = &seenFile{id: c.id, kind: c.kind, sig: fs.sig, fs: fs}
		}
	}
	if err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
			return true
		}
	}
	return false
}

// slotOf is a task's files as the view has them. A file under its own
// name beats a held one.
func (v *view) slotOf(id string) (slot [numKinds]*seenFile) {
	for k := kindLock; k <= kindQueued; k++ {
		name := id + k.suffix()
		if slot[k] = v.dir.files[name]; slot[k] == nil {
			slot[k] = v.dir.files[heldPrefix+name]
		}
	}
	for _, k := range []kind{kindArchivedDone, kindArchivedFailed} {
		slot[k] = v.archive.files[id+k.suffix()]
	}
	return slot
}

// needsReading says whether a task's archived files must be read: a caller
// wants everything, the task is shown already, another file of the task
// may be decided by them (a live lock beats everything, a seed-archived
// marker only the tasks file, and a file names the one it replaces), or
// its one archived file is inside the horizon. What is left is a task the
// seed's cleanup archived before the horizon: history, counted unread.
func (v *view) needsReading(id string, slot *[numKinds]*seenFile, horizon time.Time) bool {
	if horizon.IsZero() || v.tasks[id] != nil {
		return true
	}
	var lone *seenFile
	for k, f := range slot {
		switch {
		case f == nil:
		case kind(k) < kindArchivedDone || lone != nil:
			return true
		default:
			lone = f
		}
	}
	return lone != nil && lone.sig.mtime >= horizon.UnixNano()
}

// settle reads what the touched tasks need and assembles them again: a
// new generation for each task whose files or entry changed.
func (s *Source) settle(touched map[string]struct{}, horizon time.Time) {
	if len(touched) == 0 {
		return
	}
	v := &s.view
	type job struct {
		id   string
		slot [numKinds]*seenFile
	}
	jobs := make([]job, 0, len(touched))
	var reads []*seenFile
	for id := range touched {
		j := job{id: id, slot: v.slotOf(id)}
		if horizon == keepHistory && v.tasks[id] == nil && finishedOnly(&j.slot) {
			v.finished[id] = struct{}{}
			continue
		}
		delete(v.finished, id)
		if v.needsReading(id, &j.slot, horizon) {
			for _, f := range j.slot {
				if f != nil && f.fs == nil {
					reads = append(reads, f)
				}
			}
		}
		jobs = append(jobs, j)
	}
	parallel(len(reads), func(i int) {
		f := reads[i]
		if f.fs = readFile(s.path(f.id, f.kind), f.kind, nil); f.fs != nil {
			f.sig = f.fs.sig
		}
	})
	gone := map[*seenFile]bool{}
	for _, f := range reads {
		if f.fs == nil { // vanished since its lstat: the kernel has queued why
			gone[f] = true
			if f.kind >= kindArchivedDone {
				delete(v.archive.files, f.id+f.kind.suffix())
			} else {
				delete(v.dir.files, f.id+f.kind.suffix())
			}
		}
	}
	for _, j := range jobs {
		var files [numKinds]*fileState
		var unread *seenFile
		any := false
		for k, f := range j.slot {
			switch {
			case f == nil || gone[f]:
			case f.fs == nil:
				unread = f
			default:
				files[k], any = f.fs, true
			}
		}
		if unread != nil {
			if v.history[j.id] != unread {
				v.unclassified, v.sorted = append(v.unclassified, unread), false
			}
			v.history[j.id] = unread
			v.historyNewest = max(v.historyNewest, unread.sig.mtime)
			continue
		}
		delete(v.history, j.id)
		e := v.entries[j.id]
		if !any && e == nil {
			if v.tasks[j.id] != nil {
				delete(v.tasks, j.id)
				v.removed[j.id] = v.bump(j.id)
			}
			continue
		}
		ev := ""
		if e != nil {
			ev = e.version
		}
		if old := v.tasks[j.id]; old != nil && old.files == files && old.entry == ev {
			continue
		}
		delete(v.removed, j.id)
		v.tasks[j.id] = &tracked{task: s.assemble(j.id, &files, e), files: files, entry: ev, gen: v.bump(j.id)}
	}
}

// finishedOnly says whether a task's files leave it finished whatever they
// hold: a done or failed file decides, no lock or queued file comes
// before it (or is decided by it), so neither next nor claim-next can hand
// it out: done, review, canceled, failed, blocked, backlog or broken.
func finishedOnly(slot *[numKinds]*seenFile) bool {
	return slot[kindLock] == nil && slot[kindQueued] == nil && (slot[kindDone] != nil || slot[kindFailed] != nil)
}

// promote reads the history a horizon earlier than the last one reaches.
func (s *Source) promote(horizon time.Time) {
	v := &s.view
	if len(v.history) == 0 || (!horizon.IsZero() && horizon.UnixNano() > v.historyNewest) {
		return
	}
	reach := map[string]struct{}{}
	v.historyNewest = 0
	for id, f := range v.history {
		if horizon.IsZero() || f.sig.mtime >= horizon.UnixNano() {
			reach[id] = struct{}{}
		} else {
			v.historyNewest = max(v.historyNewest, f.sig.mtime)
		}
	}
	s.settle(reach, horizon)
}

// parallel runs fn(0..n-1) on up to GOMAXPROCS goroutines; small batches
// run inline, where a goroutine would cost more than it saves.
func parallel(n int, fn func(int)) {
	workers := min(runtime.GOMAXPROCS(0), n/64)
	if workers < 2 {
		for i := 0; i < n; i++ {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		}()
	}
	wg.Wait()
}

// eachName calls fn for every name in dir, in directory order: sorting
// 10,000 names would cost more than reading them. The directory is opened
// without blocking and must be one (O_DIRECTORY: a FIFO planted in its
// place fails at once); with noLink its last part must not be a link.
func eachName(dir string, noLink bool, fn func(string)) error {
	onDisk("list", dir)
	flags := syscall.O_RDONLY | syscall.O_DIRECTORY | syscall.O_NONBLOCK | syscall.O_CLOEXEC
	if noLink {
		flags |= syscall.O_NOFOLLOW
	}
	fd, err := syscall.Open(dir, flags, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: dir, Err: err}
	}
	f := os.NewFile(uintptr(fd), dir)
	defer f.Close()
	for {
		names, err := f.Readdirnames(1024)
		for _, n := range names {
			fn(n)
		}
		if err != nil {
			return nil // io.EOF, or a directory that vanished mid-read
		}
	}
}

// removeStaleTemps removes temp files older than a lease: whoever was
// writing them died before publishing (a live writer publishes within
// milliseconds). Anything else about them is left alone.
func (s *Source) removeStaleTemps() {
	cutoff := time.Now().Add(-s.cfg.Lease)
	for name, mtime := range s.view.dir.temps {
		if !mtime.Before(cutoff) {
			continue
		}
		p := s.dir + string(os.PathSeparator) + name
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
			delete(s.view.dir.temps, name)
		case fi.Mode().IsRegular() && fi.ModTime().Before(cutoff):
			os.Remove(p)
			delete(s.view.dir.temps, name)
		default:
			s.view.dir.temps[name] = fi.ModTime()
		}
	}
}

// readTask reads one task fresh from disk: the few files its id can have,
// and its tasks-file entry. nil means the directory knows no such task. A
// file a change has moved aside still counts until the change publishes.
func (s *Source) readTask(id string) (*model.Task, *[numKinds]*fileState, error) {
	t, slot, _, err := s.readSettled(id, nil)
	return t, slot, err
}

// readSettled is readTask right after recover: held names are looked for
// only for the kinds in held, those recover found one for (nil: every
// kind).
func (s *Source) readSettled(id string, held *[numKinds]bool) (*model.Task, *[numKinds]*fileState, *taskEntry, error) {
	e, err := s.entry(id)
	if err != nil {
		return nil, nil, nil, err
	}
	slot := new([numKinds]*fileState)
	found := false
	for k := kind(0); k < numKinds; k++ {
		fs := readFile(s.path(id, k), k, nil)
		if fs == nil && k <= kindQueued && (held == nil || held[k]) {
			fs = readFile(s.heldPath(id, k), k, nil)
		}
		if fs != nil {
			slot[k] = fs
			found = true
		}
	}
	if !found && e == nil {
		return nil, slot, nil, nil
	}
	return s.assemble(id, slot, e), slot, e, nil
}

// unspent is slot without the files another file of the task replaces
// (record.Replaces): what a change left behind when its process died after
// publishing.
func unspent(slot *[numKinds]*fileState) *[numKinds]*fileState {
	out := *slot
	for k, fs := range slot {
		if fs != nil && replaced(fs, slot[:]) {
			out[k] = nil
		}
	}
	return &out
}

// deciding is the file that decides a task's state, or nil for a task that
// exists only in the tasks file.
func deciding(slot *[numKinds]*fileState) *fileState {
	for _, fs := range slot {
		if fs != nil {
			return fs
		}
	}
	return nil
}

// assemble builds the normalized task from its files and its entry.
func (s *Source) assemble(id string, slot *[numKinds]*fileState, e *taskEntry) *model.Task {
	t := &model.Task{Source: s.cfg.Name, ID: id, Key: id, Class: model.ClassStandard, State: model.StateQueued, RawStatus: "queued"}
	var more model.More // set on t once, at the end: most tasks have none of it
	if e != nil {
		t.Title, t.Description, t.Priority, t.Class = e.Title, e.Description, e.Priority, e.Class
		t.CreatedAt, t.EditedAt = model.StampOf(e.CreatedAt), model.StampOf(e.CreatedAt)
		t.Version, more.Problem = e.version, e.Problem
	}
	fs := deciding(unspent(slot))
	if fs == nil {
		t.SetMore(more)
		return t
	}
	r := fs.rec
	t.Version, t.EditedAt, more.Problem = fs.version, model.StampOf(fs.mtime), fs.problem
	if r.Title != "" {
		t.Title = r.Title
	} else if t.Title == "" {
		t.Title = r.Description
	}
	if r.Description != "" {
		t.Description = r.Description
	}
	if r.Priority != model.PriorityNone {
		t.Priority = r.Priority
	}
	if r.Class != 0 {
		t.Class = r.Class
	}
	if !r.CreatedAt.IsZero() {
		t.CreatedAt = model.StampOf(r.CreatedAt)
	}
	more.Reason, more.Unblock, more.Artifacts = r.Reason, model.UnblockOf(r.UnblockAction, r.NextCheckAt), r.Artifacts
	more.History = r.events()
	if r.TaskID != "" && r.TaskID != id && more.Problem == "" {
		more.Problem = fmt.Sprintf("task_id %q does not match the file name", r.TaskID)
	}
	t.RawStatus = r.Status
	if t.RawStatus == "" {
		t.RawStatus = kindNames[fs.kind]
	}
	var ok bool
	switch fs.kind {
	case kindLock:
		t.State, ok = model.StateClaimed, true
		t.SetClaim(s.claimOf(r, fs.mtime))
		t.Escalated, _ = model.ParseLevel(r.Escalation)
		if t.Claim().Name == "" && more.Problem == "" {
			more.Problem = "lock file names no agent"
		}
	case kindDone, kindArchivedDone:
		t.State, ok = doneStates[strings.ToLower(r.Status)]
	case kindFailed, kindArchivedFailed:
		t.State, ok = failedStates[strings.ToLower(r.Status)]
	case kindQueued:
		t.State, ok = model.StateQueued, true
		if res := r.Reservation; res != nil {
			until, _ := parseTime(res.Until)
			more.Reservation = &model.Reservation{For: res.For, Until: until, By: res.By, Reason: res.Reason, Priority: res.Priority}
		}
	}
	if !ok {
		t.State = model.StateUnknown
		if more.Problem == "" {
			more.Problem = fmt.Sprintf("status %q is not one claimdeck knows for a %s file", r.Status, fs.kind.suffix())
		}
	}
	if more.Problem != "" && fs.kind == kindLock {
		// A lock nobody can read still means somebody may be working:
		// shown as claimed, never pulled. Its claim is only what the file
		// says: no expiry from its mtime, no holder kind, no status word
		// of our making.
		t.State, t.RawStatus = model.StateClaimed, r.Status
		t.SetClaim(readClaim(r))
	}
	if more.Problem != "" {
		more.Problem = fs.path + ": " + more.Problem // the file to repair or move
	}
	if t.State == model.StateReview {
		more.ReviewBy = r.ReviewBy
	}
	t.SetMore(more)
	return t
}

// The status values of the seed's `.done` and `.failed` files, and the ones
// claimdeck adds for parked and canceled work (see the package doc).
var (
	doneStates = map[string]model.State{
		"": model.StateDone, "completed": model.StateDone, "complete": model.StateDone, "done": model.StateDone,
		"review": model.StateReview, "canceled": model.StateCanceled, "cancelled": model.StateCanceled,
	}
	failedStates = map[string]model.State{
		"": model.StateFailed, "failed": model.StateFailed, "blocked": model.StateBlocked, statusBacklog: model.StateBlocked,
		"canceled": model.StateCanceled, "cancelled": model.StateCanceled,
	}
)

// person reports whether a person holds the lock (model.PersonHeld): its
// holder_kind, else the HUMAN: prefix of an agent with no run and no lease.
func (r *record) person() bool {
	var lease time.Duration
	if !r.ClaimedAt.IsZero() && !r.ExpiresAt.IsZero() {
		lease = r.ExpiresAt.Sub(r.ClaimedAt)
	}
	return model.PersonHeld(r.HolderKind, r.Agent, r.RunID, lease)
}

// claimOf reads the claim of a lock file. The lease ends at the earlier of
// expires_at and a whole lease after the file last changed on this host's
// clock (the Kubernetes Lease rule): a writer whose clock runs far ahead,
// or an expires_at in the next century, cannot hold a task forever. A
// source on a Config.Now clock has no common frame with the kernel's mtimes
// and judges by the file's times alone.
func (s *Source) claimOf(r *record, mtime time.Time) model.Claim {
	c := model.Claim{
		Holder: model.HolderAgent, Name: r.Agent, RunID: r.RunID, Node: r.Node, Token: r.LockToken,
		ClaimedAt: model.StampOf(r.ClaimedAt), HeartbeatAt: model.StampOf(r.Heartbeat),
	}
	if r.person() {
		c.Holder = model.HolderHuman
		return c // a human's claim never expires
	}
	lease := s.cfg.Lease
	alive := c.LastAlive()
	exp := r.ExpiresAt
	if exp.IsZero() {
		if alive.IsZero() {
			alive = mtime
		}
		exp = alive.Add(lease)
	} else if !alive.IsZero() && exp.After(alive) {
		lease = exp.Sub(alive)
	}
	if quiet := mtime.Add(lease); s.kernel && !mtime.IsZero() && quiet.Before(exp) {
		exp = quiet
	}
	c.Expires = model.StampOf(exp)
	return c
}

// readClaim is the claim a broken lock file names, as written: the
// holder only when it names an agent, times only those it gives.
func readClaim(r *record) model.Claim {
	c := model.Claim{Name: r.Agent, RunID: r.RunID, Node: r.Node, Token: r.LockToken,
		ClaimedAt: model.StampOf(r.ClaimedAt), HeartbeatAt: model.StampOf(r.Heartbeat), Expires: model.StampOf(r.ExpiresAt)}
	switch {
	case strings.EqualFold(r.HolderKind, "HUMAN") || strings.HasPrefix(r.Agent, model.HumanPrefix):
		c.Holder = model.HolderHuman
	case r.Agent != "":
		c.Holder = model.HolderAgent
	}
	return c
}

// snapshot is every task after a fresh scan, history aside: the callers
// (next, claim-next) want claimable tasks, and history never is.
func (s *Source) snapshot() ([]*model.Task, error) {
	s.scanMu.Lock()
	defer s.scanMu.Unlock()
	if err := s.scan(time.Now(), keepHistory); err != nil {
		return nil, err
	}
	out := make([]*model.Task, 0, len(s.view.tasks))
	for _, tr := range s.view.tasks {
		out = append(out, tr.task)
	}
	return out, nil
}

// Poll returns what changed since the cursor. The cursor names this Source
// instance and a generation; one from elsewhere gets a full snapshot. The
// tasks returned are shared: treat them as read-only. A full poll with a
// horizon counts the history it leaves out, read or not: until a batch
// has read it (classify), a parked task the seed's cleanup archived is
// counted there too.
func (s *Source) Poll(ctx context.Context, since sources.Cursor, opt ...sources.PollOption) (sources.Delta, error) {
	if err := ctx.Err(); err != nil {
		return sources.Delta{}, sources.StorageErr("poll", "", err)
	}
	if err := s.readGuard(ctx, "poll", "", false); err != nil {
		return sources.Delta{}, err
	}
	if n := sources.FirstPage(opt); since == "" && n > 0 {
		return s.firstQueued(n)
	}
	s.scanMu.Lock()
	defer s.scanMu.Unlock()
	v := &s.view
	warm := !v.scanned.IsZero()
	horizon := sources.Horizon(opt)
	if err := s.scan(time.Now(), horizon); err != nil {
		return sources.Delta{}, err
	}
	if warm && !horizon.IsZero() {
		// Not on the first scan: it has listed and lstat'ed the archive already.
		s.classify(horizon)
	}
	from, full := s.parseCursor(since)
	d := sources.Delta{Full: full, Cursor: sources.Cursor(s.instance + ":" + strconv.FormatUint(v.gen, 10))}
	if full {
		for _, tr := range v.tasks {
			d.Tasks = append(d.Tasks, tr.task)
		}
		d.Tasks, d.Archived = sources.Window(d.Tasks, opt)
		d.Archived += len(v.history)
		return d, nil
	}
	tail, _ := slices.BinarySearchFunc(v.changes, from+1, func(c change, gen uint64) int { return cmp.Compare(c.gen, gen) })
	seen := map[string]bool{}
	for _, c := range v.changes[tail:] {
		if seen[c.id] {
			continue
		}
		seen[c.id] = true
		if tr := v.tasks[c.id]; tr != nil {
			d.Tasks = append(d.Tasks, tr.task)
		} else if _, gone := v.removed[c.id]; gone {
			d.Removed = append(d.Removed, c.id)
		}
	}
	return d, nil
}

// firstQueued is a first screen (sources.PollOption.First): the first n
// queued tasks in pull order, from a scan for next, which opens no done or
// failed file (no queued task has one).
func (s *Source) firstQueued(n int) (sources.Delta, error) {
	tasks, err := s.snapshot()
	if err != nil {
		return sources.Delta{}, err
	}
	var queued []*model.Task
	for _, t := range tasks {
		if t.State == model.StateQueued {
			queued = append(queued, t)
		}
	}
	model.SortPullOrder(queued)
	return sources.Delta{Partial: true, Tasks: queued[:min(n, len(queued))]}, nil
}

func (s *Source) parseCursor(c sources.Cursor) (uint64, bool) {
	inst, gen, ok := strings.Cut(string(c), ":")
	if !ok || inst != s.instance {
		return 0, true
	}
	n, err := strconv.ParseUint(gen, 10, 64)
	if err != nil || n > s.view.gen {
		return 0, true
	}
	return n, false
}

// Get reads one task fresh from disk, with its history.
func (s *Source) Get(ctx context.Context, id string) (*model.Task, error) {
	if err := refuseID("get", id); err != nil {
		return nil, err
	}
	if err := s.readGuard(ctx, "get", id, false); err != nil {
		return nil, err
	}
	t, slot, err := s.readTask(id)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, sources.NotFound("get", id)
	}
	if fs := deciding(unspent(slot)); fs != nil {
		t.EditMore().Carried = carriedOf(fs)
	}
	if refused := s.trail(id); len(refused) > 0 {
		t.EditMore().History = model.MergeHistory(t.More().History, refused)
	}
	return t, nil
}

// carriedOf is what a task's deciding file keeps beyond what the task
// says: its task_type, the fields claimdeck does not read and, in a file
// that is not a lock, who held the task and when that run started and
// ended.
func carriedOf(fs *fileState) *model.Carried {
	r := fs.rec
	c := &model.Carried{TaskType: r.TaskType}
	if fs.kind != kindLock {
		c.Worker, c.StartedAt, c.CompletedAt = r.Agent, r.ClaimedAt, r.CompletedAt
		if c.CompletedAt.IsZero() {
			c.CompletedAt = r.FailedAt
		}
	} else {
		c.LeaseUnset = r.ExpiresAt.IsZero() && r.HolderKind == ""
	}
	for k, v := range r.extra {
		if c.Extra == nil {
			c.Extra = map[string]string{}
		}
		c.Extra[k] = string(v)
	}
	return c
}

// Next is the first task in pull order model.Claimable allows agent.
func (s *Source) Next(ctx context.Context, agent string) (*model.Task, error) {
	if err := s.readGuard(ctx, "next", "", false); err != nil {
		return nil, err
	}
	tasks, err := s.snapshot()
	if err != nil {
		return nil, err
	}
	return model.Next(tasks, agent, s.now(), s.cfg.Grace), nil
}
