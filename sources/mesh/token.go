package mesh

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
)

// Token is a bearer token. It prints and marshals as "[redacted]" however it
// is formatted, so a registry, a node or an error can be logged whole without
// leaking the secret; only Reveal gives the value, for the Authorization
// header.
type Token string

const redacted = "[redacted]"

// Reveal is the secret itself. Call it only to put it on the wire.
func (t Token) Reveal() string { return string(t) }

// Set reports whether there is a token at all.
func (t Token) Set() bool { return t != "" }

func (t Token) String() string { return t.mask() }

// GoString covers %#v.
func (t Token) GoString() string { return fmt.Sprintf("%q", t.mask()) }

// Format covers every verb, including the ones (%d, %x) that would otherwise
// print the underlying string inside a "bad verb" message.
func (t Token) Format(f fmt.State, verb rune) {
	if verb == 'q' || f.Flag('#') {
		fmt.Fprintf(f, "%q", t.mask())
		return
	}
	fmt.Fprint(f, t.mask())
}

// MarshalJSON keeps tokens out of `config show` and JSON logs.
func (t Token) MarshalJSON() ([]byte, error) { return []byte(`"` + t.mask() + `"`), nil }

func (t Token) mask() string {
	if t == "" {
		return ""
	}
	return redacted
}

// Matches compares a presented token with t in constant time. Both sides are
// hashed first so that not even the length of the secret leaks through
// timing. An unset token matches nothing: a node without a token fails
// closed.
func (t Token) Matches(presented string) bool {
	if t == "" {
		return false
	}
	a := sha256.Sum256([]byte(t))
	b := sha256.Sum256([]byte(presented))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}
