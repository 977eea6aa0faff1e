package sources

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"sync"
	"syscall"
)

// Files claimdeck reads from places others can write — a lock directory's
// tasks file, a mesh registry, a state file, a token file — are read by
// ReadShared alone: nothing planted there can hang the process (a FIFO),
// exhaust its memory (/dev/zero, a huge file) or point it at another
// user's file (a symbolic link), and no error quotes what the file holds.

// Kinds of refusal, for errors.Is.
var (
	ErrSharedLink       = errors.New("symbolic link not followed")
	ErrSharedNotRegular = errors.New("not a regular file")
	ErrSharedTooLarge   = errors.New("file too large")
)

// SharedRead says how one shared file may be read.
type SharedRead struct {
	// What names the file in errors: "tasks file", "mesh registry".
	What string
	// Limit is the most bytes read; a larger file is refused, not cut.
	Limit int64
	// FollowLinks lets the last part of the path be a symbolic link: only
	// for a path the user typed for this one run (--lock-token-file).
	FollowLinks bool
}

// SharedFileError is a shared file that was not read: which file, what is
// wrong with it, and what to do. It never holds the file's content.
type SharedFileError struct {
	What, Path string
	Problem    string
	Fix        string
	Err        error
}

func (e *SharedFileError) Error() string {
	s := fmt.Sprintf("%s %s %s", e.What, e.Path, e.Problem)
	if e.Fix != "" {
		s += ": " + e.Fix
	}
	return s
}

func (e *SharedFileError) Unwrap() error { return e.Err }

// ReadShared reads the regular file at path as r allows. The file is opened
// without blocking (a FIFO answers at once and is refused after fstat),
// without following a final symbolic link unless r.FollowLinks, and read up
// to r.Limit bytes. A missing file is an error that errors.Is(err,
// fs.ErrNotExist) recognises.
func ReadShared(path string, r SharedRead) ([]byte, os.FileInfo, error) {
	flags := syscall.O_RDONLY | syscall.O_NONBLOCK | syscall.O_CLOEXEC | syscall.O_NOCTTY
	if !r.FollowLinks {
		flags |= syscall.O_NOFOLLOW
	}
	fail := func(problem, fix string, err error) ([]byte, os.FileInfo, error) {
		return nil, nil, &SharedFileError{What: r.What, Path: path, Problem: problem, Fix: fix, Err: err}
	}
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, flags, 0)
		if err != syscall.EINTR {
			break
		}
	}
	switch {
	case err == nil:
	case errors.Is(err, syscall.ELOOP) && !r.FollowLinks:
		return fail("is a symbolic link", "links are not followed here; put the file itself at this path", ErrSharedLink)
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, &SharedFileError{What: r.What, Path: path, Problem: "does not exist", Err: fs.ErrNotExist}
	default:
		return fail("cannot be opened ("+err.Error()+")", "", err)
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fail("cannot be read", "", err)
	}
	if !fi.Mode().IsRegular() {
		return fail("is "+fileKind(fi.Mode())+", not a regular file", "replace it with a regular file", ErrSharedNotRegular)
	}
	if fi.Size() > r.Limit {
		return fail(fmt.Sprintf("is %d bytes, over the limit of %d", fi.Size(), r.Limit), "make it smaller or split it", ErrSharedTooLarge)
	}
	// One byte over the size fstat gave, so one read usually ends it; a
	// file still growing gets more room, never more than Limit+1.
	buf := make([]byte, min(fi.Size(), r.Limit)+1)
	n := 0
	for {
		if n == len(buf) {
			if int64(n) > r.Limit {
				break
			}
			buf = append(buf, make([]byte, min(int64(n), r.Limit+1-int64(n)))...)
		}
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fail("cannot be read ("+err.Error()+")", "", err)
		}
		if m == 0 {
			break
		}
		n += m
	}
	buf = buf[:n]
	if int64(len(buf)) > r.Limit {
		return fail(fmt.Sprintf("grew over the limit of %d bytes while being read", r.Limit), "make it smaller or split it", ErrSharedTooLarge)
	}
	return buf, fi, nil
}

// fileKind names what a non-regular file is, for an error.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "a special file"
}

// Exposed says how a file that holds secrets inline is exposed: "" when
// only its owner can read it, else what to tell the user. The mesh
// registry and the configuration warn with it.
func Exposed(mode os.FileMode) string {
	if perm := mode.Perm(); perm&0o077 != 0 {
		return fmt.Sprintf("is readable by group or others (mode %#o); run chmod 600", perm)
	}
	return ""
}

// yamlLine finds the line number yaml.v3 puts in its messages.
var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+)`) })

// ContentProblem describes where and how a JSON or YAML document failed to
// parse (line, column, kind of mistake) without quoting the document: a
// parser's own message repeats values ("cannot unmarshal !!str ..."), and
// the file may be another user's.
func ContentProblem(err error, data []byte) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := lineCol(data, syn.Offset)
		return fmt.Sprintf("line %d, column %d: not valid JSON", line, col)
	case errors.As(err, &typ):
		line, col := lineCol(data, typ.Offset)
		return fmt.Sprintf("line %d, column %d: a value of the wrong type", line, col)
	}
	if m := yamlLine().FindStringSubmatch(err.Error()); m != nil {
		return "line " + m[1] + ": not valid here (JSON or YAML)"
	}
	return "not readable as JSON or YAML"
}

// lineCol turns a byte offset into a 1-based line and column.
func lineCol(data []byte, off int64) (int, int) {
	line, col := 1, 1
	for i := int64(0); i < off && i < int64(len(data)); i++ {
		if data[i] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

// PrivateDir makes dir (0700, with its parents) or checks the one there:
// a directory this user owns that nobody else can write. What claimdeck
// keeps for itself (the embedded queue, the audit log, the sweep record)
// must not sit where another user can plant a link or a file of theirs.
func PrivateDir(what, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("%s %s: %w", what, dir, err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s %s is not a directory", what, dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s %s belongs to uid %d, not to this user (uid %d): use a directory of your own", what, dir, st.Uid, os.Geteuid())
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("%s %s can be written by others (mode %#o): chmod go-w it, or use a directory of your own", what, dir, perm)
	}
	return nil
}

// OpenPrivate opens (creating, 0600) a file claimdeck appends to in a
// PrivateDir: never through a link, only a regular file of this user's,
// tightened to 0600 if it had become wider.
func OpenPrivate(what, path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if errors.Is(err, syscall.ELOOP) {
		return nil, &SharedFileError{What: what, Path: path, Problem: "is a symbolic link", Fix: "links are not followed here; remove it", Err: ErrSharedLink}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &SharedFileError{What: what, Path: path, Problem: "is " + fileKind(fi.Mode()) + ", not a regular file", Fix: "remove it", Err: ErrSharedNotRegular}
	} else if st, ok := fi.Sys().(*syscall.Stat_t); err == nil && ok && int(st.Uid) != os.Geteuid() {
		err = fmt.Errorf("%s %s belongs to uid %d, not to this user: remove it", what, path, st.Uid)
	} else if err == nil && fi.Mode().Perm()&0o077 != 0 {
		err = f.Chmod(0o600)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
