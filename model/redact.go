package model

import "strings"

// Redacted replaces every secret Redact finds.
const Redacted = "[redacted]"

// secretKeys are the names whose values are secrets, in a key=value DSN, a
// URL's query or a header; matched case-insensitively, and also as the tail
// of a longer name (sslpassword, x-api-key, notion_token).
var secretKeys = []string{
	"password", "passwd", "pwd", "pass", "secret", "token", "key", "sig",
	"signature", "auth", "authorization", "credential", "credentials", "session",
	"cookie", "apikey", "api_key", "api-key", "private", "bearer",
}

// Redact returns s with every secret it recognises replaced by [redacted]:
// the password of a URL's userinfo (user:pass@), the value of any
// secret-named parameter in a URL query or a key=value DSN (quoted or not,
// with spaces around '=' and backslash escapes, read the way libpq and pgx
// read them), the secret part of a URL path of a known webhook shape
// (secretSegment), a token of a known shape (ntn_…, secret_…, xoxb-…), and
// the credentials after Bearer, Basic or an Authorization header. It is
// the one redaction every place that shows text from outside (config show,
// errors, logs, the dashboard) goes through. It reads structure only: it
// never searches the text for a secret's value, so a weak password cannot
// garble ordinary words.
func Redact(s string) string { return redact(s, false) }

// RedactURL is a URL (a webhook, a node's health endpoint) as claimdeck
// shows it: Redact's rules, and also any query value that reads as a
// random key (randomKey) whatever its name, and the fragment.
func RedactURL(u string) string { return redact(u, true) }

func redact(s string, allQuery bool) string {
	if s == "" {
		return s
	}
	wholeURL := isURLStart(strings.TrimSpace(s))
	allQuery = allQuery && wholeURL
	// Every reading of the text marks what it takes for a secret; the
	// union is hidden, so no way of parsing it can leave a piece behind.
	hide := make([]bool, len(s))
	mark := func(from, to int) {
		for k := from; k < to && k < len(s); k++ {
			hide[k] = true
		}
	}
	for i := 0; i < len(s); i++ {
		if j, ok := userinfoAt(s, i, wholeURL); ok {
			mark(j, skipUserinfoSecret(s, j, wholeURL))
		}
		if v, colon := secretAssignmentAt(s, i); v >= 0 {
			inQuery := i > 0 && (s[i-1] == '?' || s[i-1] == '&')
			from, to := valueSpan(s, v, inQuery, wholeURL, colon)
			mark(from, to)
		}
		if j, ok := schemeCredentialAt(s, i); ok {
			mark(j, tokenEnd(s, j))
		}
		if end, ok := knownTokenAt(s, i); ok {
			mark(i, end)
		}
		if strings.HasPrefix(s[i:], "://") {
			markURLPath(s, i+3, wholeURL, allQuery, mark)
		}
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if !hide[i] {
			b.WriteByte(s[i])
			continue
		}
		b.WriteString(Redacted)
		for i+1 < len(s) && hide[i+1] {
			i++
		}
	}
	return b.String()
}

// markURLPath marks, in the URL whose authority starts at s[start], the
// path segments secretSegment names, and with allQuery the query values
// that read as random keys and the fragment.
func markURLPath(s string, start int, wholeURL, allQuery bool, mark func(from, to int)) {
	p := authorityEnd(s, start, wholeURL)
	end := p
	for end < len(s) && !isSpace(s[end]) && strings.IndexByte("\"'<>`", s[end]) < 0 {
		end++
	}
	pathEnd := p + strings.IndexAny(s[p:end]+"?", "?#")
	var segs []string
	var offs []int
	for k := p; k < pathEnd; {
		n := strings.IndexByte(s[k+1:pathEnd]+"/", '/') + k + 1
		segs, offs = append(segs, s[k+1:min(n, pathEnd)]), append(offs, k+1)
		k = n
	}
	for i := range segs {
		if secretSegment(segs, i) {
			mark(offs[i], offs[i]+len(segs[i]))
		}
	}
	if !allQuery {
		return
	}
	for k := pathEnd; k < end; k++ {
		switch s[k] {
		case '=':
			v := k + 1
			for k+1 < end && s[k+1] != '&' && s[k+1] != '#' {
				k++
			}
			if randomKey(percentDecode(s[v:k+1]), 16) {
				mark(v, k+1)
			}
		case '#':
			mark(k+1, end)
			return
		}
	}
}

// secretSegment reports whether path segment i is a credential: the last
// part of a Slack webhook (/services/T…/B…/SECRET), a Discord or
// Mattermost-style one (/webhooks/ID/TOKEN, /hooks/TOKEN of 20 or more
// characters), or any segment that reads as a random key: 16 or more
// letters, digits, '-' and '_' mixing upper case, lower case and digits
// (a UUID or a hex id, one case only, stays readable).
func secretSegment(segs []string, i int) bool {
	seg := segs[i]
	if seg == "" {
		return false
	}
	if i >= 3 && segs[i-3] == "services" && strings.HasPrefix(segs[i-2], "T") && strings.HasPrefix(segs[i-1], "B") {
		return true
	}
	if i >= 2 && segs[i-2] == "webhooks" || i >= 1 && segs[i-1] == "hooks" && len(seg) >= 20 {
		return true
	}
	return randomKey(seg, 16)
}

// randomKey reports whether w, of at least n characters of [A-Za-z0-9_-],
// mixes upper case, lower case and digits, as generated keys do.
func randomKey(w string, n int) bool {
	if len(w) < n || strings.IndexFunc(w, func(r rune) bool { return r > 127 || !isKeyByte(byte(r)) || r == '.' }) >= 0 {
		return false
	}
	lower, upper, digit, _ := CharClasses(w)
	return upper && lower && digit
}

// CharClasses says which kinds of character s uses: lower-case and
// upper-case ASCII letters, ASCII digits, anything else.
func CharClasses(s string) (lower, upper, digit, other bool) {
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z':
			lower = true
		case r >= 'A' && r <= 'Z':
			upper = true
		case r >= '0' && r <= '9':
			digit = true
		default:
			other = true
		}
	}
	return
}

// tokenPrefixes start the API tokens of known shape: Notion's, Slack's,
// GitHub's.
var tokenPrefixes = []string{"ntn_", "secret_", "xoxb-", "xoxp-", "xoxa-", "xapp-", "ghp_", "gho_", "github_pat_"}

// knownTokenAt reports, when a token of known shape (a prefix and at least
// 16 more key characters) starts at s[i] on a word boundary, where it ends.
func knownTokenAt(s string, i int) (int, bool) {
	if i > 0 && isKeyByte(s[i-1]) {
		return 0, false
	}
	for _, p := range tokenPrefixes {
		if len(s)-i > len(p) && strings.EqualFold(s[i:i+len(p)], p) {
			j := i + len(p)
			for j < len(s) && (isKeyByte(s[j]) && s[j] != '.') {
				j++
			}
			if j-i-len(p) >= 16 {
				return j, true
			}
		}
	}
	return 0, false
}

func isURLStart(s string) bool {
	c := strings.Index(s, "://")
	if c <= 0 {
		return false
	}
	for k := 0; k < c; k++ {
		if !isSchemeByte(s[k], k == 0) {
			return false
		}
	}
	return true
}

func isSchemeByte(c byte, first bool) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		return true
	case first:
		return false
	}
	return c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'
}

// userinfoAt reports, when s[i:] starts "://user:…@", where the password
// begins (just past the first ':' of the userinfo). The userinfo is taken to
// run to the last '@' before the first '/', which covers both libpq's
// reading (the first '@') and net/url's (the last); in running text it also
// ends at whitespace.
func userinfoAt(s string, i int, wholeURL bool) (int, bool) {
	if !strings.HasPrefix(s[i:], "://") {
		return 0, false
	}
	start := i + 3
	end := authorityEnd(s, start, wholeURL)
	at := strings.LastIndexByte(s[start:end], '@')
	if at < 0 {
		return 0, false
	}
	colon := strings.IndexByte(s[start:start+at], ':')
	if colon < 0 {
		return 0, false
	}
	return start + colon + 1, true
}

func authorityEnd(s string, start int, wholeURL bool) int {
	end := start
	for end < len(s) && s[end] != '/' && (wholeURL || !isSpace(s[end])) {
		end++
	}
	return end
}

func skipUserinfoSecret(s string, j int, wholeURL bool) int {
	return j + strings.LastIndexByte(s[j:authorityEnd(s, j, wholeURL)], '@')
}

// secretAssignmentAt reports, when a secret-named key starts at s[i] (at a
// word boundary) and is followed by '=' (spaces allowed around it), or is a
// quoted JSON key or an Authorization header followed by ':', where its
// value starts (-1 if not) and whether ':' introduced it.
func secretAssignmentAt(s string, i int) (valueStart int, colon bool) {
	if i > 0 && isKeyByte(s[i-1]) {
		return -1, false
	}
	k := i
	for k < len(s) && isKeyByte(s[k]) {
		k++
	}
	key := s[i:k]
	if i > 0 && (s[i-1] == '?' || s[i-1] == '&') {
		// A URL query's key is percent-decoded before use (pass%77ord).
		for k < len(s) && s[k] != '=' && s[k] != '&' && !isSpace(s[k]) {
			k++
		}
		key = percentDecode(s[i:k])
	}
	if k == i || !SecretName(key) {
		return -1, false
	}
	j := k
	colonOK := strings.EqualFold(s[i:k], "authorization")
	if j < len(s) && s[j] == '"' && i > 0 && s[i-1] == '"' {
		// A JSON key ("token": …) ends in its quote.
		j++
		colonOK = true
	}
	for j < len(s) && isSpace(s[j]) {
		j++
	}
	if j >= len(s) || !(s[j] == '=' || colonOK && s[j] == ':') {
		return -1, false
	}
	colon = s[j] == ':'
	j++
	for j < len(s) && isSpace(s[j]) {
		j++
	}
	return j, colon
}

// SecretName reports whether a field or parameter named k holds a secret.

func SecretName(k string) bool {
	k = strings.ToLower(k)
	for _, w := range secretKeys {
		if k == w || (strings.HasSuffix(k, w) && len(k) > len(w) && strings.ContainsRune("_-.", rune(k[len(k)-len(w)-1]))) {
			return true
		}
	}
	return strings.HasSuffix(k, "password") || strings.HasSuffix(k, "token") || strings.HasSuffix(k, "secret")
}

// valueSpan is the part of a secret value starting at v to hide. A quoted
// value is hidden inside its quotes, and also read unquoted up to
// whitespace, since libpq takes a double quote literally (not after a
// JSON or header colon, where quotes are quotes). An unquoted value
// ends at whitespace (a URL query's also at '&'; one spanning the whole text
// keeps its spaces), with backslash escapes honoured as libpq reads them.
func valueSpan(s string, v int, inQuery, wholeURL, colon bool) (int, int) {
	if !inQuery && v < len(s) && (s[v] == '\'' || s[v] == '"') {
		q := s[v]
		end := len(s)
		for j := v + 1; j < len(s); j++ {
			if s[j] == '\\' {
				j++
				continue
			}
			if s[j] == q {
				end = j
				break
			}
		}
		if colon {
			return v + 1, end
		}
		return v + 1, max(end, plainEnd(s, v, inQuery, wholeURL))
	}
	if strings.HasPrefix(strings.ToLower(s[v:]), "bearer ") || strings.HasPrefix(strings.ToLower(s[v:]), "basic ") {
		v = strings.IndexByte(s[v:], ' ') + v + 1
	}
	return v, plainEnd(s, v, inQuery, wholeURL)
}

func plainEnd(s string, v int, inQuery, wholeURL bool) int {
	j := v
	for j < len(s) {
		c := s[j]
		if c == '\\' {
			j += 2
			continue
		}
		if inQuery && c == '&' || isSpace(c) && !(inQuery && wholeURL) ||
			inQuery && !wholeURL && strings.IndexByte("\"'<>`", c) >= 0 {
			break
		}
		j++
	}
	return min(j, len(s))
}

// schemeCredentialAt reports, when "Bearer " or "Basic " starts at s[i],
// where the credential begins.
func schemeCredentialAt(s string, i int) (int, bool) {
	if i > 0 && isKeyByte(s[i-1]) {
		return 0, false
	}
	for _, w := range []string{"bearer", "basic"} {
		n := len(w)
		if i+n < len(s) && strings.EqualFold(s[i:i+n], w) && isSpace(s[i+n]) {
			j := i + n
			for j < len(s) && isSpace(s[j]) {
				j++
			}
			if j < len(s) && s[j] != '[' {
				return j, true
			}
		}
	}
	return 0, false
}

func tokenEnd(s string, j int) int {
	for j < len(s) && !isSpace(s[j]) && s[j] != '"' && s[j] != '\'' && s[j] != ',' {
		j++
	}
	return j
}

func percentDecode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if hi, lo := unhex(s[i+1]), unhex(s[i+2]); hi >= 0 && lo >= 0 {
				b.WriteByte(byte(hi<<4 | lo))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func isKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}
