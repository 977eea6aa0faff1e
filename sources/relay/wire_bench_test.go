package relay

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

// benchTask is a claimed task as a poll of seed 003's table reads it.
func benchTask() *model.Task {
	now := time.Now()
	t := &model.Task{Source: "team", ID: "TASK-4242", Key: "TASK-4242", Title: "Rotate the certificates of service 42 in region eu-west",
		RawStatus: "in_progress", Priority: 2, State: model.StateClaimed, Class: model.ClassStandard,
		CreatedAt: model.StampOf(now.Add(-time.Hour)), EditedAt: model.StampOf(now), Version: "17"}
	t.SetClaim(model.Claim{Holder: model.HolderAgent, Name: "agent-7", RunID: "run-7-3", Token: "0b8f6c1e-2f7a-4d55-9e0c-3b1a7d9c4e21",
		ClaimedAt: model.StampOf(now.Add(-time.Minute)), HeartbeatAt: model.StampOf(now), Expires: model.StampOf(now.Add(time.Hour))})
	return t
}

// answerOf is an answer of n changed tasks on the wire.
func answerOf(n int) []byte {
	tasks := make([][]byte, n)
	for i := range tasks {
		tasks[i] = appendTask(nil, benchTask())
	}
	return appendAnswer(nil, &Answer{Loaded: true, Cursor: "e.1"}, tasks)
}

// gobTask is a task as gob carried it, the wire's first form.
type gobTask struct {
	T     model.Task
	Claim *model.Claim
	More  *model.More
}

// What a dashboard pays for each changed task it reads from a relay, in
// answers of 1, 20 and 1,000 (ns/task): the wire's own form against gob
// and JSON, which it used first, decoding the same tasks.
func BenchmarkDecodeTask(b *testing.B) {
	for _, n := range []int{1, 20, 1000} {
		data := answerOf(n)
		b.Run(fmt.Sprintf("wire/%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			w := words{} // a stream's, kept from answer to answer
			for b.Loop() {
				if _, err := decodeAnswer(data, w); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/task")
		})
		t := benchTask()
		c := t.Claim()
		old := make([]gobTask, n)
		for i := range old {
			old[i] = gobTask{T: *t, Claim: &c}
		}
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(old); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("gob/%d", n), func(b *testing.B) {
			b.SetBytes(int64(buf.Len()))
			b.ReportAllocs()
			for b.Loop() {
				var back []gobTask
				if err := gob.NewDecoder(bytes.NewReader(buf.Bytes())).Decode(&back); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/task")
		})
		js, err := json.Marshal(old)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("json/%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(js)))
			b.ReportAllocs()
			for b.Loop() {
				var back []gobTask
				if err := json.Unmarshal(js, &back); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/task")
		})
	}
}

// What the relay pays to encode a changed task once, for every client.
func BenchmarkEncodeTask(b *testing.B) {
	t := benchTask()
	b.ReportAllocs()
	var buf []byte
	for b.Loop() {
		buf = appendTask(buf[:0], t)
	}
}
