package relay

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

// fill sets every exported field reachable from v to a value that is not
// its zero, so a field added to model.Task later is on the wire or fails
// the test. Strings carry bytes that are not UTF-8: ids and versions are
// compared byte for byte when a human acts.
func fill(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.String:
		v.SetString("x\xff" + strings.Repeat("é", *n%3) + string(rune('a'+*n%26)))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if v.Type() == reflect.TypeFor[time.Duration]() {
			v.SetInt(int64(*n) * int64(time.Second))
			return
		}
		v.SetInt(int64(*n%7 + 1))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n%3 + 1))
	case reflect.Float64:
		v.SetFloat(float64(*n) + 0.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := 0; i < 2; i++ {
			fill(v.Index(i), n)
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for i := 0; i < 2; i++ {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(k, n)
			fill(e, n)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 11, 28, 1, 2, 3, *n*1000, time.UTC)))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n)
			}
		}
	default:
		panic("fill: no rule for " + v.Type().String())
	}
}

// A task crosses the wire whole: every exported field of the task, its
// claim and the rest behind its pointers, with bytes that are not UTF-8.
func TestATaskCrossesTheWireWhole(t *testing.T) {
	n := 0
	var task model.Task
	fill(reflect.ValueOf(&task).Elem(), &n)
	var c model.Claim
	fill(reflect.ValueOf(&c).Elem(), &n)
	var m model.More
	fill(reflect.ValueOf(&m).Elem(), &n)
	task.SetClaim(c)
	task.SetMore(m)

	got := roundTrip(t, &task)
	if !reflect.DeepEqual(*got, task) {
		t.Errorf("the task changed on the wire:\n got %#v\nwant %#v", *got, task)
	}
	if !reflect.DeepEqual(got.Claim(), c) || !reflect.DeepEqual(got.More(), m) {
		t.Errorf("the claim or the rest changed on the wire:\n got %+v %+v\nwant %+v %+v", got.Claim(), got.More(), c, m)
	}
	// A task nobody holds keeps no claim and no rest after the trip.
	bare := &model.Task{Source: "local", ID: "t1", Title: "bare"}
	if back := roundTrip(t, bare); !reflect.DeepEqual(*back, *bare) {
		t.Errorf("a bare task on the wire: %#v", back)
	}
}

// roundTrip encodes and decodes task, then writes over the bytes it was
// decoded from, as a stream does with its buffer at the next frame: the
// task decoded must not share them.
func roundTrip(t *testing.T, task *model.Task) *model.Task {
	t.Helper()
	buf := appendAnswer(nil, &Answer{Loaded: true, Cursor: "e.1"}, [][]byte{appendTask(nil, task)})
	a, err := decodeAnswer(buf, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range buf {
		buf[i] = '#'
	}
	return a.Tasks[0]
}

// An answer's own fields cross the wire too.
func TestAnAnswerCrossesTheWireWhole(t *testing.T) {
	var a Answer
	n := 0
	fill(reflect.ValueOf(&a).Elem(), &n)
	a.Tasks = nil
	a.Full, a.Removed = false, []string{"t9", "t\xff"}
	back, err := decodeAnswer(appendAnswer(nil, &a, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*back, a) {
		t.Errorf("the answer changed on the wire:\n got %#v\nwant %#v", *back, a)
	}
}

// Whatever bytes come back from the address, the client fails with a
// message or reads tasks it can use; it never panics.
func FuzzDecodeAnswer(f *testing.F) {
	task := model.Task{Source: "local", ID: "t1", Title: "x\xff"}
	task.SetClaim(model.Claim{Holder: model.HolderAgent, Name: "A", Token: "tok"})
	task.SetMore(model.More{History: []model.Event{{Actor: "a", At: time.Unix(1, 2)}}, Carried: &model.Carried{Extra: map[string]string{"k": "v"}}})
	f.Add(appendAnswer(nil, &Answer{Loaded: true, Cursor: "e.1", Removed: []string{"t2"}}, [][]byte{appendTask(nil, &task)}))
	f.Add([]byte{})
	f.Add([]byte("the relay is down for maintenance"))
	f.Add([]byte(magic + "\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := decodeAnswer(data, nil)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an empty error")
			}
			return
		}
		for _, task := range a.Tasks {
			// What decodes encodes back to the same task.
			if back := roundTrip(t, task); !reflect.DeepEqual(back, task) {
				t.Fatalf("a decoded task does not cross the wire again unchanged: %#v then %#v", task, back)
			}
		}
		_ = a.health("h:1")
	})
}
