package lockdir

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// view is the directory as last scanned: every file's stat signature and
// parsed content, and every task with the generation at which it last
// changed. A scan stats every file but reads only those whose signature
// moved, so an idle scan costs a readdir and one lstat per file.
type view struct {
	files   map[string]*fileState // by path
	tasks   map[string]*tracked   // by task id
	removed map[string]uint64     // task id → generation it disappeared at
	gen     uint64
	scanned time.Time // when the last scan started
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
	v.files = map[string]*fileState{}
	v.tasks = map[string]*tracked{}
	v.removed = map[string]uint64{}
}

func (s *Source) loadTasks() error {
	s.tasksMu.Lock()
	defer s.tasksMu.Unlock()
	return s.tasks.load()
}

// entries returns the tasks file's entries as of now.
func (s *Source) entries() (map[string]*taskEntry, []taskEntry, error) {
	s.tasksMu.Lock()
	defer s.tasksMu.Unlock()
	if err := s.tasks.load(); err != nil {
		return nil, nil, err
	}
	return s.tasks.byID, s.tasks.entries, nil
}

// scan brings the view up to date. A caller that asked at `asked` reuses a
// scan that started after it asked: under contention many callers share one
// directory read instead of queueing for their own.
func (s *Source) scan(asked time.Time) error {
	s.scanMu.Lock()
	defer s.scanMu.Unlock()
	if s.view.scanned.After(asked) {
		return nil
	}
	start := time.Now()
	byID, entries, err := s.entries()
	if err != nil {
		return err
	}
	type found struct {
		id   string
		kind kind
		path string
		held bool // moved aside by a change (heldPath)
		fs   *fileState
	}
	var all []found
	var temps []string
	add := func(dir, name string, k kind) {
		base, held := strings.CutPrefix(name, heldPrefix)
		if id := strings.TrimSuffix(base, k.suffix()); id != "" && !strings.HasPrefix(base, ".") && (!held || dir == s.dir) {
			all = append(all, found{id: id, kind: k, path: dir + string(os.PathSeparator) + name, held: held})
		}
	}
	if err := eachName(s.dir, func(name string) {
		if strings.HasPrefix(name, tempPrefix) {
			temps = append(temps, name)
			return
		}
		for _, k := range []kind{kindLock, kindDone, kindFailed, kindQueued} {
			if strings.HasSuffix(name, k.suffix()) {
				add(s.dir, name, k)
				return
			}
		}
	}); err != nil {
		return sources.StorageErr("poll", "", err)
	}
	if err := eachName(s.archive, func(name string) {
		switch {
		case strings.HasSuffix(name, ".done"):
			add(s.archive, name, kindArchivedDone)
		case strings.HasSuffix(name, ".failed"):
			add(s.archive, name, kindArchivedFailed)
		}
	}); err != nil && !os.IsNotExist(err) {
		return sources.StorageErr("poll", "", err)
	}
	// An lstat per file, and a read of those whose signature moved: system
	// calls and parsing, spread over the cores.
	old := s.view.files
	parallel(len(all), func(i int) {
		f := &all[i]
		fi, err := os.Lstat(f.path)
		switch {
		case err != nil && os.IsNotExist(err):
			return // gone since readdir: a writer renamed it
		case err == nil && old[f.path] != nil && sigOf(fi) == old[f.path].sig:
			f.fs = old[f.path]
		case err == nil:
			f.fs = readFile(f.path, f.kind, fi)
		default:
			f.fs = readFile(f.path, f.kind, nil)
		}
	})

	files := make(map[string]*fileState, len(all))
	perID := make(map[string]*[numKinds]*fileState, len(all))
	for _, f := range all {
		if f.fs == nil {
			continue // vanished between lstat and read
		}
		files[f.path] = f.fs
		slot := perID[f.id]
		if slot == nil {
			slot = new([numKinds]*fileState)
			perID[f.id] = slot
		}
		if !f.held || slot[f.kind] == nil || isHeld(slot[f.kind].path) {
			slot[f.kind] = f.fs // a file under its own name beats a held one
		}
	}
	s.view.files = files
	s.removeStaleTemps(temps)

	seen := make(map[string]bool, len(perID)+len(entries))
	update := func(id string, slot *[numKinds]*fileState) {
		if seen[id] {
			return
		}
		seen[id] = true
		var empty [numKinds]*fileState
		if slot == nil {
			slot = &empty
		}
		e, ev := byID[id], ""
		if e != nil {
			ev = e.version
		}
		if old := s.view.tasks[id]; old != nil && old.files == *slot && old.entry == ev {
			return
		}
		s.view.gen++
		s.view.tasks[id] = &tracked{task: s.assemble(id, slot, e), files: *slot, entry: ev, gen: s.view.gen}
		delete(s.view.removed, id)
	}
	for id, slot := range perID {
		update(id, slot)
	}
	for _, e := range entries {
		update(e.ID, perID[e.ID])
	}
	for id := range s.view.tasks {
		if !seen[id] {
			s.view.gen++
			delete(s.view.tasks, id)
			s.view.removed[id] = s.view.gen
		}
	}
	s.view.scanned = start
	return nil
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
// 10,000 names would cost more than reading them.
func eachName(dir string, fn func(string)) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
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

// isHeld says whether path is a file moved aside by a change.
func isHeld(path string) bool { return strings.HasPrefix(filepath.Base(path), heldPrefix) }

// removeStaleTemps removes temp files older than a lease: whoever was
// writing them died before publishing (a live writer publishes within
// milliseconds). Anything else about them is left alone.
func (s *Source) removeStaleTemps(names []string) {
	cutoff := time.Now().Add(-s.cfg.Lease)
	for _, name := range names {
		p := filepath.Join(s.dir, name)
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && fi.ModTime().Before(cutoff) {
			os.Remove(p)
		}
	}
}

// readTask reads one task fresh from disk: the few files its id can have,
// and its tasks-file entry. nil means the directory knows no such task. A
// file a change has moved aside still counts until the change publishes.
func (s *Source) readTask(id string) (*model.Task, *[numKinds]*fileState, error) {
	byID, _, err := s.entries()
	if err != nil {
		return nil, nil, err
	}
	slot := new([numKinds]*fileState)
	found := false
	for k := kind(0); k < numKinds; k++ {
		fs := readFile(s.path(id, k), k, nil)
		if fs == nil && k <= kindQueued {
			fs = readFile(s.heldPath(id, k), k, nil)
		}
		if fs != nil {
			slot[k] = fs
			found = true
		}
	}
	e := byID[id]
	if !found && e == nil {
		return nil, slot, nil
	}
	return s.assemble(id, slot, e), slot, nil
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
	if e != nil {
		t.Title, t.Description, t.Priority, t.Class = e.Title, e.Description, e.Priority, e.Class
		t.CreatedAt, t.EditedAt = e.CreatedAt, e.CreatedAt
		t.Version, t.Problem = e.version, e.Problem
	}
	fs := deciding(unspent(slot))
	if fs == nil {
		return t
	}
	r := fs.rec
	t.Version, t.EditedAt, t.Problem = fs.version, fs.mtime, fs.problem
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
		t.CreatedAt = r.CreatedAt
	}
	t.Reason, t.Unblock, t.Artifacts = r.Reason, model.UnblockOf(r.UnblockAction, r.NextCheckAt), r.Artifacts
	t.History = r.events()
	if r.TaskID != "" && r.TaskID != id && t.Problem == "" {
		t.Problem = fmt.Sprintf("task_id %q does not match the file name", r.TaskID)
	}
	t.RawStatus = r.Status
	if t.RawStatus == "" {
		t.RawStatus = kindNames[fs.kind]
	}
	var ok bool
	switch fs.kind {
	case kindLock:
		t.State, ok = model.StateClaimed, true
		t.Claim = s.claimOf(r, fs.mtime)
		t.Escalated, _ = model.ParseLevel(r.Escalation)
		if t.Claim.Name == "" && t.Problem == "" {
			t.Problem = "lock file names no agent"
		}
	case kindDone, kindArchivedDone:
		t.State, ok = doneStates[strings.ToLower(r.Status)]
	case kindFailed, kindArchivedFailed:
		t.State, ok = failedStates[strings.ToLower(r.Status)]
	case kindQueued:
		t.State, ok = model.StateQueued, true
		if res := r.Reservation; res != nil {
			until, _ := parseTime(res.Until)
			t.Reservation = &model.Reservation{For: res.For, Until: until, By: res.By, Reason: res.Reason, Priority: res.Priority}
		}
	}
	if !ok {
		t.State = model.StateUnknown
		if t.Problem == "" {
			t.Problem = fmt.Sprintf("status %q is not one claimdeck knows for a %s file", r.Status, fs.kind.suffix())
		}
	}
	if t.Problem != "" && fs.kind == kindLock {
		// A lock nobody can read still means somebody may be working:
		// shown as claimed, never pulled.
		t.State = model.StateClaimed
	}
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
		"": model.StateFailed, "failed": model.StateFailed, "blocked": model.StateBlocked,
		"canceled": model.StateCanceled, "cancelled": model.StateCanceled,
	}
)

// claimOf reads the claim of a lock file. The lease ends at the earlier of
// expires_at and a whole lease after the file last changed on this host's
// clock (the Kubernetes Lease rule): a writer whose clock runs far ahead,
// or an expires_at in the next century, cannot hold a task forever. A
// source on a Config.Now clock has no common frame with the kernel's mtimes
// and judges by the file's times alone.
func (s *Source) claimOf(r *record, mtime time.Time) model.Claim {
	c := model.Claim{
		Holder: model.HolderAgent, Name: r.Agent, RunID: r.RunID, Node: r.Node, Token: r.LockToken,
		ClaimedAt: r.ClaimedAt, HeartbeatAt: r.Heartbeat,
	}
	if strings.EqualFold(r.HolderKind, "HUMAN") || strings.HasPrefix(r.Agent, model.HumanPrefix) {
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
	c.Expires = exp
	return c
}

// snapshot is every task after a fresh scan.
func (s *Source) snapshot() ([]*model.Task, error) {
	if err := s.scan(time.Now()); err != nil {
		return nil, err
	}
	s.scanMu.Lock()
	defer s.scanMu.Unlock()
	out := make([]*model.Task, 0, len(s.view.tasks))
	for _, tr := range s.view.tasks {
		out = append(out, tr.task)
	}
	return out, nil
}

// Poll returns what changed since the cursor. The cursor names this Source
// instance and a generation; one from elsewhere gets a full snapshot. The
// tasks returned are shared: treat them as read-only.
func (s *Source) Poll(ctx context.Context, since sources.Cursor, opt ...sources.PollOption) (sources.Delta, error) {
	if err := ctx.Err(); err != nil {
		return sources.Delta{}, sources.StorageErr("poll", "", err)
	}
	if err := s.scan(time.Now()); err != nil {
		return sources.Delta{}, err
	}
	s.scanMu.Lock()
	defer s.scanMu.Unlock()
	from, full := s.parseCursor(since)
	d := sources.Delta{Full: full, Cursor: sources.Cursor(s.instance + ":" + strconv.FormatUint(s.view.gen, 10))}
	for _, tr := range s.view.tasks {
		if full || tr.gen > from {
			d.Tasks = append(d.Tasks, tr.task)
		}
	}
	if !full {
		for id, g := range s.view.removed {
			if g > from {
				d.Removed = append(d.Removed, id)
			}
		}
	} else {
		d.Tasks, d.Archived = sources.Window(d.Tasks, opt)
	}
	return d, nil
}

// Archive answers from a fresh scan: the directory is read whole anyway.
func (s *Source) Archive(ctx context.Context, q sources.ArchiveQuery) ([]*model.Task, error) {
	if err := q.Check(); err != nil {
		return nil, err
	}
	tasks, err := s.snapshot()
	if err != nil {
		return nil, err
	}
	return sources.ArchiveOf(tasks, q)
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
	t, _, err := s.readTask(id)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, sources.NotFound("get", id)
	}
	return t, nil
}

// Next is the first task in pull order model.Claimable allows agent.
func (s *Source) Next(ctx context.Context, agent string) (*model.Task, error) {
	tasks, err := s.snapshot()
	if err != nil {
		return nil, err
	}
	return model.Next(tasks, agent, s.now(), s.cfg.Grace), nil
}
