//go:build unix

package webserver

import "syscall"

// defaultMaxConns stays a quarter below the open-file limit, leaving the
// rest to the process's own files, databases and outgoing requests.
func defaultMaxConns() int {
	var r syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r) != nil || r.Cur == 0 {
		return 1024
	}
	n := r.Cur - r.Cur/4 - 16
	if r.Cur < 64 {
		n = r.Cur / 2
	}
	return int(min(n, 4096))
}
