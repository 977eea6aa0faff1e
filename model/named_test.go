package model

import (
	"strings"
	"testing"
)

// An agent names a task as today's skill prints it (TASK-42), by its
// number alone, in any case, or by its native id.
func TestNamedBy(t *testing.T) {
	cases := []struct {
		id, key, ref string
		want         int
	}{
		{"page-1", "TASK-42", "TASK-42", NamedExactly},
		{"page-1", "TASK-42", "task-42", NamedExactly},
		{"page-1", "TASK-42", " 42 ", NamedByNumber},
		{"page-1", "TASK-42", "042", NamedByNumber},
		{"page-1", "TASK-42", "page-1", NamedExactly},
		{"page-1", "TASK-42", "TASK-4", NamedNot},
		{"page-1", "TASK-42", "PROJ-42", NamedByNumber},
		{"page-1", "TASK-42", "", NamedNot},
		{"42", "", "TASK-42", NamedByNumber},
		{"42", "", "42", NamedExactly},
		{"t-0042a", "", "42", NamedNot},
		{"page-1", "TASK-42", "TASK-", NamedNot},
		{"page-1", "X1-42", "42", NamedNot},
	}
	for _, c := range cases {
		task := &Task{ID: c.id, Key: c.key}
		if got := NamedBy(task, c.ref); got != c.want {
			t.Errorf("NamedBy(id %q, key %q, %q) = %v, want %v", c.id, c.key, c.ref, got, c.want)
		}
	}
}

// Whatever an agent writes, NamedBy answers without failing, and a task's
// own key always names it exactly.
func FuzzNamedBy(f *testing.F) {
	f.Add("page-1", "TASK-42", "42")
	f.Add("42", "", "TASK-42")
	f.Fuzz(func(t *testing.T, id, key, ref string) {
		task := &Task{ID: id, Key: key}
		_ = NamedBy(task, ref)
		if k := strings.TrimSpace(key); k != "" && NamedBy(task, k) != NamedExactly {
			t.Fatalf("key %q does not name its own task exactly", k)
		}
	})
}
