package hub

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/sourcetest/memsource"
)

// BenchmarkPollMergePublish is the hub's own part of one incremental poll
// of a source holding n tasks, k of them changed: merging the delta and
// publishing the snapshot a dashboard takes (no source, no dashboard).
// Every poll of a busy queue pays it, in every dashboard.
func BenchmarkPollMergePublish(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		for _, k := range []int{1, 100} {
			b.Run(fmt.Sprintf("tasks-%d/changed-%d", n, k), func(b *testing.B) {
				h := New(Config{Feeds: []Feed{{Source: memsource.NewMemory("local")}}})
				f := h.feeds[0]
				tasks := make([]*model.Task, n)
				for i := range tasks {
					tasks[i] = &model.Task{Source: "local", ID: "TASK-" + strconv.Itoa(i), Version: "1", State: model.StateQueued}
				}
				h.mu.Lock()
				defer h.mu.Unlock()
				h.merge(f, sources.Delta{Full: true, Tasks: tasks})
				h.publish()
				<-h.out
				changed := make([]*model.Task, k)
				b.ResetTimer()
				for i := range b.N {
					for j := range changed {
						t := *tasks[(i*k+j)*7919%n]
						t.Version = strconv.Itoa(i + 2)
						changed[j] = &t
					}
					h.merge(f, sources.Delta{Tasks: changed})
					h.publish()
					<-h.out
				}
			})
		}
	}
}
