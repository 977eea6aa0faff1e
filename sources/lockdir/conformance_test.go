package lockdir

import (
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/sourcetest"
)

// openTemp opens a source on a fresh directory with claimdeck's own tasks
// file and the given default lease.
func openTemp(t testing.TB, lease time.Duration) *Source {
	t.Helper()
	src, err := Open(Config{Name: "locks", Path: t.TempDir(), Lease: lease})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

func TestConformance(t *testing.T) { sourcetest.Run(t, harness(false)) }

// TestConformanceByListing runs the kit on sources without the kernel's
// word: every poll lists and lstats both directories, as on NFS.
func TestConformanceByListing(t *testing.T) { sourcetest.Run(t, harness(true)) }

func harness(byListing bool) sourcetest.Harness {
	return sourcetest.Harness{
		// The kit asserts seed 002's 20 minute default lease; seed 004's is
		// 1 h, so the harness configures 20 minutes explicitly.
		NewClocked: func(t testing.TB, now func() time.Time) sources.Source {
			src, err := Open(Config{Name: "locks", Path: t.TempDir(), Lease: 20 * time.Minute, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			if byListing {
				src.notifier().close()
			}
			return src
		},
		// Another process: a second source on the same directory.
		Reopen: func(t testing.TB, src sources.Source) sources.Source {
			other, err := Open(src.(*Source).cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { other.Close() })
			return other
		},
	}
}
