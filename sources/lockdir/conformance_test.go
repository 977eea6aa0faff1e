package lockdir

import (
	"os"
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

func TestConformance(t *testing.T) {
	sourcetest.Run(t, sourcetest.Harness{
		// The kit asserts seed 002's 20 minute default lease; seed 004's is
		// 1 h, so the harness configures 20 minutes explicitly.
		New:     func(t testing.TB) sources.Source { return openTemp(t, 20*time.Minute) },
		Advance: backdate,
	})
}

// backdate makes d pass for a task's lock: a lease is judged on the file's
// times and on its mtime (the kernel's clock, which no test can move), so
// both move back by d.
func backdate(t testing.TB, src sources.Source, id string, d time.Duration) {
	t.Helper()
	p := src.(*Source).path(id, kindLock)
	fs := readFile(p, kindLock, nil)
	if fs == nil || fs.problem != "" {
		t.Fatalf("backdate %s: no readable lock", id)
	}
	rec := fs.rec.clone()
	for _, at := range []*time.Time{&rec.ClaimedAt, &rec.ExpiresAt, &rec.Heartbeat} {
		if !at.IsZero() {
			*at = at.Add(-d)
		}
	}
	if err := os.WriteFile(p, rec.marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fs.mtime.Add(-d), fs.mtime.Add(-d)); err != nil {
		t.Fatal(err)
	}
}
