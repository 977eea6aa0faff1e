package model

import (
	"testing"
	"unsafe"
)

// The dashboard holds every live task, 100,000 of them at scale (issue 16)
// and a million at the most (issue 34), each its own allocation: a Task one
// byte over 256 lands in Go's 288-byte size class and costs the dashboard
// 32 MB more at a million. A field added here must find its room: in More,
// if a poll seldom fills it, or as a Stamp rather than a time.Time.
func TestTaskSize(t *testing.T) {
	if n := unsafe.Sizeof(Task{}); n > 256 {
		t.Fatalf("model.Task is %d bytes, over the 256-byte allocation size class", n)
	}
}
