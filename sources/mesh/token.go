package mesh

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"math"
	"net/http"
	"strings"

	"github.com/claimdeck/claimdeck/model"
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

// Authorizes says whether r presents t as its bearer token
// (Authorization: Bearer …), compared as Matches does: the one check of
// every server claimdeck runs behind a token of its own.
func (t Token) Authorizes(r *http.Request) bool {
	presented, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && t.Matches(presented)
}

// StrongBits is the least estimated entropy a bearer token must have.
const StrongBits = 128

// CheckStrength is the one rule for every bearer token claimdeck serves
// behind (node serve, mcp --http): an estimate of its entropy, length times
// log2 of the alphabet its character classes span, where a token made of
// few distinct characters counts as at most four characters per distinct
// one. A random token passes (openssl rand -hex 32, a UUID); words,
// repeats and short strings do not. The error never quotes the token.
func (t Token) CheckStrength() error {
	if bits := t.bits(); bits < StrongBits {
		return fmt.Errorf("the token is too weak to serve behind (about %d bits of %d wanted): use a random one, e.g. openssl rand -hex 32", bits, StrongBits)
	}
	return nil
}

func (t Token) bits() int {
	lower, upper, digit, other := model.CharClasses(string(t))
	distinct := map[rune]bool{}
	n := 0
	for _, r := range string(t) {
		n++
		distinct[r] = true
	}
	alphabet := 0
	for _, c := range []struct {
		in   bool
		size int
	}{{lower, 26}, {upper, 26}, {digit, 10}, {other, 33}} {
		if c.in {
			alphabet += c.size
		}
	}
	if alphabet < 2 {
		return 0
	}
	return int(float64(min(n, 4*len(distinct))) * math.Log2(float64(alphabet)))
}
