package theme

import (
	"testing"
	"unicode/utf8"
)

func TestSafe(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain text is untouched", "Design VPC module", "Design VPC module"},
		{"unicode text is untouched", "Überprüfung — 検証", "Überprüfung — 検証"},
		{"OSC retitle ended by BEL is dropped", "a\x1b]0;pwned\x07b", "ab"},
		{"OSC ended by ST is dropped", "a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\b", "alinkb"},
		{"CSI clear screen is dropped", "\x1b[2Jclear", "clear"},
		{"CSI colour with parameters is dropped", "\x1b[1;31mred\x1b[0m", "red"},
		{"8-bit CSI is dropped", "x\u009b31my", "xy"},
		{"8-bit OSC ended by 8-bit ST is dropped", "x\u009d0;t\u009cy", "xy"},
		{"DCS is dropped", "a\x1bPq#0\x1b\\b", "ab"},
		{"two-character escape is dropped", "a\x1bcb", "ab"},
		{"unterminated OSC runs to the end", "a\x1b]0;never ends", "a"},
		{"newlines and tabs become spaces", "one\ntwo\r\tthree", "one two  three"},
		{"other controls become ?", "bell\x07 nul\x00 del\x7f c1\u0085", "bell? nul? del? c1?"},
		{"bidi overrides become ?", "admin\u202e\u2066txt.exe\u2069", "admin??txt.exe?"},
		{"invalid UTF-8 becomes ?", "a\xffb\x9bc", "a?b?c"},
		{"a lone ESC at the end is dropped", "end\x1b", "end"},
	} {
		if got := Safe(tc.in); got != tc.want {
			t.Errorf("%s: Safe(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

// safeOnTerminal is what Safe promises of its output.
func safeOnTerminal(t *testing.T, in, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("Safe(%q) = %q: not valid UTF-8", in, out)
	}
	for _, r := range out {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) || bidiControl(r) {
			t.Fatalf("Safe(%q) = %q: holds %U", in, out, r)
		}
	}
	if again := Safe(out); again != out {
		t.Fatalf("Safe is not idempotent: Safe(%q) = %q", out, again)
	}
}

func FuzzSafe(f *testing.F) {
	for _, s := range []string{
		"", "plain", "\x1b]0;pwned\x07\x1b[2Jclear me\nand \u009b31m",
		"\x1bP\x1b\\", "\x1b[", "\u202etxt", "\xc2", "\xc2\x9b", "a\x1b\x1b[m", "\x1b]\xc2\x9c",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := Safe(in)
		safeOnTerminal(t, in, out)
		if printableASCII(in) && out != in {
			t.Fatalf("Safe changed printable text %q to %q", in, out)
		}
		if len(out) > len(in) {
			t.Fatalf("Safe(%q) = %q grew: a replacement is never longer than what it replaces", in, out)
		}
	})
}
