package lockdir

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// flockName is the directory's write lock file.
const flockName = ".claimdeck.flock"

// flockWait bounds the wait for the directory's write lock: claimdeck's
// writers hold it for milliseconds, so a longer wait means a process that
// is stuck, or that took it to stop every writer.
var flockWait = 15 * time.Second

// lock takes the directory's write lock: this process's mutex, then an
// exclusive flock on .claimdeck.flock, which the kernel drops if the process
// dies, so a crashed writer never leaves the directory locked. The flock is
// waited for at most flockWait and no longer than ctx; a write that gives
// up names who holds it. archive/ is checked under the lock: a write that
// could not retire what it replaces does not start.
//
// While a move is marked (.claimdeck.move), the write is refused under the
// lock: frozen, to be retried; moved, to be made on the target.
func (s *Source) lock(ctx context.Context, op string) (func(), error) {
	unlock, err := s.lockUnguarded(ctx, op)
	if err != nil {
		return nil, err
	}
	if err := s.writeGuard(op); err != nil {
		unlock()
		return nil, err
	}
	return unlock, nil
}

// lockUnguarded is lock without the move marker's check: for the writes of
// the marker itself.
func (s *Source) lockUnguarded(ctx context.Context, op string) (func(), error) {
	s.writeMu.Lock()
	if s.lockFile == nil {
		f, err := openFlock(op, filepath.Join(s.dir, flockName))
		if err != nil {
			s.writeMu.Unlock()
			return nil, err
		}
		s.lockFile = f
	}
	fd := int(s.lockFile.Fd())
	if err := waitFlock(ctx, op, fd, s.lockFile.Name()); err != nil {
		s.writeMu.Unlock()
		return nil, err
	}
	s.flocked.Store(true)
	unlock := func() {
		s.flocked.Store(false)
		_ = syscall.Flock(fd, syscall.LOCK_UN)
		s.writeMu.Unlock()
	}
	if err := s.checkArchive(op); err != nil {
		unlock()
		return nil, err
	}
	return unlock, nil
}

// openFlock opens the write lock file, never through a link, made 0600. A
// reader can flock a file it can only read, so one that others can read or
// write is tightened to 0640 at most when it is ours, and refused when it
// is not.
func openFlock(op, p string) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if errors.Is(err, syscall.ELOOP) {
		return nil, model.Errorf(model.CodeMisconfigured, op, "", "%s is a symbolic link; links are not followed in a lock directory: remove it", p)
	}
	if err != nil {
		return nil, sources.StorageErr(op, "", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, sources.StorageErr(op, "", err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, model.Errorf(model.CodeMisconfigured, op, "", "%s is not a regular file: remove it", p)
	}
	if perm := fi.Mode().Perm(); perm&^0o640 != 0 {
		st, _ := fi.Sys().(*syscall.Stat_t)
		if st == nil || int(st.Uid) != os.Geteuid() || f.Chmod(perm&0o640) != nil {
			f.Close()
			return nil, model.Errorf(model.CodeMisconfigured, op, "", "%s has mode %#o and is not this user's to tighten; anyone who can open it can stop every writer: chmod 600 (or 640) it", p, perm)
		}
	}
	return f, nil
}

// waitFlock takes the exclusive flock on fd, polling without blocking so
// that ctx and the bound end the wait; the first try costs one system call.
func waitFlock(ctx context.Context, op string, fd int, path string) error {
	var deadline time.Time
	pause := 100 * time.Microsecond
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case !errors.Is(err, syscall.EWOULDBLOCK):
			return sources.StorageErr(op, "", err)
		}
		now := time.Now()
		if deadline.IsZero() {
			deadline = now.Add(flockWait)
		}
		if now.After(deadline) {
			return model.Errorf(model.CodeAPIError, op, "", "the lock directory's write lock %s has been held for over %s by %s; try again, or stop that process", path, flockWait, flockHolder(fd))
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return model.Errorf(model.CodeAPIError, op, "", "gave up waiting for the lock directory's write lock %s (held by %s): %w", path, flockHolder(fd), ctx.Err())
		case <-t.C:
		}
		pause = min(2*pause, 5*time.Millisecond)
	}
}

// flockHolder names the process holding the flock on fd's file, as
// /proc/locks tells it: its pid and command name, or that no process on
// this host holds it (another host, through a network share's lock manager).
func flockHolder(fd int) string {
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil {
		return "another process"
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return "another process (/proc/locks is unreadable)"
	}
	defer f.Close()
	want := fmt.Sprintf(":%d", st.Ino)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// 1: FLOCK  ADVISORY  WRITE 4242 08:01:1234567 0 EOF
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] != "FLOCK" || !strings.HasSuffix(fields[5], want) || !sameDev(fields[5], uint64(st.Dev)) {
			continue
		}
		pid, err := strconv.Atoi(fields[4])
		if err != nil || pid <= 0 {
			continue
		}
		comm, _ := os.ReadFile(filepath.Join("/proc", fields[4], "comm"))
		if name := strings.TrimSpace(string(comm)); name != "" {
			return fmt.Sprintf("pid %d (%s)", pid, sanitizeComm(name))
		}
		return fmt.Sprintf("pid %d", pid)
	}
	return "no process on this host (another host, through the share's lock manager?)"
}

// sameDev compares /proc/locks' MAJ:MIN:INODE device with a stat's.
func sameDev(field string, dev uint64) bool {
	parts := strings.Split(field, ":")
	if len(parts) != 3 {
		return false
	}
	maj, err1 := strconv.ParseUint(parts[0], 16, 32)
	mnr, err2 := strconv.ParseUint(parts[1], 16, 32)
	if err1 != nil || err2 != nil {
		return false
	}
	return maj == (dev&0xfff00)>>8|(dev&0xfffff00000000000)>>32 && mnr == dev&0xff|(dev&0xffffff00000)>>12
}

// sanitizeComm keeps a process name printable: it is chosen by whoever
// started the process.
func sanitizeComm(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
}
