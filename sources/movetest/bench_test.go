package movetest_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/sources"
)

// BenchmarkMove moves a queue of 1000 tasks (every tenth claimed, each
// with a history) from SQLite into SQLite and into PostgreSQL, beside its
// floor measured in the same run: `copy` of the same queue (PlanCopy and
// Apply), which a move does between its freeze and its mark. It reports
// how long writes were refused (frozen-ms) and the whole move (ns/op).
func BenchmarkMove(b *testing.B) {
	const tasks = 1000
	targets := map[string]func(b *testing.B, dir string) func(context.Context, bool) (sources.Source, error){
		"sqlite": func(b *testing.B, dir string) func(context.Context, bool) (sources.Source, error) {
			return sqlite("b", filepath.Join(dir, "b.db"))
		},
		"postgres": func(b *testing.B, dir string) func(context.Context, bool) (sources.Source, error) {
			return postgres("b", pgDSNOf(b), pgTable())
		},
	}
	for _, to := range []string{"sqlite", "postgres"} {
		for _, kind := range []string{"move", "copy-floor"} {
			b.Run(fmt.Sprintf("to-%s/%s", to, kind), func(b *testing.B) {
				ctx := context.Background()
				var frozen time.Duration
				for b.Loop() {
					b.StopTimer()
					dir := b.TempDir()
					s := stores{"a": sqlite("a", filepath.Join(dir, "a.db")), "b": targets[to](b, dir)}
					a, err := s.open(ctx, "a", true)
					if err != nil {
						b.Fatal(err)
					}
					for i := range tasks {
						t, err := a.Create(ctx, sources.NewTask{ID: fmt.Sprintf("t-%04d", i), Title: "task"})
						if err != nil {
							b.Fatal(err)
						}
						if i%10 == 0 {
							if _, err := a.Claim(ctx, t.ID, sources.ClaimRequest{Agent: "x", Lease: time.Hour}); err != nil {
								b.Fatal(err)
							}
						}
					}
					dst, err := s.open(ctx, "b", true)
					if err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					if kind == "move" {
						rep, err := sources.Move(ctx, a, target(s, "b"), sources.MoveOptions{})
						if err != nil {
							b.Fatal(err)
						}
						frozen += rep.Frozen
					} else {
						plan, err := sources.PlanCopy(ctx, a, dst, false, nil)
						if err == nil {
							_, err = plan.Apply(ctx, dst, nil)
						}
						if err != nil {
							b.Fatal(err)
						}
					}
					b.StopTimer()
					dst.Close()
					a.Close()
					b.StartTimer()
				}
				if kind == "move" {
					b.ReportMetric(float64(frozen.Milliseconds())/float64(b.N), "frozen-ms/op")
				}
			})
		}
	}
}
