package lockdir

import (
	"context"
	"os/exec"
	"runtime"
	"testing"
)

// BenchmarkScan100k is a directory of 100,000 lock files: the first scan
// (every file read and parsed) beside `find | xargs cat` of the same tree
// as the floor, the heap the scanned tasks hold, an idle poll, and one file
// rewritten until a poll returns it.
func BenchmarkScan100k(b *testing.B) {
	const n = 100_000
	dir := lockDirOf(b, n)
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
			d, err := src.Poll(ctx, "")
			if err != nil || len(d.Tasks) != n {
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
	benchIncrementalPolls(b, ctx, dir)
}
