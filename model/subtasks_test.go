package model

import "testing"

func TestOpenSubtasksCountsTheSubtasksSeenOrTheBackendsCountWhicheverIsMore(t *testing.T) {
	epic := &Task{Source: "prod", ID: "1"}
	tasks := []*Task{
		epic,
		{Source: "prod", ID: "2", more: &More{Parent: "1"}, State: StateQueued},
		{Source: "prod", ID: "3", more: &More{Parent: "1"}, State: StateClaimed},
		{Source: "prod", ID: "4", more: &More{Parent: "1"}, State: StateDone},
		{Source: "prod", ID: "5", more: &More{Parent: "1"}, State: StateCanceled},
		{Source: "staging", ID: "6", more: &More{Parent: "1"}, State: StateQueued}, // another source's task 1
	}
	x := SubtaskIndex{}
	for _, task := range tasks {
		x.Add(task)
	}
	if got := len(x.Of(epic)); got != 4 {
		t.Fatalf("sub-tasks of prod/1: %d, want 4", got)
	}
	cases := []struct {
		recorded int32
		want     int
	}{{0, 2}, {1, 2}, {3, 3}}
	for _, c := range cases {
		epic.OpenSubtasks = c.recorded
		if got := x.Open(epic); got != c.want {
			t.Errorf("with %d recorded open: Open = %d, want %d", c.recorded, got, c.want)
		}
	}
	if n := x.Open(&Task{Source: "prod", ID: "9"}); n != 0 {
		t.Errorf("a task without sub-tasks has %d open", n)
	}
	if s := SubtaskOf(tasks[2]); s.State != StateClaimed || s.Key != "3" || s.ID != "3" {
		t.Errorf("SubtaskOf: %+v", s)
	}
}
