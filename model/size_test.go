package model

import (
	"testing"
	"unsafe"
)

// The dashboard holds every live task, 100,000 of them at scale (issue 16),
// each its own allocation: a Task one byte over 448 lands in Go's 480 or
// 576-byte size class and costs the dashboard up to 13 MB more. A field
// added here must find its room, for example behind a pointer as Family,
// Reservation and Unblock are.
func TestTaskSize(t *testing.T) {
	if n := unsafe.Sizeof(Task{}); n > 352 {
		t.Fatalf("model.Task is %d bytes, over the 352-byte allocation size class", n)
	}
}
