package model

import (
	"errors"
	"io"
	"testing"
)

func TestErrorfWrapsWithW(t *testing.T) {
	err := Errorf(CodeAPIError, "get", "T-1", "reading it: %w", io.ErrUnexpectedEOF)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("errors.Is lost the %%w cause of %v", err)
	}
	if !errors.Is(err, ErrAPI) {
		t.Fatalf("errors.Is lost the code of %v", err)
	}
	if got, want := err.Error(), "API_ERROR: get T-1: reading it: unexpected EOF"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	both := Errorf(CodeConflict, "claim", "", "%w and %w", io.EOF, ErrNoSuchTask)
	if !errors.Is(both, io.EOF) || !errors.Is(both, ErrNoSuchTask) {
		t.Fatalf("two %%w causes not both reachable: %v", both)
	}
	plain := Errorf(CodeConflict, "claim", "", "held by %s", "A")
	if errors.Is(plain, ErrNoSuchTask) || plain.Error() != "CONFLICT: claim: held by A" {
		t.Fatalf("plain Errorf = %q", plain.Error())
	}
	wrapped := Wrap(CodeAPIError, "poll", "", io.EOF)
	if !errors.Is(wrapped, io.EOF) {
		t.Fatal("Wrap lost its cause")
	}
}
