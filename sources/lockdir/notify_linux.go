package lockdir

import (
	"errors"
	"syscall"
	"unsafe"
)

// notifier is the kernel's word on what changed in the lock directory and
// in archive/ since the last scan: an inotify queue the scan reads, without
// waiting, before it looks at anything. The kernel queues an event inside
// the system call that makes the change (a write, a truncate, a rename, a
// link, an unlink, a chmod or touch), so every change finished before the
// queue is read is in it, named. A scan that finds nothing queued for a
// directory may keep what it saw there last time; one that finds names
// looks at those names alone. Where that cannot be promised the scan lists
// and lstats everything, as it did before (see trustedFS).
type notifier struct {
	fd        int   // -1: no word; every scan lists both directories
	dirWD     int32 // the lock directory's watch
	archiveWD int32 // archive/'s watch, -1 when archive/ is missing or untrusted
	// archiveOK says the word covers archive/: it is watched on a trusted
	// filesystem, or it is missing and its creation will be an event of
	// the lock directory's.
	archiveOK bool
	buf       []byte
}

// watchMask is every change to a directory's entries or a file's bytes,
// times, mode or links, and the end of the watch itself.
const watchMask = syscall.IN_CREATE | syscall.IN_DELETE | syscall.IN_MOVED_FROM | syscall.IN_MOVED_TO |
	syscall.IN_MODIFY | syscall.IN_ATTRIB | syscall.IN_DELETE_SELF | syscall.IN_MOVE_SELF | syscall.IN_ONLYDIR

// selfGone are the events that end a watch: its directory was removed,
// moved or unmounted, or the watch was dropped.
const selfGone = syscall.IN_DELETE_SELF | syscall.IN_MOVE_SELF | syscall.IN_UNMOUNT | syscall.IN_IGNORED

// trustedFS says whether a filesystem raises inotify events for every
// change to it, whoever makes it: local ones (ext2/3/4, XFS, Btrfs, tmpfs,
// F2FS). On NFS, SMB or FUSE another host's writes raise nothing here, and
// overlayfs misses changes made to its layers underneath; those are listed.
func trustedFS(path string) bool {
	var st syscall.Statfs_t
	if syscall.Statfs(path, &st) != nil {
		return false
	}
	switch uint32(st.Type) {
	case 0xEF53, // ext2, ext3, ext4
		0x58465342, // XFS
		0x9123683E, // Btrfs
		0x01021994, // tmpfs
		0xF2F52010: // F2FS
		return true
	}
	return false
}

// newNotifier watches dir. Without inotify (no instance left, a watch
// limit reached) or on a filesystem it cannot vouch for, it gives no word.
func newNotifier(dir string) *notifier {
	n := &notifier{fd: -1, archiveWD: -1}
	if !trustedFS(dir) {
		return n
	}
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		return n
	}
	wd, err := syscall.InotifyAddWatch(fd, dir, watchMask)
	if err != nil {
		syscall.Close(fd)
		return n
	}
	n.fd, n.dirWD, n.buf = fd, int32(wd), make([]byte, 64<<10)
	return n
}

// watchArchive (re)watches archive/ before it is listed whole, so that a
// change during the listing is queued for the next scan.
func (n *notifier) watchArchive(path string) {
	if n.fd < 0 {
		return
	}
	wd, err := syscall.InotifyAddWatch(n.fd, path, watchMask|syscall.IN_DONT_FOLLOW|syscall.IN_ONLYDIR)
	switch {
	case err == nil && trustedFS(path):
		if n.archiveWD >= 0 && n.archiveWD != int32(wd) {
			syscall.InotifyRmWatch(n.fd, uint32(n.archiveWD)) // the archive/ that was replaced
		}
		n.archiveWD, n.archiveOK = int32(wd), true
	case errors.Is(err, syscall.ENOENT):
		n.archiveWD, n.archiveOK = -1, true // its creation is a lock-directory event
	default:
		if err == nil {
			syscall.InotifyRmWatch(n.fd, uint32(wd))
		}
		n.archiveWD, n.archiveOK = -1, false
	}
}

// drain reads every event queued since the last drain. Events of a watch
// that was replaced are dropped: the directory they name is no longer read.
func (n *notifier) drain() news {
	out := news{dir: map[string]struct{}{}, archive: map[string]struct{}{}}
	for n.fd >= 0 {
		m, err := syscall.Read(n.fd, n.buf)
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.EAGAIN {
			break
		}
		if err != nil || m <= 0 {
			n.close() // the queue is unreadable: from now on, list
			break
		}
		n.parse(n.buf[:m], &out)
	}
	if n.fd < 0 {
		out.dirAll, out.archiveAll = true, true
	}
	if !n.archiveOK {
		out.archiveAll = true
	}
	return out
}

func (n *notifier) parse(b []byte, out *news) {
	for len(b) >= syscall.SizeofInotifyEvent {
		ev := (*syscall.InotifyEvent)(unsafe.Pointer(&b[0]))
		end := syscall.SizeofInotifyEvent + int(ev.Len)
		if end > len(b) {
			break
		}
		name := cString(b[syscall.SizeofInotifyEvent:end])
		b = b[end:]
		switch {
		case ev.Mask&syscall.IN_Q_OVERFLOW != 0:
			out.dirAll, out.archiveAll = true, true // events were lost
		case ev.Wd == n.dirWD && ev.Mask&selfGone != 0:
			n.close() // the lock directory itself went: never trust this queue again
		case ev.Wd == n.dirWD && name == "":
			out.dirAll = true // the directory's own mode or times
		case ev.Wd == n.dirWD && name == "archive":
			out.archiveAll = true // created, removed, replaced or retargeted: watched again
		case ev.Wd == n.dirWD:
			out.dir[name] = struct{}{}
		case ev.Wd == n.archiveWD && ev.Mask&selfGone != 0:
			out.archiveAll, n.archiveWD, n.archiveOK = true, -1, false
		case ev.Wd == n.archiveWD && name == "":
			out.archiveAll = true
		case ev.Wd == n.archiveWD:
			out.archive[name] = struct{}{}
		}
	}
}

// cString is the NUL-padded name of an inotify event.
func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

func (n *notifier) close() {
	if n.fd >= 0 {
		syscall.Close(n.fd)
		n.fd = -1
	}
}
