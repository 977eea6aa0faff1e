package model

import (
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/unicode/runenames"
)

// A name is shown on every screen and compared at every decision, so two
// names that look alike must be one name or refused. CheckCallerName reads
// a name through the checks below before it looks for HumanPrefix or
// ViaHTTP: a compatibility form (ＨＵＭＡＮ, the fullwidth colon of
// HUMAN：) is refused as the plain character it stands for, a letter of
// another script that looks like a Latin one (HUМAN with a Cyrillic М) is
// refused beside Latin letters and read as that Latin letter by the
// reserved-word checks, and blank glyphs and the trail's own separators
// are refused outright.

// RuneName is how a refusal names a character: "U+041C CYRILLIC CAPITAL
// LETTER EM".
func RuneName(r rune) string {
	if n := runenames.Name(r); n != "" && !strings.HasPrefix(n, "<") {
		return fmt.Sprintf("%U %s", r, n)
	}
	return fmt.Sprintf("%U", r)
}

// blank are characters that draw as nothing although Unicode calls them
// letters or symbols: a name made of them reads as empty, and one of them
// inside a name makes two names look the same.
var blank = map[rune]bool{
	0x2800:  true, // BRAILLE PATTERN BLANK
	0x3164:  true, // HANGUL FILLER
	0xFFA0:  true, // HALFWIDTH HANGUL FILLER
	0x115F:  true, // HANGUL CHOSEONG FILLER
	0x1160:  true, // HANGUL JUNGSEONG FILLER
	0x034F:  true, // COMBINING GRAPHEME JOINER
	0x17B4:  true, // KHMER VOWEL INHERENT AQ
	0x17B5:  true, // KHMER VOWEL INHERENT AA
	0x180E:  true, // MONGOLIAN VOWEL SEPARATOR
	0x1D159: true, // MUSICAL SYMBOL NULL NOTEHEAD
	0x1D173: true, 0x1D174: true, 0x1D175: true, 0x1D176: true, 0x1D177: true, 0x1D178: true, 0x1D179: true, 0x1D17A: true,
}

// Blank reports whether r draws as nothing or as a plain space: the
// default-ignorable code points, variation selectors, the filler letters
// and every space but U+0020.
func Blank(r rune) bool {
	return blank[r] || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) ||
		unicode.Is(unicode.Variation_Selector, r) || (unicode.Is(unicode.Zs, r) && r != ' ')
}

// trailSeparators are the characters the trails join their parts with
// (Notion's "claimdeck · action · by NAME", its "name · run" holder): a
// name holding one would read as two parts. Each look-alike dot is here
// too.
var trailSeparators = map[rune]bool{
	0x00B7:  true, // MIDDLE DOT
	0x0387:  true, // GREEK ANO TELEIA
	0x2022:  true, // BULLET
	0x2027:  true, // HYPHENATION POINT
	0x2219:  true, // BULLET OPERATOR
	0x22C5:  true, // DOT OPERATOR
	0x30FB:  true, // KATAKANA MIDDLE DOT
	0xFF65:  true, // HALFWIDTH KATAKANA MIDDLE DOT
	0x16EB:  true, // RUNIC SINGLE PUNCTUATION
	0x2E31:  true, // WORD SEPARATOR MIDDLE DOT
	0x10101: true, // AEGEAN WORD SEPARATOR DOT
}

// trailWords are the words callers() splits a trail name at ("SANDMAN
// (run r-1) via oncall@mcp-http"): only the server writes them.
var trailWords = []string{" via ", "(run "}

// lookalike maps a letter or sign of another script to the Latin (ASCII)
// character it is drawn as: the confusables a reader cannot tell apart in
// a terminal's font. Compatibility forms (fullwidth, mathematical) are
// NFKC's, not listed here.
var lookalike = map[rune]rune{
	// Cyrillic
	'А': 'A', 'В': 'B', 'Е': 'E', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O', 'Р': 'P', 'С': 'C', 'Т': 'T',
	'Х': 'X', 'У': 'Y', 'Ѕ': 'S', 'І': 'I', 'Ј': 'J', 'Ԛ': 'Q', 'Ԝ': 'W', 'Ү': 'Y', 'Һ': 'h', 'Ԁ': 'd',
	'а': 'a', 'в': 'b', 'е': 'e', 'к': 'k', 'м': 'm', 'н': 'h', 'о': 'o', 'р': 'p', 'с': 'c', 'т': 't',
	'х': 'x', 'у': 'y', 'ѕ': 's', 'і': 'i', 'ј': 'j', 'ԛ': 'q', 'ԝ': 'w', 'ү': 'y', 'һ': 'h', 'ԁ': 'd',
	'ӏ': 'l', 'Ӏ': 'I', 'ɡ': 'g', 'ո': 'n', 'ս': 'u', 'օ': 'o',
	// Greek
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ο': 'O',
	'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X', 'ο': 'o', 'ν': 'v', 'ι': 'i', 'α': 'a', 'κ': 'k', 'ρ': 'p',
	'τ': 't', 'υ': 'u', 'χ': 'x',
	// Cherokee, Latin extensions, signs
	'Ꭺ': 'A', 'Ᏼ': 'B', 'Ꮯ': 'C', 'Ꭼ': 'E', 'Ꮋ': 'H', 'Ꮶ': 'K', 'Ꮇ': 'M', 'Ꮲ': 'P', 'Ꮪ': 'S', 'Ꮤ': 'W',
	'ʜ': 'H', 'ɴ': 'N', 'ᴍ': 'M', 'ᴀ': 'A', 'ʟ': 'L',
	'‐': '-', '‑': '-', '‒': '-', '–': '-', '—': '-', '―': '-', '−': '-', '﹣': '-', '⁃': '-',
	'∶': ':', '꞉': ':', '˸': ':', '։': ':', '׃': ':', 'ː': ':',
	'＠': '@', '﹫': '@',
}

// Skeleton is a name as it reads on screen: NFKC's compatibility forms and
// the look-alikes above as the Latin characters they are drawn as, in
// upper case. Two names with one skeleton look the same; the reserved
// words (HumanPrefix, ViaHTTP) are looked for in it.
func Skeleton(s string) string {
	s = norm.NFKC.String(s)
	var b strings.Builder
	for _, r := range s {
		if l, ok := lookalike[r]; ok {
			r = l
		}
		b.WriteRune(r)
	}
	return strings.ToUpper(b.String())
}

// SameName reports whether two names a trail records stand for the same
// caller: the same skeleton, spaces around ignored.
func SameName(a, b string) bool {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	return a != "" && Skeleton(a) == Skeleton(b)
}

// checkLookalikes refuses what would make a name look like another: a
// character NFKC changes (named with what to type instead), a blank glyph,
// a trail separator, and a letter of another script drawn like a Latin one
// beside Latin letters.
func checkLookalikes(field, s string) error {
	latin := false
	for _, r := range s {
		if r < 0x80 && unicode.IsLetter(r) || unicode.Is(unicode.Latin, r) {
			latin = true
			break
		}
	}
	for _, r := range s {
		switch {
		case Blank(r):
			return fmt.Errorf("%s contains %s, which draws as nothing or as a space: type the name in plain characters", field, RuneName(r))
		case trailSeparators[r]:
			return fmt.Errorf("%s contains %s, which the trail separates its parts with: pick a name without it", field, RuneName(r))
		}
		if n := norm.NFKC.String(string(r)); n != string(r) {
			return fmt.Errorf("%s contains %s, a compatibility form of %q: type %q instead", field, RuneName(r), n, n)
		}
		if l, ok := lookalike[r]; ok && (latin || l < 0x80 && !unicode.IsLetter(l)) {
			return fmt.Errorf("%s contains %s, which looks like %q: type the name in one script", field, RuneName(r), l)
		}
	}
	if n := norm.NFKC.String(s); n != s {
		return fmt.Errorf("%s is not in normal form (NFKC): type it as %q", field, n)
	}
	for _, w := range trailWords {
		if strings.Contains(strings.ToLower(s), w) {
			return fmt.Errorf("%s contains %q, which the trail names a run or a remote client with: pick a name without it", field, strings.TrimSpace(w))
		}
	}
	return nil
}
