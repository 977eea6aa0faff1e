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
// read them), and the credentials after Bearer, Basic or an Authorization
// header. It is the one redaction every place that shows text from outside
// (config show, errors, logs, the dashboard) goes through.
func Redact(s string) string {
	if s == "" {
		return s
	}
	wholeURL := isURLStart(strings.TrimSpace(s))
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

// RedactAll redacts several strings at once, for messages that quote a
// known secret besides what Redact recognises: each secret is removed
// wherever it appears.
func RedactAll(s string, secrets ...string) string {
	for _, x := range secrets {
		if x != "" {
			s = strings.ReplaceAll(s, x, Redacted)
		}
	}
	return Redact(s)
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
	if v < len(s) && (s[v] == '\'' || s[v] == '"') {
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
