package notion

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

// claimdeck's notes on a page are the trail the Notion source reads back as
// events; every agent that can comment through claimdeck (or holds a Notion
// token) can write a comment of the same shape. So each note claimdeck
// posts ends in a signature, an HMAC of the page and the note under the
// trail key, and a comment is read as claimdeck's event only when its
// signature is right; any other comment is shown as the comment it is.
//
// The key is Config.TrailKey; without one it is derived from the
// integration's token, which shuts out every caller that reaches Notion
// only through claimdeck's doors (MCP, ntask, the relay), but not a holder
// of the token itself (an agent using the notion-task skill with the same
// integration): a trail_key of its own, kept from the agents, shuts out
// those too.

// sigPart starts the last part of a signed note: "sig <hex>".
const sigPart = "sig "

// versionPart starts the part of a review note naming the task as the
// review left it (reviewMark): the note speaks for that task only.
const versionPart = "v "

// trailKey is the key claimdeck's notes are signed with.
func trailKey(configured, token string) []byte {
	seed := "claimdeck trail key\x00" + token
	if strings.TrimSpace(configured) != "" {
		seed = "claimdeck trail key\x01" + configured
	}
	sum := sha256.Sum256([]byte(seed))
	return sum[:]
}

// pageKey is a page id as every answer spells it: hex, no dashes, lower case.
func pageKey(id string) string { return strings.ToLower(strings.ReplaceAll(id, "-", "")) }

func noteMAC(key []byte, pageID, body string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(pageKey(pageID)))
	m.Write([]byte{0})
	m.Write([]byte(body))
	return hex.EncodeToString(m.Sum(nil))[:32]
}

// sign ends a note of claimdeck's with its signature for the page.
func (s *Source) sign(pageID, body string) string {
	return body + noteSep + sigPart + noteMAC(s.key, pageID, body)
}

// note is a page comment as read back.
type note struct {
	model.Event
	// signed is true for claimdeck's own notes, whose signature is right.
	signed bool
	// version is the page version a signed review note speaks for.
	version string
}

// readNote reads a comment on pageID: claimdeck's signed note as its
// event, anything else — a forged note included — as a comment whose
// author is the "name: " it starts with, if any.
func readNote(key []byte, pageID, text string, at time.Time) (note, bool) {
	if strings.TrimSpace(text) == "" {
		return note{}, false
	}
	if i := strings.LastIndex(text, noteSep+sigPart); i >= 0 && key != nil {
		body, sig := text[:i], text[i+len(noteSep+sigPart):]
		if hmac.Equal([]byte(sig), []byte(noteMAC(key, pageID, body))) {
			if e, v, ok := parseNote(body, at); ok {
				return note{Event: e, signed: true, version: v}, true
			}
		}
	}
	e := model.Event{At: at, Action: noteAction, Reason: text}
	if author, rest, ok := strings.Cut(text, ": "); ok && author != "" && !strings.ContainsAny(author, " \n") {
		e.Actor, e.Reason = author, rest
	}
	return note{Event: e}, true
}

// reviewMark is what a review note speaks for: the task's fields as the
// review left them — status, holder, reservation, summary, artifacts,
// title, priority — and how many steps its history property holds, but
// not its comments nor its edit time, which a comment under seed 001
// moves. A task edited since, or sent round again (a rework and a new
// review add steps), has another mark.
func reviewMark(t *model.Task) string {
	h := fnv.New64a()
	c, r := t.Claim(), model.Reservation{}
	if t.Reserved() != nil {
		r = *t.Reserved()
	}
	steps := 0
	for _, e := range t.More().History {
		if e.Action != noteAction && e.Action != actionTrimmed {
			steps++
		}
	}
	fmt.Fprintln(h, t.Title, t.Description, t.RawStatus, int(t.Class), t.Priority, int(c.Holder), c.Name, c.RunID, c.Token,
		c.ClaimedAt.Time().UnixNano(), r.For, r.Until.UnixNano(), t.More().Reason, t.UnblockAction(), t.NextCheckAt().UnixNano(),
		t.More().Artifacts, steps)
	return strconv.FormatUint(h.Sum64(), 16)
}

// reviewBy is who sent the task to review, from claimdeck's signed notes:
// the actor of the last signed review note that speaks for the task as it
// reads now (mark, reviewMark of the page before its comments are read).
// A task edited since (by anyone, through any door) or sent to review
// outside claimdeck has none: the approval then fails closed
// (model.CheckSelfApproval).
func reviewBy(t *model.Task, mark string, notes []note) string {
	if t.State != model.StateReview {
		return ""
	}
	for i := len(notes) - 1; i >= 0; i-- {
		n := notes[i]
		if n.signed && n.Action == string(model.ActionReview) && n.version == mark {
			return n.Actor
		}
	}
	return ""
}
