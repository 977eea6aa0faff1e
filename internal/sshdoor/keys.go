package sshdoor

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	gossh "golang.org/x/crypto/ssh"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// Role is what a person may do at the dashboard over SSH.
type Role string

// The roles a keys file may give.
const (
	OnCall Role = "oncall" // may act: take over, release, cancel, hand off, …
	Viewer Role = "viewer" // may only look
)

// Identity is one line of the keys file: whose key it is, the role it
// carries, and the key itself.
type Identity struct {
	Person      string
	Role        Role
	Fingerprint string // SHA256:…, as ssh-keygen -lf prints it
	Comment     string // what follows the key on its line (alice@laptop)
	Line        int
	key         gossh.PublicKey
}

// Keys is a parsed keys file: who each public key belongs to.
type Keys struct {
	byKey map[string]Identity // by the key's wire form
}

// MaxKeysFile is the largest keys file read: ten thousand RSA-4096 lines
// fit with room to spare.
const MaxKeysFile = 8 << 20

// maxKeyErrors is how many bad lines one error lists; the rest are counted.
const maxKeyErrors = 10

// Lookup is the identity key belongs to, if the file names it.
func (k *Keys) Lookup(key gossh.PublicKey) (Identity, bool) {
	if k == nil || key == nil {
		return Identity{}, false
	}
	id, ok := k.byKey[string(key.Marshal())]
	return id, ok
}

// Len is how many keys the file gives access to.
func (k *Keys) Len() int {
	if k == nil {
		return 0
	}
	return len(k.byKey)
}

// LoadKeys reads and parses the keys file at path. A file that others may
// write is refused: whoever can write it can let themselves in.
func LoadKeys(path string) (*Keys, error) {
	data, fi, err := sources.ReadShared(path, sources.SharedRead{What: "keys file", Limit: MaxKeysFile, FollowLinks: true})
	if err != nil {
		return nil, err
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return nil, fmt.Errorf("keys file %s is writable by %s (mode %#o): whoever can write it can give themselves access: chmod go-w %s", path, writers(fi.Mode().Perm()), fi.Mode().Perm(), path)
	}
	return ParseKeys(path, data)
}

// writers names who, besides the owner, may write a file of mode perm.
func writers(perm fs.FileMode) string {
	switch {
	case perm&0o022 == 0o022:
		return "its group and others"
	case perm&0o002 != 0:
		return "others"
	}
	return "its group"
}

// ParseKeys parses a keys file. Each line is a person, a role, and a
// public key as ssh-keygen writes it; blank lines and lines starting with
// # are skipped:
//
//	alice oncall ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA… alice@laptop
//
// Any bad line refuses the whole file, with every bad line's number and
// what to fix: a file half read would let in, or keep out, people nobody
// chose. name is how errors call the file.
func ParseKeys(name string, data []byte) (*Keys, error) {
	k := &Keys{byKey: map[string]Identity{}}
	var problems []string
	more := 0
	for i, raw := range bytes.Split(data, []byte("\n")) {
		id, err := parseKeyLine(i+1, string(bytes.TrimSuffix(raw, []byte("\r"))))
		if err == nil && id.key != nil {
			if prev, dup := k.byKey[string(id.key.Marshal())]; dup {
				err = duplicate(prev, id)
			} else {
				k.byKey[string(id.key.Marshal())] = id
			}
		}
		if err != nil {
			if len(problems) == maxKeyErrors {
				more++
				continue
			}
			problems = append(problems, fmt.Sprintf("line %d: %v", i+1, err))
		}
	}
	if len(problems) == 0 {
		return k, nil
	}
	if more > 0 {
		problems = append(problems, fmt.Sprintf("and %d more bad lines", more))
	}
	return nil, fmt.Errorf("keys file %s: %s (nothing was changed: fix the file and reload)", name, strings.Join(problems, "; "))
}

// parseKeyLine parses one line; a blank or comment line gives a zero
// Identity.
func parseKeyLine(n int, line string) (Identity, error) {
	if err := model.CheckText("the line", line); err != nil {
		return Identity{}, err
	}
	trimmed := strings.TrimSpace(line)
	if trimmed == "" || strings.HasPrefix(trimmed, "#") {
		return Identity{}, nil
	}
	person, rest := cutField(trimmed)
	roleText, keyText := cutField(rest)
	if looksLikeKeyType(person) {
		return Identity{}, fmt.Errorf("starts with the key type %q: put the person and the role before the key (PERSON ROLE %s …)", person, person)
	}
	if err := model.CheckCallerName("person", person); err != nil {
		return Identity{}, err
	}
	role := Role(roleText)
	switch role {
	case OnCall, Viewer:
	case "":
		return Identity{}, fmt.Errorf("person %q has no role and no key: want PERSON ROLE KEY, e.g. %s oncall ssh-ed25519 AAAA…", person, person)
	default:
		if looksLikeKeyType(roleText) {
			return Identity{}, fmt.Errorf("person %q has no role: put oncall (may act) or viewer (may only look) between the person and the key", person)
		}
		return Identity{}, fmt.Errorf("role %q: want oncall (may act) or viewer (may only look)", roleText)
	}
	if keyText == "" {
		return Identity{}, fmt.Errorf("person %q has no key: paste the public key as ssh-keygen wrote it (the .pub file's line) after the role", person)
	}
	key, comment, options, extra, err := gossh.ParseAuthorizedKey([]byte(keyText))
	if err != nil {
		return Identity{}, fmt.Errorf("the key after %q %q is not an SSH public key (%v): paste the .pub file's line whole (ssh-ed25519 AAAA… comment)", person, roleText, err)
	}
	if len(options) > 0 {
		return Identity{}, fmt.Errorf("options before the key (%s) are not read here: remove them; the role says what the key may do", strings.Join(options, ","))
	}
	if len(bytes.TrimSpace(extra)) > 0 {
		return Identity{}, errors.New("holds more than one key: one key a line")
	}
	if err := acceptableKey(key); err != nil {
		return Identity{}, err
	}
	if err := model.CheckName("the key's comment", comment); err != nil {
		return Identity{}, err
	}
	return Identity{Person: person, Role: role, Fingerprint: gossh.FingerprintSHA256(key), Comment: comment, Line: n, key: key}, nil
}

// cutField splits s at its first run of spaces or tabs.
func cutField(s string) (field, rest string) {
	i := strings.IndexAny(s, " \t")
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimLeft(s[i:], " \t")
}

// looksLikeKeyType is a word ssh-keygen writes as a key's type.
func looksLikeKeyType(s string) bool {
	return strings.HasPrefix(s, "ssh-") || strings.HasPrefix(s, "ecdsa-") || strings.HasPrefix(s, "sk-")
}

// acceptableKey refuses keys that no longer protect anything, and
// certificates, which this file does not check.
func acceptableKey(key gossh.PublicKey) error {
	if _, ok := key.(*gossh.Certificate); ok {
		return errors.New("is a certificate: give the plain public key (the .pub file, not the -cert.pub one)")
	}
	switch key.Type() {
	case gossh.KeyAlgoDSA:
		return errors.New("is a DSA key, which OpenSSH no longer accepts: make an ed25519 key (ssh-keygen -t ed25519)")
	case gossh.KeyAlgoRSA:
		if ck, ok := key.(gossh.CryptoPublicKey); ok {
			if rk, ok := ck.CryptoPublicKey().(interface{ Size() int }); ok && rk.Size()*8 < 2048 {
				return fmt.Errorf("is a %d-bit RSA key, too short to trust: make an ed25519 key (ssh-keygen -t ed25519)", rk.Size()*8)
			}
		}
	}
	return nil
}

// duplicate is the error for a key already given on an earlier line.
func duplicate(prev, id Identity) error {
	if prev.Person != id.Person {
		return fmt.Errorf("the key %s is %s's on line %d: one key, one person (each person uses their own key)", id.Fingerprint, prev.Person, prev.Line)
	}
	if prev.Role != id.Role {
		return fmt.Errorf("the key %s is on line %d too, as %s: give each key one role", id.Fingerprint, prev.Line, prev.Role)
	}
	return fmt.Errorf("repeats line %d: remove one", prev.Line)
}
