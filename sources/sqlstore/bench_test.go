package sqlstore

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// fill inserts n pending tasks in one statement (generate_series or a
// recursive CTE), so that setup does not dominate a benchmark.
func fill(b testing.TB, s *Store, n int) {
	b.Helper()
	ctx := context.Background()
	var q string
	if s.d.name == postgres.name {
		q = fmt.Sprintf(`INSERT INTO %s (id, title, priority, status, assigned_worker, version)
			SELECT 'bench-' || g, 'bench task ' || g, (ARRAY['low','medium','high','critical'])[1 + g %% 4], 'pending', $1, 0
			FROM generate_series(1, $2::int) AS g`, s.table)
	} else {
		q = fmt.Sprintf(`WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < $2)
			INSERT INTO %s (id, title, priority, status, assigned_worker, version, created_at, updated_at)
			SELECT 'bench-' || i, 'bench task ' || i, 'medium', 'pending', $1, 0, %s, %s FROM g`, s.table, sqliteNow, sqliteNow)
	}
	if _, err := s.db.exec(ctx, q, s.cfg.Pool, n); err != nil {
		b.Fatal(err)
	}
}

// cycles runs claim→complete on every task with `agents` goroutines and
// reports cycles per second.
func cycles(b *testing.B, agents int, cycle func(agent string) bool) {
	start := time.Now()
	drive(agents, cycle, nil)
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "cycles/s")
}

// drive runs cycle on n agents at once, each until stop closes or its
// cycle returns false (the queue is empty, or a call failed), and counts
// the cycles done.
func drive(n int, cycle func(agent string) bool, stop <-chan struct{}) int64 {
	var done atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(agent string) {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if !cycle(agent) {
					return
				}
				done.Add(1)
			}
		}(fmt.Sprintf("agent-%02d", i))
	}
	wg.Wait()
	return done.Load()
}

// claimdeckCycle is an agent's step as `claimdeck next` and `claimdeck
// complete` take it: claim the first task in pull order, complete it.
func claimdeckCycle(tb testing.TB, s *Store) func(agent string) bool {
	ctx := context.Background()
	return func(agent string) bool {
		t, err := s.ClaimNext(ctx, sources.ClaimRequest{Agent: agent})
		if err != nil || t == nil {
			if err != nil {
				tb.Error(err)
			}
			return false
		}
		if _, err := s.Finish(ctx, t.ID, t.Claim().Token, sources.Outcome{State: model.StateDone}); err != nil {
			tb.Error(err)
			return false
		}
		return true
	}
}

// bareCycle sends claimdeckCycle's SQL text and arguments through the
// same pool, reading back only the raw id: the floor under the store.
func bareCycle(tb testing.TB, s *Store) func(agent string) bool {
	ctx := context.Background()
	st, _ := s.stmts()
	pool := s.pgPool
	return func(agent string) bool {
		args, err := s.claimArgs(sources.ClaimRequest{Agent: agent})
		if err != nil {
			tb.Error(err)
			return false
		}
		token := args[3].(string)
		rows, err := pool.Query(ctx, st.claimNext, args...)
		if err != nil {
			tb.Error(err)
			return false
		}
		var id string
		if rows.Next() {
			id = string(rows.RawValues()[0])
		}
		rows.Close()
		if id == "" {
			return false
		}
		fin, _ := s.finishArgs(id, token, statusCompleted, sources.Outcome{State: model.StateDone})
		if _, err := pool.Exec(ctx, st.finish, fin...); err != nil {
			tb.Error(err)
			return false
		}
		return true
	}
}

// BenchmarkPostgresClaimComplete compares claimdeck's claim-next +
// complete with a bare pgx loop issuing the very same SQL text and
// arguments, 16, 64 and 256 agents at once, in the same run. Both go
// through the store's pgxpool (its default size: four connections, or the
// processor count if larger).
func BenchmarkPostgresClaimComplete(b *testing.B) {
	for _, agents := range []int{16, 64, 256} {
		b.Run(fmt.Sprintf("agents-%d", agents), func(b *testing.B) { claimComplete(b, agents, 0) })
	}
}

// BenchmarkPostgresClaimCompletePools is BenchmarkPostgresClaimComplete
// with pools of 4, 16 and 64 connections, to find where claim→complete
// stops scaling and why: beside cycles per second it reports the server's
// processor time, what its busy backends wait on, and the pool's waits.
func BenchmarkPostgresClaimCompletePools(b *testing.B) {
	for _, conns := range []int{4, 16, 64} {
		for _, agents := range []int{16, 64, 256} {
			b.Run(fmt.Sprintf("pool-%d/agents-%d", conns, agents), func(b *testing.B) { claimComplete(b, agents, conns) })
		}
	}
}

// claimComplete drains b.N tasks with claimdeck's cycle, then another b.N
// with the bare one, each from a fresh analyzed table, through pools of
// conns connections (zero: pgxpool's default).
func claimComplete(b *testing.B, agents, conns int) {
	for _, side := range []struct {
		name  string
		cycle func(testing.TB, *Store) func(string) bool
	}{{"claimdeck", claimdeckCycle}, {"bare-pgx", bareCycle}} {
		b.Run(side.name, func(b *testing.B) {
			s := openPG(b, Config{Create: true, DSN: poolDSN(b, conns)})
			defer s.Close()
			fill(b, s, b.N)
			// Without statistics the planner takes the fresh table for a
			// few rows and sorts every pending one on each claim.
			analyze(b, s)
			l := measureLoad(b, postmaster(b, s), s.pgPool)
			b.ResetTimer()
			cycles(b, agents, side.cycle(b, s))
			b.StopTimer()
			l.end().report(b, "", int64(b.N))
		})
	}
}

// The SQLite benchmark drains one file with 4 separate processes: this test
// binary re-executed as a worker.
const workerEnv = "CLAIMDECK_SQLITE_BENCH_WORKER"

func TestMain(m *testing.M) {
	if path := os.Getenv(workerEnv); path != "" {
		os.Exit(sqliteWorker(path))
	}
	if path := os.Getenv(insertEnv); path != "" {
		os.Exit(sqliteInsert(path))
	}
	code := m.Run()
	closeQueues()
	os.Exit(code)
}

func sqliteWorker(path string) int {
	ctx := context.Background()
	s, err := Open(ctx, Config{Name: "bench", Driver: "sqlite", Path: path})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Close()
	n := 0
	agent := fmt.Sprintf("proc-%d", os.Getpid())
	for {
		t, err := s.ClaimNext(ctx, sources.ClaimRequest{Agent: agent})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if t == nil {
			break
		}
		if _, err := s.Finish(ctx, t.ID, t.Claim().Token, sources.Outcome{State: model.StateDone}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		n++
	}
	fmt.Println(n)
	return 0
}

func BenchmarkSQLiteClaimComplete4Processes(b *testing.B) {
	path := filepath.Join(b.TempDir(), "queue.db")
	s := openSQLite(b, Config{Create: true, Path: path})
	fill(b, s, b.N)
	s.Close()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	counts := make([]int, 4)
	for i := range counts {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			cmd := exec.Command(exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), workerEnv+"="+path)
			cmd.Stderr = os.Stderr
			out, err := cmd.Output()
			if err != nil {
				b.Errorf("worker %d: %v", i, err)
				return
			}
			sc := bufio.NewScanner(strings.NewReader(string(out)))
			for sc.Scan() {
				counts[i], _ = strconv.Atoi(strings.TrimSpace(sc.Text()))
			}
		}(i)
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "cycles/s")
	total := 0
	for _, c := range counts {
		total += c
	}
	if total != b.N {
		b.Fatalf("the workers completed %d of %d tasks", total, b.N)
	}
}

// BenchmarkIdlePoll measures an incremental poll on a table where nothing
// changed, at 10,000 and 1,000,000 rows: it must cost the same.
func BenchmarkIdlePoll(b *testing.B) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		for _, rows := range []int{1_000, 10_000, 100_000, 1_000_000} {
			b.Run(fmt.Sprintf("%s/%d", dialect, rows), func(b *testing.B) {
				var s *Store
				if dialect == "sqlite" {
					s = openSQLite(b, Config{Create: true, Overlap: time.Millisecond, ReconcileEvery: time.Hour})
				} else {
					s = openPG(b, Config{Create: true, Overlap: time.Millisecond, ReconcileEvery: time.Hour})
				}
				defer s.Close()
				fill(b, s, rows)
				ctx := context.Background()
				if s.d.name == postgres.name {
					if _, err := s.db.exec(ctx, "ANALYZE "+s.table); err != nil {
						b.Fatal(err)
					}
				}
				d, err := s.Poll(ctx, "")
				if err != nil || len(d.Tasks) != rows {
					b.Fatalf("full poll: %d rows, %v", len(d.Tasks), err)
				}
				time.Sleep(5 * time.Millisecond)
				cur := d.Cursor
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					d, err := s.Poll(ctx, cur)
					if err != nil || len(d.Tasks) != 0 {
						b.Fatalf("idle poll: %d rows, %v", len(d.Tasks), err)
					}
				}
			})
		}
	}
}

// BenchmarkFullPoll100k is the dashboard's first load of a 100,000-row
// queue, embedded or on PostgreSQL: one SELECT of every row, mapped onto
// the model.
func BenchmarkFullPoll100k(b *testing.B) {
	for _, driver := range []string{"sqlite", "postgres"} {
		b.Run(driver, func(b *testing.B) {
			var s *Store
			if driver == "sqlite" {
				s = openSQLite(b, Config{Create: true})
			} else {
				s = openPG(b, Config{Create: true})
			}
			defer s.Close()
			fill(b, s, 100_000)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				d, err := s.Poll(ctx, "")
				if err != nil || len(d.Tasks) != 100_000 {
					b.Fatalf("full poll: %d rows, %v", len(d.Tasks), err)
				}
			}
		})
	}
}
