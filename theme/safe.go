package theme

import (
	"strings"
	"unicode/utf8"
)

// Safe makes text from outside (task titles, agent names, reasons, error
// messages) harmless to print on a terminal, on one line: escape sequences
// (CSI, OSC, DCS, SOS, PM, APC, in their 7-bit and 8-bit forms) are dropped
// whole, newlines and tabs become spaces, and every other control
// character, bidi override and invalid UTF-8 byte becomes "?". Text that
// needs none of this is returned as it is.
func Safe(s string) string {
	if printableASCII(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			b.WriteByte('?')
			i++
			continue
		case r == 0x1b:
			i += escapeLen(s[i:])
			continue
		case r == 0x9b:
			i += n + csiLen(s[i+n:])
			continue
		case r == 0x90 || r == 0x98 || r == 0x9d || r == 0x9e || r == 0x9f:
			i += n + stringLen(s[i+n:])
			continue
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		case r < 0x20 || (r >= 0x7f && r <= 0x9f) || bidiControl(r):
			b.WriteByte('?')
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// bidiControl reports the characters that reorder text around them (the
// "Trojan Source" characters) and the invisible direction marks.
func bidiControl(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) ||
		r == 0x200e || r == 0x200f || r == 0x061c
}

// escapeLen is the length of the escape sequence s starts with (s[0] is ESC).
func escapeLen(s string) int {
	if len(s) < 2 {
		return len(s)
	}
	switch s[1] {
	case '[':
		return 2 + csiLen(s[2:])
	case ']', 'P', 'X', '^', '_':
		return 2 + stringLen(s[2:])
	}
	if s[1] >= 0x20 && s[1] <= 0x7e {
		return 2 // a two-character sequence: ESC c, ESC 7, …
	}
	return 1
}

// csiLen is the length of a control sequence's parameters, intermediates
// and final byte; an unfinished sequence runs to the end of s.
func csiLen(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x40 && c <= 0x7e {
			return i + 1
		}
		if c < 0x20 || c > 0x7e {
			return i // not part of a sequence: stop before it
		}
	}
	return len(s)
}

// stringLen is the length of an OSC/DCS/SOS/PM/APC string up to and with its
// terminator (BEL, ESC \ or the 8-bit ST); an unterminated string runs to
// the end of s.
func stringLen(s string) int {
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == 0x07:
			return i + 1
		case s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\':
			return i + 2
		case s[i] == 0xc2 && i+1 < len(s) && s[i+1] == 0x9c:
			return i + 2
		}
	}
	return len(s)
}
