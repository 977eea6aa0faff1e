package model

import (
	"testing"
	"unsafe"
)

// The dashboard holds every live task, 100,000 of them at scale (issue 16)
// and a million at the most (issue 34), each its own allocation: a Task one
// byte over 160 lands in Go's 176-byte size class and costs the dashboard
// 16 MB more at a million. A field added here must find its room: in More,
// if a poll seldom fills it, or as a Stamp rather than a time.Time. (The
// claim, 96 bytes, sits behind a pointer for the same reason: most of a
// big queue is unclaimed; the reservation is in More: few tasks are handed
// off.)
func TestTaskSize(t *testing.T) {
	if n := unsafe.Sizeof(Task{}); n > 160 {
		t.Fatalf("model.Task is %d bytes, over the 160-byte allocation size class", n)
	}
}
