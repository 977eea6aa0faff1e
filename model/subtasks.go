package model

// Subtask is one sub-task as its parent lists it.
type Subtask struct {
	ID        string
	Key       string
	Title     string
	State     State
	RawStatus string
}

// Family is what reading a task on its own tells of its relatives.
type Family struct {
	Subtasks []Subtask
}

// SubtaskOf is t as its parent lists it.
func SubtaskOf(t *Task) Subtask {
	return Subtask{ID: t.ID, Key: t.DisplayKey(), Title: t.Title, State: t.State, RawStatus: t.RawStatus}
}

// SubtaskIndex finds sub-tasks among the tasks one look at the queues
// shows: parent's Ref → its sub-tasks, in the order given.
type SubtaskIndex map[string][]*Task

// Add indexes t if it is a sub-task; callers add every task they pass
// over, and only sub-tasks cost anything.
func (x SubtaskIndex) Add(t *Task) {
	if t.Parent() != "" {
		ref := t.Source + "/" + t.Parent()
		x[ref] = append(x[ref], t)
	}
}

// Of returns parent's sub-tasks.
func (x SubtaskIndex) Of(parent *Task) []*Task {
	if len(x) == 0 {
		return nil
	}
	return x[parent.Ref()]
}

// Open is how many of parent's sub-tasks are open: the count its backend
// recorded or the open ones seen, whichever is more (a poll may not carry
// the count, and a rollup may count sub-tasks the look does not show).
func (x SubtaskIndex) Open(parent *Task) int {
	n := 0
	for _, s := range x.Of(parent) {
		if !s.State.Final() {
			n++
		}
	}
	return max(n, int(parent.OpenSubtasks))
}
