package relay

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"time"
	"unsafe"

	"github.com/claimdeck/claimdeck/model"
)

// The wire is claimdeck's own: a relay encodes each changed task once, for
// every dashboard, and a dashboard decodes one in well under a
// microsecond; gob spent 84 µs setting up each answer and 1.9 µs a task,
// JSON 15 µs a task (BenchmarkDecodeTask), and fifty dashboards read
// every change. Strings go byte for byte: a human's action names a task
// by its id and version exactly as read.
//
// An answer is the magic, then its fields in order; numbers are varints,
// strings and tasks length-prefixed. A decoder checks every length
// against what is left, so no input allocates more than its own size.
const magic = "CDR2"

// Answer is a poll's answer.
type Answer struct {
	Full     bool
	Cursor   string
	Tasks    []*model.Task
	Removed  []string
	Archived int
	// The relay's own view of the source: Loaded once it has read it;
	// Status, Updated, Err and Code as its hub holds them; Lagging by
	// hub.SourceState.Lagging at the relay, with the relay's poll
	// interval Every.
	Loaded  bool
	Status  int
	Updated time.Time
	Err     string
	Code    string
	Every   time.Duration
	Lagging bool
}

// appendAnswer is a on the wire, its tasks already encoded (appendTask).
func appendAnswer(b []byte, a *Answer, tasks [][]byte) []byte {
	e := enc(appendHead(b, a, len(tasks)))
	for _, t := range tasks {
		e.bytes(t)
	}
	return e
}

// appendHead is a on the wire up to its n tasks, each of which follows
// as appendCarried writes it.
func appendHead(b []byte, a *Answer, n int) []byte {
	e := enc(append(b, magic...))
	e.bool(a.Full)
	e.str(a.Cursor)
	e.int(int64(a.Archived))
	e.bool(a.Loaded)
	e.int(int64(a.Status))
	e.time(a.Updated)
	e.str(a.Err)
	e.str(a.Code)
	e.int(int64(a.Every))
	e.bool(a.Lagging)
	e.uint(uint64(len(a.Removed)))
	for _, id := range a.Removed {
		e.str(id)
	}
	e.uint(uint64(n))
	return e
}

// appendCarried is a task on the wire (appendTask) as an answer carries
// it: its length, then the task.
func appendCarried(b []byte, task []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(task))), task...)
}

// decodeAnswer reads an answer, checking what a dashboard relies on.
func decodeAnswer(b []byte, w words) (*Answer, error) {
	if len(b) < len(magic) || string(b[:len(magic)]) != magic {
		return nil, errors.New("not a relay's answer (is the address a claimdeck relay of the same version?)")
	}
	if w == nil {
		w = words{}
	}
	d := &dec{b: b[len(magic):]}
	a := &Answer{Full: d.bool(), Cursor: d.str(), Archived: d.int32("archived"), Loaded: d.bool(),
		Status: d.int32("status"), Updated: d.time(), Err: d.str(), Code: d.str(), Every: time.Duration(d.int()), Lagging: d.bool()}
	if n := d.count(); n > 0 {
		a.Removed = make([]string, n)
		for i := range a.Removed {
			a.Removed[i] = d.str()
		}
	}
	if n := d.count(); n > 0 {
		a.Tasks = make([]*model.Task, n)
		for i := range a.Tasks {
			// The task's strings share one copy of its bytes.
			td := &dec{b: bytes.Clone(d.bytes()), words: w, owned: true}
			a.Tasks[i] = td.task()
			if td.err == nil && len(td.b) != 0 {
				td.fail("task ends early")
			}
			if td.err != nil {
				return nil, fmt.Errorf("task %d of the answer: %w", i+1, td.err)
			}
		}
	}
	switch {
	case d.err != nil:
		return nil, fmt.Errorf("a damaged answer: %w", d.err)
	case len(d.b) != 0:
		return nil, fmt.Errorf("a damaged answer: %d bytes after its end", len(d.b))
	case a.Full && len(a.Removed) > 0:
		return nil, errors.New("a full answer that also removes tasks")
	case a.Loaded && a.Cursor == "":
		return nil, errors.New("an answer without a cursor")
	}
	for i, t := range a.Tasks {
		if t.ID == "" {
			return nil, fmt.Errorf("task %d of the answer has no id", i+1)
		}
	}
	return a, nil
}

// appendTask is t on the wire: every field, the claim and the rest behind
// the task's pointers included (TestATaskCrossesTheWireWhole fails for a
// field left out).
func appendTask(b []byte, t *model.Task) []byte {
	e := enc(b)
	e.str(t.Source)
	e.str(t.ID)
	e.str(t.Key)
	e.str(t.Title)
	e.str(t.Description)
	e.str(t.RawStatus)
	e.int(int64(t.Priority))
	e.uint(uint64(t.State))
	e.uint(uint64(t.Class))
	e.uint(uint64(t.Escalated))
	e.int(int64(t.OpenSubtasks))
	e.int(int64(t.CreatedAt))
	e.int(int64(t.EditedAt))
	e.str(t.Version)
	if r := t.Reserved(); e.bool(r != nil) {
		e.str(r.For)
		e.time(r.Until)
		e.str(r.By)
		e.str(r.Reason)
		e.str(r.Priority)
	}
	if c := t.Claim(); e.bool(c != (model.Claim{})) {
		e.int(int64(c.Holder))
		e.str(c.Name)
		e.str(c.RunID)
		e.str(c.Node)
		e.str(c.Token)
		e.int(int64(c.ClaimedAt))
		e.int(int64(c.HeartbeatAt))
		e.int(int64(c.Expires))
	}
	m := t.More()
	e.str(m.Reason)
	if u := m.Unblock; e.bool(u != nil) {
		e.str(u.Action)
		e.time(u.NextCheckAt)
	}
	e.str(m.Artifacts)
	e.str(m.Parent)
	if f := m.Family; e.bool(f != nil) {
		e.uint(uint64(len(f.Subtasks)))
		for _, s := range f.Subtasks {
			e.str(s.ID)
			e.str(s.Key)
			e.str(s.Title)
			e.uint(uint64(s.State))
			e.str(s.RawStatus)
		}
	}
	e.uint(uint64(len(m.History)))
	for _, h := range m.History {
		e.time(h.At)
		e.str(h.Actor)
		e.str(h.Action)
		e.str(h.Reason)
		e.str(h.Detail)
		e.str(string(h.Door))
		e.str(h.Result)
	}
	if c := m.Carried; e.bool(c != nil) {
		e.str(c.TaskType)
		e.str(c.Worker)
		e.time(c.StartedAt)
		e.time(c.CompletedAt)
		e.bool(c.LeaseUnset)
		e.bool(c.Extra != nil)
		keys := make([]string, 0, len(c.Extra))
		for k := range c.Extra {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		e.uint(uint64(len(keys)))
		for _, k := range keys {
			e.str(k)
			e.str(c.Extra[k])
		}
	}
	e.str(m.Problem)
	e.str(m.ReviewBy)
	return e
}

// task reads what appendTask wrote.
func (d *dec) task() *model.Task {
	t := &model.Task{Source: d.word(), ID: d.str(), Key: d.str(), Title: d.str(), Description: d.str(), RawStatus: d.word(),
		Priority: int(d.int()), State: model.State(d.small("state")), Class: model.Class(d.small("class")),
		Escalated: model.Level(d.small("escalation")), OpenSubtasks: int32(d.int32("open sub-tasks")),
		CreatedAt: model.Stamp(d.int()), EditedAt: model.Stamp(d.int()), Version: d.str()}
	var m model.More
	if d.bool() {
		m.Reservation = &model.Reservation{For: d.word(), Until: d.time(), By: d.word(), Reason: d.str(), Priority: d.word()}
	}
	if d.bool() {
		t.SetClaim(model.Claim{Holder: model.HolderKind(d.int32("holder")), Name: d.word(), RunID: d.str(), Node: d.word(), Token: d.str(),
			ClaimedAt: model.Stamp(d.int()), HeartbeatAt: model.Stamp(d.int()), Expires: model.Stamp(d.int())})
	}
	m.Reason = d.str()
	if d.bool() {
		m.Unblock = &model.Unblock{Action: d.str(), NextCheckAt: d.time()}
	}
	m.Artifacts, m.Parent = d.str(), d.str()
	if d.bool() {
		m.Family = &model.Family{}
		if n := d.count(); n > 0 {
			m.Family.Subtasks = make([]model.Subtask, n)
			for i := range m.Family.Subtasks {
				m.Family.Subtasks[i] = model.Subtask{ID: d.str(), Key: d.str(), Title: d.str(), State: model.State(d.small("state")), RawStatus: d.word()}
			}
		}
	}
	if n := d.count(); n > 0 {
		m.History = make([]model.Event, n)
		for i := range m.History {
			m.History[i] = model.Event{At: d.time(), Actor: d.word(), Action: d.word(), Reason: d.str(), Detail: d.str(),
				Door: model.Door(d.word()), Result: d.word()}
		}
	}
	if d.bool() {
		m.Carried = &model.Carried{TaskType: d.word(), Worker: d.word(), StartedAt: d.time(), CompletedAt: d.time(), LeaseUnset: d.bool()}
		hasExtra := d.bool()
		n := d.count()
		if hasExtra {
			m.Carried.Extra = make(map[string]string, n)
		}
		for range n {
			k, v := d.str(), d.str()
			if hasExtra {
				m.Carried.Extra[k] = v
			}
		}
	}
	m.Problem = d.str()
	m.ReviewBy = d.str()
	t.SetMore(m)
	return t
}

// enc appends the wire's values.
type enc []byte

func (e *enc) uint(v uint64) { *e = binary.AppendUvarint(*e, v) }
func (e *enc) int(v int64)   { *e = binary.AppendVarint(*e, v) }

func (e *enc) str(s string) {
	e.uint(uint64(len(s)))
	*e = append(*e, s...)
}

func (e *enc) bytes(b []byte) {
	e.uint(uint64(len(b)))
	*e = append(*e, b...)
}

// bool writes b and returns it, to guard what follows only when it holds.
func (e *enc) bool(b bool) bool {
	if b {
		*e = append(*e, 1)
	} else {
		*e = append(*e, 0)
	}
	return b
}

// time is the instant to the nanosecond, read back in UTC; the zero time
// stays zero.
func (e *enc) time(t time.Time) {
	if !e.bool(!t.IsZero()) {
		return
	}
	e.int(t.Unix())
	e.uint(uint64(t.Nanosecond()))
}

// dec reads the wire's values. The first fault sticks: every later read
// gives a zero value, and err says what was wrong.
type dec struct {
	b     []byte
	err   error
	words words
	// owned: b is the decoder's own copy of one task, never written
	// again, so the task's strings share it instead of copying each: a
	// decoded task is 4 allocations, not 9-12, and a relayed dashboard's
	// collector marks half the objects. The strings live as long as the
	// task's record does, and keep its bytes (about 64 more a task than
	// the strings alone, in BenchmarkDecodeTask's).
	owned bool
}

// words keep one copy of each short string that tasks repeat (their
// source, raw status, holder, node, type and worker) across the tasks
// of an answer, and across a stream's answers: a dashboard holding
// 100,000 tasks keeps a few hundred of them, not 100,000 of each, and a
// decoded task allocates only what is its own.
type words map[string]string

// maxWords bounds words, and maxWord the strings they keep: past
// either, a string is copied as any other.
const maxWords, maxWord = 4096, 64

// word reads a string that tasks repeat, keeping one copy of each.
func (d *dec) word() string {
	b := d.bytes()
	if len(b) == 0 || len(b) > maxWord || d.words == nil {
		return string(b)
	}
	if s, ok := d.words[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(d.words) < maxWords {
		d.words[s] = s
	}
	return s
}

func (d *dec) fail(what string) {
	if d.err == nil {
		d.err = errors.New(what)
	}
	d.b = nil
}

func (d *dec) uint() uint64 { return number(d, binary.Uvarint) }
func (d *dec) int() int64   { return number(d, binary.Varint) }

// number reads one varint with read (binary.Uvarint or binary.Varint).
func number[T int64 | uint64](d *dec, read func([]byte) (T, int)) T {
	v, n := read(d.b)
	if n <= 0 {
		d.fail("a number is cut short or too long")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) int32(what string) int {
	v := d.int()
	if v < math.MinInt32 || v > math.MaxInt32 {
		d.fail(what + " out of range")
		return 0
	}
	return int(v)
}

func (d *dec) small(what string) uint8 {
	v := d.uint()
	if v > math.MaxUint8 {
		d.fail(what + " out of range")
		return 0
	}
	return uint8(v)
}

func (d *dec) bytes() []byte {
	n := d.uint()
	if n > uint64(len(d.b)) {
		d.fail("a length runs past the end")
		return nil
	}
	b := d.b[:n:n]
	d.b = d.b[n:]
	return b
}

func (d *dec) str() string {
	b := d.bytes()
	if !d.owned || len(b) == 0 {
		return string(b)
	}
	return unsafe.String(&b[0], len(b))
}

// count is a list's length; each element takes at least a byte, so a
// count past what is left is damage, not a reason to allocate.
func (d *dec) count() int {
	n := d.uint()
	if n > uint64(len(d.b)) {
		d.fail("a count runs past the end")
		return 0
	}
	return int(n)
}

func (d *dec) bool() bool {
	if len(d.b) == 0 {
		d.fail("cut short")
		return false
	}
	v := d.b[0]
	d.b = d.b[1:]
	if v > 1 {
		d.fail("a flag is neither 0 nor 1")
	}
	return v == 1
}

func (d *dec) time() time.Time {
	if !d.bool() {
		return time.Time{}
	}
	sec, ns := d.int(), d.uint()
	if ns >= 1e9 {
		d.fail("nanoseconds out of range")
		return time.Time{}
	}
	return time.Unix(sec, int64(ns)).UTC()
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
