package lockdir

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// DefaultLease is seed 004's lock lifetime: "Check if expired (1 hour timeout)".
const DefaultLease = time.Hour

// Config configures one lock directory.
type Config struct {
	Name string
	// Path is the lock directory (seed 004's project/.locks). It is created
	// if missing, unless MustExist.
	Path string
	// MustExist refuses a missing directory with MISCONFIGURED naming it,
	// so a mistyped path is reported rather than made.
	MustExist bool
	// TasksFile is the optional JSON or YAML list of tasks (id, title,
	// description, priority, class) that are not claimed yet. Empty means
	// claimdeck keeps its own tasks.json inside Path.
	TasksFile string
	// Lease is granted on claim and heartbeat when the request names none,
	// and is assumed for lock files without expires_at. Zero means 1 h.
	Lease time.Duration
	// Grace is how long an agent's expired lease waits before claim-next
	// rescues the task (default model.DefaultPolicy().Grace).
	Grace time.Duration
	// Now replaces the clock in tests. A source given one judges leases by
	// it alone: the rule that ends a lease a whole lease after its file
	// last changed reads the file's mtime, which is on the kernel's clock,
	// and applies only where the source reads that clock too.
	Now func() time.Time
}

// The file kinds of a task, in the order in which they decide its state: a
// live lock beats everything, a seed-archived marker only the tasks file.
type kind int

const (
	kindLock kind = iota
	kindDone
	kindFailed
	kindQueued
	kindArchivedDone
	kindArchivedFailed
	numKinds
)

var kindNames = [numKinds]string{"lock", "done", "failed", "queued", "archived done", "archived failed"}

// suffix is the file name ending of a kind; archived kinds live in archive/.
func (k kind) suffix() string {
	switch k {
	case kindLock:
		return ".lock"
	case kindDone, kindArchivedDone:
		return ".done"
	case kindFailed, kindArchivedFailed:
		return ".failed"
	}
	return ".queued"
}

// versionOf is the version of a file of this kind holding data: any change
// of its bytes changes it ("changed since the human read it").
func (k kind) versionOf(data []byte) string {
	v := string("ldfqDF"[k]) + ":"
	if data != nil {
		v += contentHash(data)
	}
	return v
}

// privatePrefix starts every file claimdeck keeps to itself (temp files,
// locks moved aside): hidden, so the seed's `*.lock` globs never see them.
const privatePrefix = ".cd-"

// heldPrefix starts a file moved aside in the middle of a change: the
// task's own file, named after it (see heldPath).
const heldPrefix = privatePrefix + "held-"

// tempPrefix starts a file being written before it is published.
const tempPrefix = privatePrefix + "tmp-"

// afterStep is called after every step of a multi-step change; tests set it
// to kill the process there and check what the directory reads as.
var afterStep = func(step string) {}

// onDisk is called before each listing ("list"), lstat ("lstat") and open
// ("open") of a file a read makes; tests count them there.
var onDisk = func(op, path string) {}

// Source is a seed 004 lock directory.
type Source struct {
	cfg      Config
	kernel   bool // cfg.Now is the real clock: file mtimes can be compared with it
	dir      string
	archive  string
	instance string
	// dirMode is the directory's permission bits, which archive/ takes;
	// fileMode the same without execute, which every file written takes.
	dirMode, fileMode os.FileMode

	// writeMu orders this process's writers before they queue on the
	// directory's flock, which orders claimdeck processes among themselves.
	writeMu  sync.Mutex
	lockFile *os.File
	flocked  atomic.Bool // this process holds the directory's flock

	tasksMu sync.Mutex
	tasks   tasksFile

	scanMu sync.Mutex
	view   view
	// notify is what changed since the last scan; under scanMu. The first
	// scan makes it: a call on one task never scans, and closing an inotify
	// instance costs a process milliseconds (the kernel waits out an RCU
	// grace period), which such a call would pay for nothing.
	notify *notifier

	marks sources.MarkCache // the move marker as last read

	closeOnce sync.Once
}

var (
	_ sources.Source  = (*Source)(nil)
	_ sources.Watcher = (*Source)(nil)
)

// Open opens (creating if needed) the lock directory cfg.Path.
func Open(cfg Config) (*Source, error) {
	if strings.TrimSpace(cfg.Path) == "" {
		return nil, model.Errorf(model.CodeMisconfigured, "open", "", "lockdir source %q has no path", cfg.Name)
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.Grace <= 0 {
		cfg.Grace = model.DefaultPolicy().Grace
	}
	kernel := cfg.Now == nil
	if kernel {
		cfg.Now = time.Now
	}
	dir, err := filepath.Abs(cfg.Path)
	if err != nil {
		return nil, model.Wrap(model.CodeMisconfigured, "open", "", err)
	}
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) && cfg.MustExist {
		return nil, sources.NotMade(model.Errorf(model.CodeMisconfigured, "open", "", "lockdir source %q: the directory %s does not exist (check path; --create makes it)", cfg.Name, dir))
	}
	// A new directory is this user's alone (0700) until the team opens
	// it up; its files follow whatever modes it is given.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, model.Wrap(model.CodeMisconfigured, "open", "", err)
	}
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return nil, model.Errorf(model.CodeMisconfigured, "open", "", "%s is not a directory", dir)
	}
	tasks := cfg.TasksFile
	if tasks == "" {
		tasks = filepath.Join(dir, "tasks.json")
	}
	s := &Source{cfg: cfg, kernel: kernel, dir: dir, archive: filepath.Join(dir, "archive"), instance: randomHex(6),
		dirMode: fi.Mode().Perm(), fileMode: fi.Mode().Perm() & 0o666}
	s.tasks.path, s.tasks.index, s.tasks.locked, s.tasks.mode = tasks, filepath.Join(dir, indexName), s.flocked.Load, s.fileMode
	s.view.init()
	if err := s.tasks.check(); err != nil {
		return nil, err
	}
	return s, nil
}

// Name is the configured source name.
func (s *Source) Name() string { return s.cfg.Name }

// Caps: claims are atomic (link) and take any id as a new task, dead
// holders' tasks are rescued, changes are pushed (fsnotify), there are no
// sub-tasks.
func (s *Source) Caps() sources.Caps {
	return sources.Caps{AtomicClaim: true, Rescue: true, ClaimsAnyID: true, Watch: true, Escalation: true, WriteCheck: true, Trail: true,
		Lacks: []string{"sub-tasks: a lock directory records no parent task"}}
}

// Close releases the directory lock file and the inotify queue.
func (s *Source) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.scanMu.Lock()
		if s.notify != nil {
			s.notify.close()
		}
		s.scanMu.Unlock()
		s.writeMu.Lock()
		defer s.writeMu.Unlock()
		if s.lockFile != nil {
			err = s.lockFile.Close()
		}
	})
	return err
}

func (s *Source) now() time.Time { return s.cfg.Now().UTC() }

// heldPath is where a task's file of kind k waits while a change moves it
// aside: one name per task and kind, so a reader finds it with one lstat,
// and until the change is published it still counts as that file.
func (s *Source) heldPath(id string, k kind) string {
	return inDir(s.dir, heldPrefix, id, k.suffix())
}

// path is where a task's file of kind k lives.
func (s *Source) path(id string, k kind) string {
	if k == kindArchivedDone || k == kindArchivedFailed {
		return inDir(s.archive, "", id, k.suffix())
	}
	return inDir(s.dir, "", id, k.suffix())
}

// inDir is filepath.Join(dir, prefix+id+suffix) for a clean dir (Open's
// filepath.Abs) in one allocation: a name without a separator needs no
// Clean. Any other id (a tasks-file entry's, refused before any write)
// goes through filepath.Join as before.
func inDir(dir, prefix, id, suffix string) string {
	if strings.ContainsAny(id, `/\`) || dir == "" || os.IsPathSeparator(dir[len(dir)-1]) {
		return filepath.Join(dir, prefix+id+suffix)
	}
	return dir + string(os.PathSeparator) + prefix + id + suffix
}

// checkID refuses task ids that could name a file outside the directory or
// one of claimdeck's private files.
func checkID(id string) error {
	switch {
	case id == "":
		return errors.New("empty task id")
	case strings.ContainsAny(id, "/\\\x00"):
		return fmt.Errorf("task id %q contains a path separator or NUL", id)
	case strings.Contains(id, ".."):
		return fmt.Errorf("task id %q contains \"..\"", id)
	case strings.HasPrefix(id, "."):
		return fmt.Errorf("task id %q starts with a dot (hidden, and the seed's globs skip it)", id)
	case len(id) > 200:
		return fmt.Errorf("task id is %d bytes; file names allow about 200", len(id))
	}
	return nil
}

func refuseID(op, id string) error {
	if err := checkID(id); err != nil {
		return model.Errorf(model.CodeMisconfigured, op, "", "%v", err)
	}
	return nil
}

// lockTask takes the write lock for a change of one task, and first
// finishes what a process that died in the middle of changing it left
// behind: holding the lock, no live writer is mid-change.
func (s *Source) lockTask(ctx context.Context, op, id string) (func(), error) {
	unlock, err := s.lock(ctx, op)
	if err != nil {
		return nil, err
	}
	s.recover(id)
	return unlock, nil
}

// recover settles the files a dead writer left moved aside for a task. A
// held file that a published file replaces is spent: to archive/, never
// deleted. Otherwise the change never got published and the held file goes
// back to its name; if that name has been taken since, to archive/.
//
// It returns the kinds it found a held file for: only those can still have
// one afterwards (a move that failed), so a read right after it looks for
// held names of those kinds alone (readSettled).
func (s *Source) recover(id string) (found [numKinds]bool) {
	var live []*fileState
	for k := kindLock; k <= kindQueued; k++ {
		held := s.heldPath(id, k)
		fi, err := os.Lstat(held)
		if err != nil {
			continue // the usual case: one lstat per kind, nothing to settle
		}
		found[k] = true
		fs := readFile(held, k, fi)
		if fs == nil {
			continue
		}
		if live == nil {
			for lk := kindLock; lk <= kindQueued; lk++ {
				if f := readFile(s.path(id, lk), lk, nil); f != nil {
					live = append(live, f)
				}
			}
		}
		switch {
		case replaced(fs, live):
			s.toArchive(held, id, "recovered")
		case os.Link(held, s.path(id, k)) == nil:
			os.Remove(held)
		default:
			s.toArchive(held, id, "displaced")
		}
	}
	return found
}

// replaced reports whether one of files was made from fs.
func replaced(fs *fileState, files []*fileState) bool {
	for _, f := range files {
		if f != nil && f != fs && f.rec.Replaces != "" && f.rec.Replaces == fs.version {
			return true
		}
	}
	return false
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}

// writeTemp writes data to a new private file in dir and returns its path.
// Plain system calls: an os.File would also register with the poller, a
// system call a claim does not need.
func (s *Source) writeTemp(dir string, data []byte) (string, error) {
	p := filepath.Join(dir, tempPrefix+randomHex(8))
	fd, err := syscall.Open(p, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, uint32(s.fileMode))
	if err != nil {
		return "", &os.PathError{Op: "create", Path: p, Err: err}
	}
	// The directory's modes, not the umask's: a file holding a live token
	// is as readable as the directory the team made, no more.
	err = syscall.Fchmod(fd, uint32(s.fileMode))
	for len(data) > 0 && err == nil {
		var n int
		n, err = syscall.Write(fd, data)
		if err == syscall.EINTR {
			err = nil
		}
		data = data[max(n, 0):]
	}
	if cerr := syscall.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(p)
		return "", &os.PathError{Op: "write", Path: p, Err: err}
	}
	return p, nil
}

// readSmall reads a file lstat said is size bytes long, asking for one byte
// more: getting it means the file grew while being read. Usually one read.
func readSmall(path string, size int64) ([]byte, error) {
	onDisk("open", path)
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	buf := make([]byte, size+1)
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		short := m < len(buf)-n
		n += m
		if m == 0 || short {
			break // a regular file reads short only at its end: no second read to hear it
		}
	}
	return buf[:n], nil
}

// errExist says a publish found its name taken.
var errExist = errors.New("file exists")

// publish makes data appear at dst all at once and only if dst does not
// exist: link() fails with EEXIST instead of replacing anything.
func (s *Source) publish(data []byte, dst string) error {
	tmp, err := s.writeTemp(filepath.Dir(dst), data)
	if err != nil {
		return err
	}
	afterStep("temp written")
	err = os.Link(tmp, dst)
	if err == nil {
		afterStep("published")
	}
	os.Remove(tmp)
	if errors.Is(err, os.ErrExist) {
		return errExist
	}
	return err
}

// replace makes data appear at dst all at once, replacing what is there.
// Only for files claimdeck owns or has just verified under the write lock.
func (s *Source) replace(data []byte, dst string) error {
	tmp, err := s.writeTemp(filepath.Dir(dst), data)
	if err != nil {
		return err
	}
	afterStep("temp written")
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return err
	}
	afterStep("replaced")
	return nil
}

// fileSig identifies one version of a file without reading it.
type fileSig struct {
	ino   uint64
	size  int64
	mtime int64
	mode  os.FileMode
}

func sigOf(fi os.FileInfo) fileSig {
	sig := fileSig{size: fi.Size(), mtime: fi.ModTime().UnixNano(), mode: fi.Mode()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		sig.ino = uint64(st.Ino)
	}
	return sig
}

// fileState is one file as last read.
type fileState struct {
	kind    kind
	path    string
	sig     fileSig
	mtime   time.Time
	rec     *record
	problem string
	version string
}

// readFile reads one file. It returns nil when the file does not exist
// (or vanished while being read: a rename by a writer, not a fault). Any
// other trouble becomes the file's problem; nothing is ever removed. fi is
// the file's lstat when the caller has it already, else nil.
func readFile(path string, k kind, fi os.FileInfo) *fileState {
	for attempt := 0; ; attempt++ {
		fs, retry := readOnce(path, k, fi)
		if !retry || attempt == 2 {
			return fs
		}
		fi = nil
	}
}

// readOnce reads a file once; retry asks for another try because the file
// changed while it was being read (the seed's `cat >` writes in place).
func readOnce(path string, k kind, fi os.FileInfo) (fs *fileState, retry bool) {
	if fi == nil {
		onDisk("lstat", path)
		var err error
		if fi, err = os.Lstat(path); err != nil {
			if os.IsNotExist(err) {
				return nil, false
			}
			return &fileState{kind: k, path: path, rec: &record{}, problem: "cannot stat: " + errText(err), version: "e:" + errText(err)}, false
		}
	}
	fs = &fileState{kind: k, path: path, sig: sigOf(fi), mtime: fi.ModTime().UTC(), rec: &record{}}
	fs.version = k.versionOf(nil) + strconv.FormatUint(fs.sig.ino, 16)
	switch mode := fi.Mode(); {
	case mode&os.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		fs.problem = fmt.Sprintf("a symbolic link to %q; links are not followed in a lock directory", target)
		fs.version += ":" + contentHash([]byte(target))
		return fs, false
	case mode.IsDir():
		fs.problem = "a directory, not a lock file"
		return fs, false
	case !mode.IsRegular():
		fs.problem = "not a regular file (" + mode.Type().String() + ")"
		return fs, false
	case fi.Size() > maxFile:
		fs.problem = fmt.Sprintf("file is %d bytes, over the 1 MiB limit; not read", fi.Size())
		fs.version += fmt.Sprintf(":%d:%d", fs.sig.size, fs.sig.mtime)
		return fs, false
	}
	data, err := readSmall(path, fi.Size())
	if err != nil {
		if os.IsNotExist(err) {
			return nil, false
		}
		fs.problem = "unreadable: " + errText(err)
		fs.version += ":" + errText(err)
		return fs, false
	}
	if int64(len(data)) > fi.Size() {
		fs.problem = "the file kept changing while being read"
		return fs, true // grew since lstat: being written right now
	}
	fs.rec, fs.problem = parseLock(data)
	fs.version = k.versionOf(data)
	if fs.problem != "" {
		if again, err := os.Lstat(path); err != nil || sigOf(again) != fs.sig {
			return fs, true
		}
	}
	return fs, false
}

func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
