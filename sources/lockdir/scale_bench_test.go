package lockdir

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/sources"
)

// BenchmarkScan100k is a directory of 100,000 lock files: the first scan
// (every file read and parsed) beside `find | xargs cat` of the same tree
// as the floor, the heap the scanned tasks hold, an idle poll, and one file
// rewritten until a poll returns it.
func BenchmarkScan100k(b *testing.B) {
	benchScale(b, lockDirOf(b, 100_000), 100_000)
}

// BenchmarkScanArchive100k is 10,000 lock files beside 100,000 done
// markers the seed's cleanup moved to archive/ two days after they
// finished, polled as the dashboard polls them: with a 24 h window. The
// same measures as BenchmarkScan100k; the floor reads all 110,000 files.
func BenchmarkScanArchive100k(b *testing.B) {
	dir := lockDirOf(b, 10_000)
	archivedOf(b, dir, "done-", 100_000, 48*time.Hour)
	benchScale(b, dir, 10_000, sources.PollOption{FinishedAfter: time.Now().Add(-24 * time.Hour)})
}

// benchScale measures a source on dir, whose full poll with opt holds live
// tasks.
func benchScale(b *testing.B, dir string, live int, opt ...sources.PollOption) {
	ctx := context.Background()
	b.Run("floor-find-xargs-cat", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			out, err := exec.Command("sh", "-c", `find "$1" -type f -print0 | xargs -0 cat | wc -c`, "sh", dir).Output()
			if err != nil || len(out) == 0 {
				b.Fatalf("find | xargs cat: %v", err)
			}
		}
	})
	b.Run("first-scan", func(b *testing.B) {
		defer reportCPU(b)()
		var heap uint64
		for i := 0; i < b.N; i++ {
			src, err := Open(Config{Name: "bench", Path: dir})
			if err != nil {
				b.Fatal(err)
			}
			d, err := src.Poll(ctx, "", opt...)
			if err != nil || len(d.Tasks) != live {
				b.Fatalf("%d tasks, %v", len(d.Tasks), err)
			}
			b.StopTimer()
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			heap = max(heap, ms.HeapAlloc)
			runtime.KeepAlive(d)
			src.Close()
			b.StartTimer()
		}
		b.ReportMetric(float64(heap)/(1<<20), "heap-MB")
	})
	benchIncrementalPolls(b, ctx, dir, opt...)
}

// archivedOf adds n done markers to dir's archive/, as the seed's
// complete and cleanup leave them, finished age ago (their mtime too), and
// returns their ids.
func archivedOf(tb testing.TB, dir, prefix string, n int, age time.Duration) []string {
	tb.Helper()
	archive := filepath.Join(dir, "archive")
	if err := os.MkdirAll(archive, 0o755); err != nil {
		tb.Fatal(err)
	}
	at := time.Now().Add(-age)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s%d", prefix, i)
		body := fmt.Sprintf("{\n  \"task_id\": %q,\n  \"agent\": \"agent-%d\",\n  \"claimed_at\": %q,\n  \"expires_at\": %q,\n  \"description\": \"Design and implement VPC Terraform module\",\n  \"completed_at\": %q,\n  \"status\": \"completed\"\n}",
			ids[i], i%64, at.Add(-time.Hour).UTC().Format(time.RFC3339), at.UTC().Format(time.RFC3339), at.UTC().Format(time.RFC3339Nano))
		p := filepath.Join(archive, ids[i]+".done")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			tb.Fatal(err)
		}
		if err := os.Chtimes(p, at, at); err != nil {
			tb.Fatal(err)
		}
	}
	return ids
}
