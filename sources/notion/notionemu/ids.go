package notionemu

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// newID returns a random version 4 UUID in the dashed form Notion returns.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return dashed(hex.EncodeToString(b[:]))
}

// normalizeID accepts an id with or without dashes, as Notion does, and
// returns its dashed lower-case form; ok is false when it is not a UUID.
func normalizeID(s string) (id string, ok bool) {
	compact := strings.ToLower(strings.ReplaceAll(s, "-", ""))
	if len(compact) != 32 {
		return "", false
	}
	if _, err := hex.DecodeString(compact); err != nil {
		return "", false
	}
	if strings.Contains(s, "-") && dashed(compact) != strings.ToLower(s) {
		return "", false
	}
	return dashed(compact), true
}

func dashed(h string) string {
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
