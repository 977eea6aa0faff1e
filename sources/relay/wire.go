package relay

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/claimdeck/claimdeck/model"
)

// Answer is a poll's answer on the wire, in JSON: a parser hardened
// against whatever a wrong address sends back, and readable with curl.
type Answer struct {
	Full     bool
	Cursor   string
	Tasks    []json.RawMessage // each a Task
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

// Task is a task on the wire: its exported fields, and the claim and the
// seldom-filled rest a model.Task keeps behind pointers of its own.
// Strings go byte for byte (escaped), since a human's action names a
// task by its id and version exactly as read.
type Task struct {
	T     model.Task
	Claim *model.Claim `json:",omitempty"`
	More  *model.More  `json:",omitempty"`
}

// encodeTask is t on the wire.
func encodeTask(t *model.Task) ([]byte, error) {
	w := Task{T: *t}
	if t.Held() || t.Claim() != (model.Claim{}) {
		c := t.Claim()
		w.Claim = &c
	}
	if m := t.More(); !reflect.ValueOf(m).IsZero() {
		w.More = &m
	}
	v, _ := rewrite(reflect.ValueOf(w), escape)
	return json.Marshal(v.Interface())
}

// decodeTask reads one task of an answer.
func decodeTask(data []byte) (*model.Task, error) {
	var w Task
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, err
	}
	v, _ := rewrite(reflect.ValueOf(w), unescape)
	w = v.Interface().(Task)
	t := w.T
	if w.Claim != nil {
		t.SetClaim(*w.Claim)
	}
	if w.More != nil {
		t.SetMore(*w.More)
	}
	return &t, nil
}

// escapeMark starts a string sent as base64: one that is not UTF-8 (JSON
// would replace its bad bytes) or that starts with the mark itself.
const escapeMark = "\x00b64:"

func escape(s string) (string, bool) {
	if utf8.ValidString(s) && !strings.HasPrefix(s, escapeMark) {
		return s, false
	}
	return escapeMark + base64.StdEncoding.EncodeToString([]byte(s)), true
}

func unescape(s string) (string, bool) {
	rest, ok := strings.CutPrefix(s, escapeMark)
	if !ok {
		return s, false
	}
	b, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		return s, false // not ours: kept as sent
	}
	return string(b), true
}

// rewrite is v with f applied to every string in it, map keys included.
// It copies only what holds a changed string and returns v itself when
// nothing changed: the tasks it reads are shared, immutable records.
func rewrite(v reflect.Value, f func(string) (string, bool)) (reflect.Value, bool) {
	switch v.Kind() {
	case reflect.String:
		s, changed := f(v.String())
		if !changed {
			return v, false
		}
		out := reflect.New(v.Type()).Elem()
		out.SetString(s)
		return out, true
	case reflect.Pointer:
		if v.IsNil() {
			return v, false
		}
		e, changed := rewrite(v.Elem(), f)
		if !changed {
			return v, false
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(e)
		return p, true
	case reflect.Slice:
		var out reflect.Value
		for i := 0; i < v.Len(); i++ {
			e, changed := rewrite(v.Index(i), f)
			if changed && !out.IsValid() {
				out = reflect.MakeSlice(v.Type(), v.Len(), v.Len())
				reflect.Copy(out, v)
			}
			if changed {
				out.Index(i).Set(e)
			}
		}
		if !out.IsValid() {
			return v, false
		}
		return out, true
	case reflect.Map:
		changedAny := false
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			k, kc := rewrite(it.Key(), f)
			e, ec := rewrite(it.Value(), f)
			changedAny = changedAny || kc || ec
			out.SetMapIndex(k, e)
		}
		if !changedAny || v.IsNil() {
			return v, false
		}
		return out, true
	case reflect.Struct:
		var out reflect.Value
		for i := 0; i < v.NumField(); i++ {
			if !v.Type().Field(i).IsExported() {
				continue
			}
			e, changed := rewrite(v.Field(i), f)
			if changed && !out.IsValid() {
				out = reflect.New(v.Type()).Elem()
				out.Set(v)
			}
			if changed {
				out.Field(i).Set(e)
			}
		}
		if !out.IsValid() {
			return v, false
		}
		return out, true
	}
	return v, false
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
