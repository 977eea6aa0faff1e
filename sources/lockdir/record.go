package lockdir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

// maxFile is the largest lock file read; anything bigger is reported, not
// parsed, so a runaway writer cannot make a scan allocate without bound.
const maxFile = 1 << 20

// maxHistory bounds the history a file carries from claim to claim.
const maxHistory = 100

// timeLayout writes times with microseconds: Python's datetime.fromisoformat,
// which the seed's snippets use, reads at most six fractional digits.
const timeLayout = "2006-01-02T15:04:05.000000Z07:00"

// timeRes is how finely timeLayout keeps a time.
const timeRes = time.Microsecond

// record is one lock, done, failed or queued file. The seed's fields keep
// their meaning; the others are claimdeck's and the seed's snippets ignore
// them. Fields nobody here knows are kept in extra and written back.
type record struct {
	TaskID      string
	Agent       string
	ClaimedAt   time.Time
	ExpiresAt   time.Time
	Description string
	CompletedAt time.Time
	FailedAt    time.Time
	Status      string
	Reason      string
	Heartbeat   time.Time

	Title         string
	TaskType      string // seed 003's task_type, kept for a copied row
	Priority      int
	Class         model.Class
	LockToken     string
	HolderKind    string
	RunID         string
	Node          string
	Escalation    string // seed 001's ladder: the level a sweep recorded on this claim
	UnblockAction string
	NextCheckAt   time.Time
	Artifacts     string
	// ReviewBy is who sent the task to review, written by the finish that
	// moved it there (model.More.ReviewBy): the fact an approval is
	// decided on, where no comment reaches.
	ReviewBy    string
	CreatedAt   time.Time
	Reservation *wireReservation
	History     []wireEvent
	// Replaces is the version of the file this one was made from (a lock
	// completed into a .done, a claim broken by a rescue): once this file
	// is published, that one is spent even if a crash left it behind.
	Replaces string

	extra map[string]json.RawMessage
}

// knownField are the fields parseLock reads; a file's others stay in extra.
var knownField = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`agent artifacts claimed_at class completed_at created_at description
		escalation expires_at failed_at heartbeat history holder_kind lock_token next_check_at node
		priority reason replaces reservation review_by run_id status task_id task_type title unblock_action`) {
		knownField[k] = true
	}
}

type wireReservation struct {
	For      string `json:"for"`
	Until    string `json:"until,omitempty"`
	By       string `json:"by,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Priority string `json:"priority,omitempty"`
}

type wireEvent struct {
	At     string `json:"at"`
	Actor  string `json:"actor"`
	Action string `json:"action"`
	Reason string `json:"reason,omitempty"`
	Detail string `json:"detail,omitempty"`
	Door   string `json:"door,omitempty"`
	Result string `json:"result,omitempty"`
}

// parseLock reads one file's bytes. It never fails: whatever could be read
// is returned, and problem says what could not, in words for the screen.
func parseLock(data []byte) (*record, string) { return parseLockVia(data, true) }

// parseLockVia is parseLock, splitting the object with splitObject when
// split is set and with encoding/json otherwise; a fuzz test holds the
// two to the same answers.
func parseLockVia(data []byte, split bool) (*record, string) {
	r := &record{}
	if len(bytes.TrimSpace(data)) == 0 {
		return r, "empty file"
	}
	if len(data) > maxFile {
		return r, fmt.Sprintf("file is %d bytes, over the 1 MiB limit", len(data))
	}
	var fields members
	ok := false
	if split {
		fields, ok = splitObject(data)
	}
	if !ok {
		var decoded map[string]json.RawMessage
		if err := json.Unmarshal(data, &decoded); err != nil {
			var typeErr *json.UnmarshalTypeError
			if errors.As(err, &typeErr) {
				return r, "not a JSON object"
			}
			return r, "not valid JSON: " + err.Error()
		}
		if decoded == nil {
			return r, "not a JSON object"
		}
		for k, v := range decoded {
			fields = append(fields, member{key: k, raw: v, text: string(v)})
		}
	}
	var problems []string
	bad := func(key, why string) { problems = append(problems, key+": "+why) }
	str := func(key string, dst *string) {
		raw, text, ok := fields.take(key)
		if !ok {
			return
		}
		if isNull(raw) {
			return
		}
		if plain, ok := plainString(text); ok {
			*dst = plain
		} else if err := json.Unmarshal(raw, dst); err != nil {
			bad(key, "want a string, got "+jsonKind(raw))
		}
	}
	when := func(key string, dst *time.Time) {
		var s string
		str(key, &s)
		if s == "" {
			return
		}
		t, err := parseTime(s)
		if err != nil {
			bad(key, fmt.Sprintf("%q is not a time", s))
			return
		}
		*dst = t
	}
	str("task_id", &r.TaskID)
	str("agent", &r.Agent)
	when("claimed_at", &r.ClaimedAt)
	when("expires_at", &r.ExpiresAt)
	str("description", &r.Description)
	when("completed_at", &r.CompletedAt)
	when("failed_at", &r.FailedAt)
	str("status", &r.Status)
	str("reason", &r.Reason)
	when("heartbeat", &r.Heartbeat)
	str("title", &r.Title)
	str("task_type", &r.TaskType)
	str("lock_token", &r.LockToken)
	str("holder_kind", &r.HolderKind)
	str("run_id", &r.RunID)
	str("node", &r.Node)
	str("escalation", &r.Escalation)
	str("unblock_action", &r.UnblockAction)
	when("next_check_at", &r.NextCheckAt)
	str("artifacts", &r.Artifacts)
	str("review_by", &r.ReviewBy)
	str("replaces", &r.Replaces)
	when("created_at", &r.CreatedAt)
	if raw, _, ok := fields.take("priority"); ok {
		p, err := parsePriority(raw)
		if err != nil {
			bad("priority", err.Error())
		}
		r.Priority = p
	}
	var class string
	str("class", &class)
	if class != "" {
		if c, err := model.ParseClass(class); err != nil {
			bad("class", err.Error())
		} else {
			r.Class = c
		}
	}
	if raw, _, ok := fields.take("reservation"); ok {
		if !isNull(raw) {
			var res wireReservation
			if err := json.Unmarshal(raw, &res); err != nil {
				bad("reservation", "want an object with string fields")
			} else {
				r.Reservation = &res
			}
		}
	}
	if raw, _, ok := fields.take("history"); ok {
		plain := false
		if split {
			r.History, plain = plainEvents(raw)
		}
		if !plain && !isNull(raw) {
			if err := json.Unmarshal(raw, &r.History); err != nil {
				r.History = nil
				bad("history", "want a list of events")
			}
		}
	}
	r.extra = fields.rest()
	if len(problems) == 0 {
		return r, ""
	}
	return r, strings.Join(problems, "; ")
}

// plainEvents reads a history as claimdeck writes it, without reflection:
// a non-empty list of objects whose members are plain strings (see
// plainString) under wireEvent's own keys, each at most once. Anything
// else (null, an empty list, another key or spelling, an escape, a
// number) is !ok, for encoding/json to read and judge.
func plainEvents(raw json.RawMessage) ([]wireEvent, bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, false
	}
	var out []wireEvent
	for i = skipSpace(raw, i+1); ; {
		if i >= len(raw) || raw[i] != '{' {
			return nil, false
		}
		end := nestedEnd(raw, i)
		if end < 0 {
			return nil, false
		}
		ms, ok := splitObject(raw[i:end])
		if !ok {
			return nil, false
		}
		var e wireEvent
		var seen [7]bool
		for _, m := range ms {
			v, ok := plainString(m.text)
			if !ok {
				return nil, false
			}
			var slot int
			var dst *string
			switch m.key {
			case "at":
				slot, dst = 0, &e.At
			case "actor":
				slot, dst = 1, &e.Actor
			case "action":
				slot, dst = 2, &e.Action
			case "reason":
				slot, dst = 3, &e.Reason
			case "detail":
				slot, dst = 4, &e.Detail
			case "door":
				slot, dst = 5, &e.Door
			case "result":
				slot, dst = 6, &e.Result
			default:
				return nil, false
			}
			if seen[slot] {
				return nil, false
			}
			seen[slot], *dst = true, v
		}
		out = append(out, e)
		var more bool
		if i, more, ok = afterItem(raw, end, ']'); !ok {
			return nil, false
		}
		if !more {
			return out, true
		}
	}
}

// member is one member of a JSON object: its raw value, and the same
// bytes as a string.
type member struct {
	key   string
	raw   json.RawMessage
	text  string
	taken bool
}

// members are a JSON object's members in their order. A lock file has a
// dozen: a look along them costs less than building a map per file.
type members []member

// take returns key's value (the last one, as encoding/json keeps) and marks
// every member named key as read.
func (ms members) take(key string) (json.RawMessage, string, bool) {
	found := -1
	for i := range ms {
		if !ms[i].taken && ms[i].key == key {
			ms[i].taken, found = true, i
		}
	}
	if found < 0 {
		return nil, "", false
	}
	return ms[found].raw, ms[found].text, true
}

// rest are the members nobody took, copied out of the file's bytes; nil
// for none.
func (ms members) rest() map[string]json.RawMessage {
	var out map[string]json.RawMessage
	for _, m := range ms {
		if m.taken {
			continue
		}
		if out == nil {
			out = map[string]json.RawMessage{}
		}
		out[m.key] = bytes.Clone(m.raw)
	}
	return out
}

// splitObject splits a JSON object into its members, exactly as
// json.Unmarshal into a map[string]json.RawMessage does (keeping the last
// of a repeated key is take's job), but without reflection or a map: a full
// scan parses 10,000 files. It handles the shape lock files have (keys
// without escapes; strings, numbers, literals, and nested values that
// json.Valid checks) and reports !ok for anything else, valid or not, so
// that encoding/json decides and words the problem. Keys and texts are cut
// from one string copy of data.
func splitObject(data []byte) (members, bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	fields := make(members, 0, 16)
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return fields, skipSpace(data, i+1) == len(data)
	}
	whole := string(data)
	for {
		end, plain := stringEnd(data, i)
		if end < 0 || !plain {
			return nil, false // a key with escapes or beyond ASCII: let encoding/json decode it
		}
		key := whole[i+1 : end-1]
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return nil, false
		}
		i = skipSpace(data, i+1)
		end = valueEnd(data, i)
		if end < 0 {
			return nil, false
		}
		fields = append(fields, member{key: key, raw: data[i:end:end], text: whole[i:end]})
		var more, ok bool
		if i, more, ok = afterItem(data, end, '}'); !ok {
			return nil, false
		}
		if !more {
			return fields, true
		}
	}
}

// afterItem reads what follows an item of a JSON list or object that ends
// at data[i]: a comma, and more follows from next; or the closing byte,
// which must end data (ok). Anything else is !ok.
func afterItem(data []byte, i int, closing byte) (next int, more, ok bool) {
	i = skipSpace(data, i)
	switch {
	case i >= len(data):
		return 0, false, false
	case data[i] == ',':
		return skipSpace(data, i+1), true, true
	case data[i] == closing:
		return 0, false, skipSpace(data, i+1) == len(data)
	}
	return 0, false, false
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t') {
		i++
	}
	return i
}

// stringEnd is the index after the JSON string at data[i], or -1; plain
// says it has no escapes and no byte beyond ASCII.
func stringEnd(data []byte, i int) (int, bool) {
	if i >= len(data) || data[i] != '"' {
		return -1, false
	}
	plain := true
	for i++; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			return i + 1, plain
		case c < 0x20:
			return -1, false
		case c >= 0x80:
			plain = false
		case c == '\\':
			plain = false
			if i+1 >= len(data) {
				return -1, false
			}
			i++
			switch data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(data) {
					return -1, false
				}
				for _, h := range data[i+1 : i+5] {
					if !isHex(h) {
						return -1, false
					}
				}
				i += 4
			default:
				return -1, false
			}
		}
	}
	return -1, false
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// valueEnd is the index after the JSON value at data[i], or -1.
func valueEnd(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch c := data[i]; {
	case c == '"':
		end, _ := stringEnd(data, i)
		return end
	case c == '{' || c == '[':
		end := nestedEnd(data, i)
		if end < 0 || !json.Valid(data[i:end]) {
			return -1
		}
		return end
	case c == 't':
		return literalEnd(data, i, "true")
	case c == 'f':
		return literalEnd(data, i, "false")
	case c == 'n':
		return literalEnd(data, i, "null")
	case c == '-' || '0' <= c && c <= '9':
		return numberEnd(data, i)
	}
	return -1
}

func literalEnd(data []byte, i int, lit string) int {
	if !bytes.HasPrefix(data[i:], []byte(lit)) {
		return -1
	}
	return i + len(lit)
}

// numberEnd follows JSON's number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func numberEnd(data []byte, i int) int {
	digits := func(i int) int {
		for i < len(data) && '0' <= data[i] && data[i] <= '9' {
			i++
		}
		return i
	}
	if data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && '1' <= data[i] && data[i] <= '9':
		i = digits(i)
	default:
		return -1
	}
	if i < len(data) && data[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

// nestedEnd is the index after the object or list at data[i] by its
// brackets alone, or -1; json.Valid checks the rest.
func nestedEnd(data []byte, i int) int {
	depth := 0
	for i < len(data) {
		switch data[i] {
		case '"':
			end, _ := stringEnd(data, i)
			if end < 0 {
				return -1
			}
			i = end
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
		i++
	}
	return -1
}

// plainString reads a JSON string with nothing to unescape, the common case,
// without a second pass of the JSON decoder: a full scan reads 10,000 files.
// The result shares text's memory.
func plainString(text string) (string, bool) {
	if len(text) < 2 || text[0] != '"' || text[len(text)-1] != '"' {
		return "", false
	}
	body := text[1 : len(text)-1]
	for i := 0; i < len(body); i++ {
		if c := body[i]; c == '\\' || c == '"' || c < 0x20 || c >= 0x80 {
			return "", false // escapes, and non-ASCII that may need UTF-8 repair
		}
	}
	return body, true
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func jsonKind(raw json.RawMessage) string {
	s := bytes.TrimSpace(raw)
	if len(s) == 0 {
		return "nothing"
	}
	switch s[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "a list"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

// parsePriority accepts a number or one of the model's priority names.
func parsePriority(raw json.RawMessage) (int, error) {
	if isNull(raw) {
		return model.PriorityNone, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		v, err := strconv.Atoi(n.String())
		if err != nil {
			return model.PriorityNone, fmt.Errorf("%s is not a whole number", n)
		}
		return v, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return model.PriorityNone, fmt.Errorf("want a number or a name, got %s", jsonKind(raw))
	}
	return model.ParsePriority(s)
}

// parseTime reads the times the seed's snippets write: `date -u
// +%Y-%m-%dT%H:%M:%SZ` and Python's isoformat() with an offset. A time
// without a zone (datetime.now().isoformat()) is taken as UTC.
func parseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("unknown time format")
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(timeLayout)
}

// marshal writes the record with the seed's fields first, in the seed's
// order, so that a person reading the file sees the seed's format.
func (r *record) marshal() []byte {
	data := r.marshalAll()
	// A file over maxFile would be unreadable to every reader, this one
	// too: the oldest history goes first (model's text limits keep the
	// rest well under it).
	for len(data) > maxFile && len(r.History) > 0 {
		r.History = trimHistory(r.History, max(1, len(r.History)/4))
		data = r.marshalAll()
	}
	return data
}

// noteAction is the trail's word for a comment: anything a caller writes
// through Comment.
const noteAction = model.EventComment

// trimHistory drops n events, comments first (model.TrimTrail): a flood
// of comments cannot push the claim or the review out of the file.
func trimHistory(h []wireEvent, n int) []wireEvent {
	return model.TrimTrail(h, n, func(e wireEvent) bool { return e.Action == noteAction })
}

func (r *record) marshalAll() []byte {
	b := make([]byte, 0, 512)
	b = append(b, "{\n"...)
	first := true
	key := func(k string) {
		if !first {
			b = append(b, ",\n"...)
		}
		first = false
		b = append(b, "  "...)
		b = appendJSONString(b, k)
		b = append(b, ": "...)
	}
	put := func(k string, v any) {
		val, err := json.Marshal(v)
		if err != nil {
			return // every value below is a plain string, number or struct
		}
		key(k)
		b = append(b, val...)
	}
	putS := func(k, v string) {
		if v != "" {
			key(k)
			b = appendJSONString(b, v)
		}
	}
	putT := func(k string, t time.Time) { putS(k, formatTime(t)) }
	putS("task_id", r.TaskID)
	putS("agent", r.Agent)
	putT("claimed_at", r.ClaimedAt)
	putT("expires_at", r.ExpiresAt)
	key("description")
	b = appendJSONString(b, r.Description)
	putT("completed_at", r.CompletedAt)
	putT("failed_at", r.FailedAt)
	putS("status", r.Status)
	putS("reason", r.Reason)
	putT("heartbeat", r.Heartbeat)
	putS("title", r.Title)
	putS("task_type", r.TaskType)
	if r.Priority != model.PriorityNone {
		key("priority")
		b = strconv.AppendInt(b, int64(r.Priority), 10)
	}
	if r.Class != 0 && r.Class != model.ClassStandard {
		key("class")
		b = appendJSONString(b, r.Class.String())
	}
	putS("lock_token", r.LockToken)
	putS("holder_kind", r.HolderKind)
	putS("run_id", r.RunID)
	putS("node", r.Node)
	putS("escalation", r.Escalation)
	putS("unblock_action", r.UnblockAction)
	putT("next_check_at", r.NextCheckAt)
	putS("artifacts", r.Artifacts)
	putS("review_by", r.ReviewBy)
	putT("created_at", r.CreatedAt)
	putS("replaces", r.Replaces)
	if r.Reservation != nil {
		put("reservation", r.Reservation)
	}
	if len(r.History) > 0 {
		key("history")
		b = appendHistory(b, r.History)
	}
	keys := make([]string, 0, len(r.extra))
	for k := range r.extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		put(k, r.extra[k])
	}
	return append(b, "\n}\n"...)
}

// appendJSONString appends s as json.Marshal writes it. Printable ASCII
// that encoding/json leaves alone (ids, names, times, tokens) is copied as
// it is; anything else goes through encoding/json itself, so the bytes are
// the same either way.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			val, _ := json.Marshal(s) // a string always marshals
			return append(b, val...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendHistory appends events as json.Marshal writes a []wireEvent:
// compact, fields in declaration order, reason and detail omitted when
// empty.
func appendHistory(b []byte, events []wireEvent) []byte {
	b = append(b, '[')
	for i, e := range events {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"at":`...)
		b = appendJSONString(b, e.At)
		b = append(b, `,"actor":`...)
		b = appendJSONString(b, e.Actor)
		b = append(b, `,"action":`...)
		b = appendJSONString(b, e.Action)
		if e.Reason != "" {
			b = append(b, `,"reason":`...)
			b = appendJSONString(b, e.Reason)
		}
		if e.Detail != "" {
			b = append(b, `,"detail":`...)
			b = appendJSONString(b, e.Detail)
		}
		if e.Door != "" {
			b = append(b, `,"door":`...)
			b = appendJSONString(b, e.Door)
		}
		if e.Result != "" {
			b = append(b, `,"result":`...)
			b = appendJSONString(b, e.Result)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// clone copies a record deeply enough that changing the copy's history or
// reservation leaves the original alone.
func (r *record) clone() *record {
	c := *r
	c.History = append([]wireEvent(nil), r.History...)
	if r.Reservation != nil {
		res := *r.Reservation
		c.Reservation = &res
	}
	return &c
}

func (r *record) addEvent(e model.Event) {
	r.History = append(r.History, wireEvent{
		At: formatTime(e.At), Actor: e.Actor, Action: e.Action, Reason: e.Reason, Detail: e.Detail, Door: string(e.Door), Result: e.Result,
	})
	if n := len(r.History); n > maxHistory {
		r.History = trimHistory(r.History, n-maxHistory)
	}
}

func (r *record) events() []model.Event {
	if len(r.History) == 0 {
		return nil
	}
	out := make([]model.Event, 0, len(r.History))
	for _, e := range r.History {
		at, _ := parseTime(e.At)
		out = append(out, model.Event{At: at, Actor: e.Actor, Action: e.Action, Reason: e.Reason, Detail: e.Detail, Door: model.Door(e.Door), Result: e.Result})
	}
	return out
}

// contentHash is the version of a file: any change to its bytes changes it.
func contentHash(data []byte) string {
	h := fnv.New64a()
	h.Write(data)
	return strconv.FormatUint(h.Sum64(), 16)
}
