package sources

import (
	"fmt"
	"strings"
)

// ErrSecretExposed is the cause of a refusal to read a secret file that
// its group or others can read.
var ErrSecretExposed = fmt.Errorf("readable by group or others")

// ReadSecret reads the secret in the file at path (a configured dsn_file,
// token_file): the whole file less one trailing newline (a file written
// by echo or an editor ends with one). It is read as ReadShared reads a
// file the user named (a final symbolic link is followed: systemd's
// credentials directory and Kubernetes' secret volumes are links), and
// refused, naming the file and the fix, when it is empty or its group or
// others may read it. No error quotes what the file holds.
func ReadSecret(what, path string) (string, error) {
	b, fi, err := ReadShared(path, SharedRead{What: what, Limit: 64 << 10, FollowLinks: true})
	if err != nil {
		return "", err
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return "", &SharedFileError{What: what, Path: path, Problem: fmt.Sprintf("is readable by group or others (mode %#o)", perm),
			Fix: "run chmod 600 " + path + " (only its owner may read a secret)", Err: ErrSecretExposed}
	}
	s := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if strings.TrimSpace(s) == "" {
		return "", &SharedFileError{What: what, Path: path, Problem: "is empty", Fix: "put the secret in it"}
	}
	return s, nil
}
