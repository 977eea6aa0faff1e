package hub

import (
	"slices"
	"strconv"
	"testing"

	"github.com/claimdeck/claimdeck/model"
)

// Tasks read the same in every way, at every length around a part's
// edge, and All stops when asked.
func TestTasksReadAlike(t *testing.T) {
	for _, n := range []int{0, 1, partSize - 1, partSize, partSize + 1, 3*partSize + 5} {
		ts := make([]*model.Task, n)
		for i := range ts {
			ts[i] = &model.Task{ID: strconv.Itoa(i)}
		}
		extra := []*model.Task{{ID: "archived"}}
		for _, l := range []Tasks{TasksOf(ts), {parts: TasksOf(ts).parts, live: n, extra: extra}} {
			want := append(slices.Clone(ts), l.extra...)
			if l.Len() != len(want) || !slices.Equal(l.AppendTo(nil), want) || !slices.Equal(slices.Collect(l.All()), want) {
				t.Fatalf("%d tasks: Len %d, AppendTo %d, All %d; want %d", n, l.Len(), len(l.AppendTo(nil)), len(slices.Collect(l.All())), len(want))
			}
			for i, task := range want {
				if l.At(i) != task {
					t.Fatalf("%d tasks: At(%d) is %v, want %v", n, i, l.At(i), task)
				}
			}
			if got := l.AppendTo([]*model.Task{{ID: "before"}}); len(got) != len(want)+1 || got[0].ID != "before" {
				t.Fatalf("%d tasks: AppendTo dropped what was there", n)
			}
			seen := 0
			for range l.All() {
				if seen++; seen == 2 {
					break
				}
			}
			if !l.Same(l) {
				t.Fatalf("%d tasks: a list is not the Same as itself", n)
			}
		}
	}
	if a, b := TasksOf([]*model.Task{{ID: "a"}}), TasksOf([]*model.Task{{ID: "a"}}); a.Same(b) {
		t.Fatal("two publishes of equal tasks are the Same")
	}
}
