package relay

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"io"
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

// answerOf is an answer of n changed tasks.
func answerOf(n int) *Answer {
	a := &Answer{Loaded: true, Cursor: "e.1"}
	for range n {
		a.Tasks = append(a.Tasks, wire(benchTask()))
	}
	return a
}

// What a dashboard pays for each changed task it reads from a relay, in
// answers of 1, 20 and 1,000 (ns/task), and the relay for each it
// encodes; gob against JSON, which the wire used first.
func BenchmarkDecodeTask(b *testing.B) {
	for _, n := range []int{1, 20, 1000} {
		a := answerOf(n)
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(a); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("gob/%d", n), func(b *testing.B) {
			b.SetBytes(int64(buf.Len()))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := decodeAnswer(bytes.NewReader(buf.Bytes())); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/task")
		})
		data, err := json.Marshal(a)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("json/%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				var back Answer
				if err := json.Unmarshal(data, &back); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/task")
		})
	}
}

func BenchmarkEncodeAnswer1000(b *testing.B) {
	a := answerOf(1000)
	b.ReportAllocs()
	for b.Loop() {
		if err := gob.NewEncoder(io.Discard).Encode(a); err != nil {
			b.Fatal(err)
		}
	}
}
