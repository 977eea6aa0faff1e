package lockdir

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

// FuzzParseLock feeds arbitrary bytes to the lock-file parser: it must never
// panic, and whatever it reads without a problem must survive a write and a
// second read unchanged.
func FuzzParseLock(f *testing.F) {
	for _, seed := range []string{
		`{"task_id": "design-vpc-module", "agent": "terraform-engineer", "claimed_at": "2026-02-06T10:30:00Z", "expires_at": "2026-02-06T11:30:00Z", "description": "Design and implement VPC Terraform module"}`,
		"{\n  \"task_id\": \"x\",\n  \"agent\": \"a\",\n  \"completed_at\": \"2026-02-06T11:02:03.123456+00:00\",\n  \"status\": \"completed\"\n}",
		`{"task_id": "x", "agent": "HUMAN:alice", "holder_kind": "HUMAN", "lock_token": "t", "history": [{"at": "2026-02-06T10:30:00Z", "actor": "alice", "action": "takeover"}], "reservation": {"for": "ANY"}, "priority": "high", "class": "EXPEDITE", "extra": {"nested": [1, 2]}}`,
		`{"task_id": "x", "agent": "alpha-1", "node": "ALPHA", "escalation": "urgent", "lock_token": "t"}`,
		`{"agent": 42}`, `[]`, `null`, `{`, ``, `{"priority": 1e400}`, `{"class": "SOMEDAY"}`,
		`{"history": [{"at":"a"} , {"actor":"b","action":"c","reason":"r","detail":"d"}]}`, `{"history": []}`, `{"history": [null]}`,
		`{"history": [{"at": "t", "at": "u"}]}`, `{"history": [{"at": "t", "AT": "u"}]}`, `{"history": [{"at": "t", "x": "y"}]}`,
		`{"history": [{"at": 1}]}`, `{"history": [{"at": "\u00e9"}]}`, `{"history": {"at": "t"}}`, `{"history": [{"at": "t"}, 2]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, problem := parseLock(data)
		if r == nil {
			t.Fatal("parseLock returned no record")
		}
		if slow, why := parseLockVia(data, false); why != problem || !reflect.DeepEqual(slow, r) {
			t.Fatalf("the fast path reads %q differently:\n%+v %q\n%+v %q", data, r, problem, slow, why)
		}
		if problem != "" {
			return
		}
		out := r.marshal()
		again, problem := parseLock(out)
		if problem != "" {
			t.Fatalf("claimdeck cannot read what it wrote: %s\n%s", problem, out)
		}
		if !bytes.Equal(again.marshal(), out) {
			t.Fatalf("a write and re-read changed the file:\n%s\n%s", out, again.marshal())
		}
	})
}

// FuzzSplitObject holds the lock-file parser's fast path to encoding/json:
// whatever it splits, json.Unmarshal into a map splits the same way.
func FuzzSplitObject(f *testing.F) {
	for _, seed := range []string{
		`{"task_id": "x", "agent": "a", "priority": -1.5e3, "ok": true, "no": null, "h": [{"at": "t"}], "r": {"for": "ANY"}}`,
		`{}`, ` { "a" : "\u00e9\n" , "a": 2 } `, `{"a": 01}`, `{"a": "x"} x`, `{"a": [1, 2}`, `{"é": 1}`, "{\"a\": \"\xff\"}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		split, ok := splitObject(data)
		if !ok {
			return
		}
		got := map[string]json.RawMessage{}
		for _, m := range split {
			got[m.key] = m.raw // the last of a repeated key, as take reads it
			if m.text != string(m.raw) {
				t.Fatalf("%q: member %q has text %q for %q", data, m.key, m.text, m.raw)
			}
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("split %q, which encoding/json rejects: %v", data, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %d members, encoding/json has %d", data, len(got), len(want))
		}
		for k, v := range want {
			if !bytes.Equal(got[k], v) {
				t.Fatalf("%q: member %q is %q, encoding/json has %q", data, k, got[k], v)
			}
		}
	})
}

// FuzzParseTasks: any tasks file parses to entries or to an error, and the
// error never repeats the file (it may be another user's).
func FuzzParseTasks(f *testing.F) {
	for _, s := range []string{
		`[{"id": "a", "title": "t", "priority": 2, "class": "EXPEDITE"}]`,
		"- id: a\n  priority: high\n- id: b\n",
		"- id: [\n", `[{"id": 1}, {"id": }]`, "just words", "{a: b}", "- &x a\n- *y\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		const secret = "Qx7PRIVATEzz"
		for _, data := range []string{doc, doc + "\n" + secret + "\n", secret + ": " + doc, "- " + secret + doc} {
			_, err := parseTasks([]byte(data))
			if err != nil && strings.Contains(err.Error(), secret[:4]) {
				t.Fatalf("%q quotes the file", err)
			}
		}
	})
}

// FuzzMarshal holds the lock-file writer's own encoders to encoding/json
// for texts that are the fuzzer's (quotes, control characters, <>&,
// U+2028, invalid UTF-8): the same bytes json.Marshal writes, so a file
// reads the same to the seed's python3 and to older claimdeck versions.
// The whole file, written and read back, keeps its numbers and history.
func FuzzMarshal(f *testing.F) {
	for _, seed := range [][3]string{
		{"design-vpc-module", "terraform-engineer", "Design and implement VPC Terraform module"},
		{"a<b", "a&b", "x>y"},
		{"a\"b", "x\\y", "<b>&amp;</b>\n\t\u2028\u2029"},
		{"\xff\xfe", "é", "\x00\x1f\x7f"},
		{"", "", ""},
	} {
		f.Add(seed[0], seed[1], seed[2], 13)
	}
	f.Fuzz(func(t *testing.T, a, b, c string, n int) {
		for _, s := range []string{a, b, c} {
			want, _ := json.Marshal(s)
			if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
				t.Fatalf("%q is written %s; encoding/json writes %s", s, got, want)
			}
		}
		at := time.Date(2026, 2, 6, 10, 30, 0, 123456789, time.UTC)
		r := &record{TaskID: "job", Agent: b, Description: c, ClaimedAt: at, Priority: n, Class: []model.Class{model.ClassExpedite, model.ClassFixedDate, model.ClassIntangible}[uint(n)%3]}
		for i := 0; i < 1+int(uint(n)%4); i++ {
			r.addEvent(model.Event{At: at, Actor: a, Action: b, Reason: strings.Repeat(c, i%2), Detail: strings.Repeat(a, i)})
		}
		want, _ := json.Marshal(r.History)
		if got := appendHistory(nil, r.History); !bytes.Equal(got, want) {
			t.Fatalf("history is written\n%s\nencoding/json writes\n%s", got, want)
		}
		back, problem := parseLock(r.marshalAll())
		if problem != "" || back.Priority != r.Priority || back.Class != r.Class || len(back.History) != len(r.History) {
			t.Fatalf("read back as priority %d, class %v, %d events (%s); wrote %d, %v, %d", back.Priority, back.Class, len(back.History), problem, r.Priority, r.Class, len(r.History))
		}
	})
}
