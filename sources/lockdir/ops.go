package lockdir

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sys/unix"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// errGone is a task that vanished between a scan and its claim.
var errGone = errors.New("task vanished")

func conflict(op, id string, cur *model.Task, format string, args ...any) error {
	e := model.Errorf(model.CodeConflict, op, id, format, args...)
	e.Current = cur
	return e
}

// freshConflict re-reads the task so the CONFLICT says what is there now.
func (s *Source) freshConflict(op, id, why string) error {
	cur, _, _ := s.readTask(id)
	return conflict(op, id, cur, "%s", why)
}

// whyNot says, for the CONFLICT message, why a task cannot be claimed.
func whyNot(t *model.Task, agent string, now time.Time) string {
	switch {
	case t.More().Problem != "":
		return "the task's files are broken: " + t.More().Problem
	case t.State == model.StateClaimed:
		s := "held by " + t.Claim().Holder.String() + " " + t.Claim().Name
		if !t.Claim().Expires.IsZero() {
			s += " until " + t.Claim().Expires.Time().Format(time.RFC3339)
		}
		return s
	case t.State != model.StateQueued:
		return "the task is " + t.State.String()
	case !t.Reserved().Allows(agent, now):
		return "reserved for " + t.Reserved().For + " until " + t.Reserved().Until.Format(time.RFC3339)
	}
	return "not claimable"
}

// recordFor starts a new file for a task from what is known of it.
func recordFor(t *model.Task) *record {
	r := &record{TaskID: t.ID, Title: t.Title, Description: t.Description, Priority: t.Priority, Class: t.Class, CreatedAt: t.CreatedAt.Time()}
	for _, e := range t.More().History {
		r.addEvent(e)
	}
	return r
}

// Create adds a task to the tasks file (see the package doc).
func (s *Source) Create(ctx context.Context, n sources.NewTask) (*model.Task, error) {
	if err := n.Check("create"); err != nil {
		return nil, err
	}
	id := n.ID
	if id == "" {
		id = "t-" + strings.ReplaceAll(uuid.Must(uuid.NewV7()).String(), "-", "")[:20]
	}
	if err := refuseID("create", id); err != nil {
		return nil, err
	}
	if n.Parent != "" {
		return nil, model.Errorf(model.CodeMisconfigured, "create", id, "a lock directory has no sub-tasks: --parent is not supported")
	}
	unlock, err := s.lock(ctx, "create")
	if err != nil {
		return nil, err
	}
	defer unlock()
	if cur, _, err := s.readTask(id); err != nil {
		return nil, err
	} else if cur != nil {
		return nil, conflict("create", id, cur, "a task with this id exists")
	}
	class := ""
	if n.Class != 0 && n.Class != model.ClassStandard {
		class = n.Class.String()
	}
	if n.Parked {
		// Backlog is a parked file of its own: a .failed with status
		// "backlog", published at once, so no scan ever sees it queued.
		rec := &record{TaskID: id, Title: n.Title, Description: n.Description, Priority: n.Priority, Class: n.Class, CreatedAt: s.now(), Status: statusBacklog}
		if err := s.publish(rec.marshal(), s.path(id, kindFailed)); err != nil {
			return nil, s.publishFailed("create", id, err)
		}
	} else {
		w := wireEntry{ID: id, Title: n.Title, Description: n.Description, Priority: n.Priority, Class: class, CreatedAt: formatTime(s.now())}
		if err := s.appendTask(w); err != nil {
			return nil, sources.StorageErr("create", id, err)
		}
	}
	t, _, err := s.readTask(id)
	if err == nil && t == nil {
		err = sources.NotFound("create", id)
	}
	return t, err
}

// appendTask rewrites the tasks file with one more entry: temp file and
// rename, so a reader sees the old list or the new one, never half.
func (s *Source) appendTask(w wireEntry) error {
	s.tasksMu.Lock()
	defer s.tasksMu.Unlock()
	if err := s.tasks.load(); err != nil {
		return err
	}
	data, err := appendEntry(s.tasks.data, s.tasks.path, len(s.tasks.entries) > 0, w)
	if err != nil {
		return err
	}
	if err := s.replace(data, s.tasks.path); err != nil {
		return err
	}
	return s.tasks.appended(data, w)
}

// Claim takes a task model.Claimable allows, breaking a dead holder's lock.
func (s *Source) Claim(ctx context.Context, id string, c sources.ClaimRequest) (*model.Task, error) {
	if err := c.Check("claim", id); err != nil {
		return nil, err
	}
	if err := refuseID("claim", id); err != nil {
		return nil, err
	}
	if strings.TrimSpace(c.Agent) == "" {
		return nil, model.Errorf(model.CodeMisconfigured, "claim", id, "no agent name")
	}
	unlock, err := s.lock(ctx, "claim")
	if err != nil {
		return nil, err
	}
	defer unlock()
	// Seed 004's agents claim any id they are given: a tasks file adds a
	// queue, it does not restrict claims.
	return s.claimLocked("claim", id, c, true)
}

// ClaimNext claims the first task in pull order that model.Claimable allows
// the agent. A task someone else wins in the meantime is skipped.
func (s *Source) ClaimNext(ctx context.Context, c sources.ClaimRequest) (*model.Task, error) {
	if err := c.Check("claim", ""); err != nil {
		return nil, err
	}
	if strings.TrimSpace(c.Agent) == "" {
		return nil, model.Errorf(model.CodeMisconfigured, "claim-next", "", "no agent name")
	}
	// A claim-next that finds nothing takes no lock: the marker is read here.
	if err := s.readGuard(ctx, "claim-next", "", true); err != nil {
		return nil, err
	}
	tasks, err := s.snapshot()
	if err != nil {
		return nil, err
	}
	now := s.now()
	var cands []*model.Task
	for _, t := range tasks {
		if model.Claimable(t, c.Agent, now, s.cfg.Grace) {
			cands = append(cands, t)
		}
	}
	model.SortPullOrder(cands)
	for _, t := range cands {
		if err := ctx.Err(); err != nil {
			return nil, sources.StorageErr("claim-next", "", err)
		}
		unlock, err := s.lock(ctx, "claim-next")
		if err != nil {
			return nil, err
		}
		got, err := s.claimLocked("claim-next", t.ID, c, false)
		unlock()
		if errors.Is(err, errGone) || model.CodeOf(err) == model.CodeConflict {
			continue
		}
		return got, err
	}
	return nil, nil
}

// claimLocked claims under the write lock: settle what a dead writer left,
// re-read, check, break a dead holder's lock, then link the new lock into
// place. EEXIST means someone outside claimdeck's lock (a seed snippet) got
// there first. With adopt, an id the directory has never seen is claimed as
// a new queued task; without, it is errGone.
func (s *Source) claimLocked(op, id string, c sources.ClaimRequest, adopt bool) (*model.Task, error) {
	held := s.recover(id)
	cur, slot, entry, err := s.readSettled(id, &held)
	if err != nil {
		return nil, err
	}
	if cur == nil {
		if !adopt {
			return nil, errGone
		}
		cur = s.assemble(id, slot, nil)
	}
	now := s.now()
	if !model.Claimable(cur, c.Agent, now, s.cfg.Grace) {
		return nil, conflict(op, id, cur, "%s", whyNot(cur, c.Agent, now))
	}
	lease := c.Lease
	if lease <= 0 {
		lease = s.cfg.Lease
	}
	rec := recordFor(cur)
	rec.Agent, rec.RunID, rec.Node = c.Agent, c.RunID, c.Node
	rec.ClaimedAt, rec.ExpiresAt = now, now.Add(lease)
	rec.LockToken, rec.HolderKind = uuid.NewString(), model.HolderAgent.String()
	ev := c.Event(cur, now)
	broken := ""
	if lk := slot[kindLock]; lk != nil {
		// A dead holder's lease: move the old lock aside and make sure it is
		// still the one judged dead before anyone can link a new one. Until
		// the new lock is published, the held one is still the lock.
		priv, ok, err := s.takeVerified(id, lk)
		if err != nil {
			return nil, sources.StorageErr(op, id, err)
		}
		if !ok {
			return nil, s.freshConflict(op, id, "the expired lock changed while it was being broken")
		}
		broken, rec.Replaces = priv, lk.version
		defer func() {
			if _, err := os.Lstat(s.path(id, kindLock)); err == nil {
				s.toArchive(broken, id, "expired")
			} else {
				s.restore(broken, lk.path, id)
			}
		}()
	}
	rec.addEvent(ev)
	data := rec.marshal()
	if len(data) > maxFile {
		// A tasks-file entry written by hand past model's text limits.
		return nil, model.Errorf(model.CodeMisconfigured, op, id, "the task's lock file would be %d bytes, over the %d a reader reads: shorten its title or description in the tasks file", len(data), maxFile)
	}
	if err := s.publish(data, s.path(id, kindLock)); err != nil {
		if errors.Is(err, errExist) {
			return nil, s.freshConflict(op, id, "claimed by someone else at the same moment")
		}
		return nil, sources.StorageErr(op, id, err)
	}
	if q := slot[kindQueued]; q != nil {
		os.Remove(q.path) // its reservation is used up; its history lives on in the lock
		afterStep("queued marker removed")
		slot[kindQueued] = nil
	}
	return s.written(op, id, slot, kindLock, data, entry)
}

// written is the task after this process wrote one of its files, built
// from what was written and one lstat rather than a fresh read of every
// file: the write lock is still held, so nothing else in claimdeck moved.
// The caller read the task, and its tasks-file entry e, under that lock.
func (s *Source) written(op, id string, slot *[numKinds]*fileState, k kind, data []byte, e *taskEntry) (*model.Task, error) {
	p := s.path(id, k)
	fi, err := os.Lstat(p)
	if err != nil {
		return s.reread(op, id) // moved already (a seed snippet): say what is there
	}
	// Parsed back rather than reused, so the task is exactly what Get reads
	// (times written to the microsecond, not the nanosecond).
	rec, _ := parseLock(data)
	slot[k] = &fileState{kind: k, path: p, sig: sigOf(fi), mtime: fi.ModTime().UTC(), rec: rec, version: k.versionOf(data)}
	// The entry as the claim read it under this same lock: a second look
	// would only race with an edit the claim did not check anyway.
	return s.assemble(id, slot, e), nil
}

func (s *Source) reread(op, id string) (*model.Task, error) {
	t, _, err := s.readTask(id)
	if err == nil && t == nil {
		err = sources.NotFound(op, id)
	}
	return t, err
}

// lost is the refusal of a holder write whose token does not match: an id
// the directory has never seen is not found rather than a lost lock.
func (s *Source) lost(op, id string) error {
	if t, _, err := s.readTask(id); err == nil && t == nil {
		return sources.NotFound(op, id)
	}
	return sources.Lost(op, id)
}

// holderLock reads the lock and checks that it carries token; nil means
// LOST_LOCK. It says nothing of the lease: see currentLock.
func (s *Source) holderLock(id, token string) *fileState {
	lk := readFile(s.path(id, kindLock), kindLock, nil)
	if lk == nil || lk.problem != "" || token == "" || lk.rec.LockToken != token {
		return nil
	}
	return lk
}

// currentLock is holderLock for a holder's own write: the token must also
// still be current (model.TokenCurrent), its lease running.
func (s *Source) currentLock(id, token string) *fileState {
	lk := s.holderLock(id, token)
	if lk == nil {
		return nil
	}
	held := (&model.Task{State: model.StateClaimed}).WithClaim(s.claimOf(lk.rec, lk.mtime))
	if !model.TokenCurrent(held, token, s.now()) {
		return nil
	}
	return lk
}

// Heartbeat extends the holder's lease: the token is checked under the
// write lock and the new lock replaces the old by rename, never leaving the
// name empty (a moment without a lock would look like a free task).
func (s *Source) Heartbeat(ctx context.Context, id, token string, lease time.Duration) (*model.Task, error) {
	if err := sources.CheckHeartbeat("heartbeat", id, token, lease); err != nil {
		return nil, err
	}
	if err := refuseID("heartbeat", id); err != nil {
		return nil, err
	}
	unlock, err := s.lockTask(ctx, "heartbeat", id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	lk := s.currentLock(id, token)
	if lk == nil {
		return nil, s.lost("heartbeat", id)
	}
	if lease <= 0 {
		lease = s.cfg.Lease
	}
	now := s.now()
	rec := lk.rec.clone()
	rec.Heartbeat = now
	rec.Escalation = "" // alive again: the sweep judges it afresh
	if !rec.person() {
		rec.ExpiresAt = now.Add(lease)
	}
	if err := s.replaceHeld("heartbeat", id, lk, rec); err != nil {
		return nil, err
	}
	return s.reread("heartbeat", id)
}

// finishes maps an outcome to the file it is published as and its status.
var finishes = map[model.State]struct {
	kind   kind
	status string
	action string
}{
	model.StateDone:     {kindDone, "completed", "complete"},
	model.StateReview:   {kindDone, "review", "review"},
	model.StateCanceled: {kindDone, "canceled", "cancel"},
	model.StateFailed:   {kindFailed, "failed", "fail"},
	model.StateBlocked:  {kindFailed, "blocked", "block"},
}

// statusBacklog is ntask's Backlog in a .failed file: parked, never pulled.
const statusBacklog = "backlog"

// Finish ends the holder's claim: the lock is moved to a private name, its
// token checked there, and only then is the .done or .failed published with
// link(), which never overwrites.
func (s *Source) Finish(ctx context.Context, id, token string, o sources.Outcome) (*model.Task, error) {
	if err := o.Check("finish", id, token); err != nil {
		return nil, err
	}
	fin, ok := finishes[o.State]
	if !ok {
		return nil, model.Errorf(model.CodeMisconfigured, "finish", id, "%s is not an outcome (want done, blocked, review, canceled or failed)", o.State)
	}
	if err := refuseID(fin.action, id); err != nil {
		return nil, err
	}
	unlock, err := s.lockTask(ctx, fin.action, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	lk := s.currentLock(id, token)
	if lk == nil {
		return nil, s.lost(fin.action, id)
	}
	priv, ok, err := s.takeVerified(id, lk)
	if err != nil {
		return nil, sources.StorageErr(fin.action, id, err)
	}
	if !ok {
		return nil, sources.Lost(fin.action, id)
	}
	now := s.now()
	rec := lk.rec.clone()
	rec.LockToken, rec.Replaces = "", lk.version
	rec.Status, rec.Reason, rec.UnblockAction, rec.NextCheckAt, rec.Artifacts = fin.status, o.Reason, o.UnblockAction, o.NextCheckAt, o.Artifacts
	if fin.kind == kindDone {
		rec.CompletedAt = now
	} else {
		rec.FailedAt = now
	}
	rec.ReviewBy = ""
	if o.State == model.StateReview {
		rec.ReviewBy = o.By(rec.Agent)
	}
	ev := o.Event(rec.Agent, now)
	ev.Action = fin.action
	rec.addEvent(ev)
	if err := s.publishFinal(rec.marshal(), id, fin.kind); err != nil {
		s.restore(priv, lk.path, id)
		return nil, sources.StorageErr(fin.action, id, err)
	}
	os.Remove(priv) // our own lock, verified, its content carried into the marker
	afterStep("held removed")
	return s.reread(fin.action, id)
}

// publishFinal links a .done or .failed into place. An older marker for the
// same task (a retried failure) goes to archive/ first, and so does the
// other kind of marker, so that a task has one live final marker.
func (s *Source) publishFinal(data []byte, id string, k kind) error {
	other := kindFailed
	if k == kindFailed {
		other = kindDone
	}
	if _, err := os.Lstat(s.path(id, other)); err == nil {
		s.toArchive(s.path(id, other), id, "superseded")
	}
	for attempt := 0; ; attempt++ {
		err := s.publish(data, s.path(id, k))
		if !errors.Is(err, errExist) || attempt == 2 {
			return err
		}
		s.toArchive(s.path(id, k), id, "superseded")
	}
}

// takeVerified moves a file aside to its held name and checks that what it
// moved is the version it read. If not, it puts the file back.
func (s *Source) takeVerified(id string, fs *fileState) (string, bool, error) {
	priv := s.heldPath(id, fs.kind)
	if err := os.Rename(fs.path, priv); err != nil {
		if os.IsNotExist(err) {
			return "", false, nil
		}
		return "", false, err
	}
	afterStep("moved aside")
	if got := readFile(priv, fs.kind, nil); got != nil && got.version == fs.version {
		return priv, true, nil
	}
	s.restore(priv, fs.path, id)
	return "", false, nil
}

// restore links a file moved aside back to its name. If the name was taken
// in the meantime, the moved file goes to archive/: never deleted.
func (s *Source) restore(priv, orig, id string) {
	if err := os.Link(priv, orig); err == nil {
		os.Remove(priv)
		return
	}
	s.toArchive(priv, id, "displaced")
}

// archiveName is a fresh name in archive/ that the seed's `archive/*.done`
// readers and claimdeck's scan both leave alone.
func (s *Source) archiveName(id, why string) string {
	stamp := s.now().Format("20060102T150405.000000Z")
	return filepath.Join(s.archive, fmt.Sprintf("%s@%s-%s.%s", id, stamp, randomHex(3), why))
}

// toArchive moves a file into archive/ as it is. If archive/ cannot be
// written the file stays where it is: a private file stays private, a live
// marker stays live, nothing is lost.
func (s *Source) toArchive(src, id, why string) {
	_ = s.intoArchive(src, id, why)
}

// intoArchive moves src into archive/ under a fresh name. archive/ is
// opened without following links, and the move goes through that open
// directory: an archive that is a symbolic link (to anywhere) is refused,
// and nothing is written outside the lock directory.
func (s *Source) intoArchive(src, id, why string) error {
	fd, err := s.openArchive()
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	if err := unix.Renameat(unix.AT_FDCWD, src, fd, filepath.Base(s.archiveName(id, why))); err != nil {
		return &os.LinkError{Op: "rename", Old: src, New: s.archive, Err: err}
	}
	afterStep("archived")
	return nil
}

// openArchive opens archive/, making it first, without following links:
// an archive that is a symbolic link (to anywhere) is refused.
func (s *Source) openArchive() (int, error) {
	if err := os.Mkdir(s.archive, s.dirMode); err != nil && !os.IsExist(err) {
		return -1, err
	}
	fd, err := syscall.Open(s.archive, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: s.archive, Err: fmt.Errorf("%w (archive/ must be a directory, not a link)", err)}
	}
	return fd, nil
}

// archiveRefused is the error for an archive/ that is not a directory of
// its own (a link, a FIFO, a file): claimdeck neither reads nor writes
// through it, and says so rather than skip it.
func (s *Source) archiveRefused(op string, err error) error {
	if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.ENOTDIR) {
		return model.Errorf(model.CodeMisconfigured, op, "", "%s is a symbolic link or not a directory; claimdeck neither reads nor writes through it: replace it with a directory", s.archive)
	}
	return sources.StorageErr(op, "", err)
}

// checkArchive refuses a write while archive/ exists and is not a
// directory: the write could not retire what it replaces.
func (s *Source) checkArchive(op string) error {
	fi, err := os.Lstat(s.archive)
	switch {
	case os.IsNotExist(err):
		return nil
	case err != nil:
		return sources.StorageErr(op, "", err)
	case !fi.IsDir():
		return s.archiveRefused(op, syscall.ENOTDIR)
	}
	return nil
}
