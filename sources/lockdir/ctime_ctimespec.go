//go:build darwin || freebsd || netbsd

package lockdir

import "syscall"

// ctimeOf is the file's ctime, the time of its last change of content or
// inode (Unix ns).
func ctimeOf(st *syscall.Stat_t) int64 { return st.Ctimespec.Nano() }
