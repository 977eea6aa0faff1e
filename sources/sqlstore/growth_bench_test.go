package sqlstore

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/sourcetest"
)

// growthSizes are the queue sizes the growth benchmarks compare, smallest
// first: 1,000, 100,000 and 1,000,000 pending tasks, or those that
// CLAIMDECK_BENCH_SIZES lists (comma-separated).
func growthSizes(tb testing.TB) []int {
	env := os.Getenv("CLAIMDECK_BENCH_SIZES")
	if env == "" {
		return []int{1_000, 100_000, 1_000_000}
	}
	var out []int
	for _, f := range strings.Split(env, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 100 {
			tb.Fatalf("CLAIMDECK_BENCH_SIZES: %q is not a size of at least 100", f)
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// queues holds one filled queue per dialect and size for the whole test
// process: a million rows take a while to insert, and every growth
// benchmark reads the same ones. TestMain closes them (closeQueues) and
// removes the SQLite files.
var queues struct {
	sync.Mutex
	dir  string
	open map[string]*Store
}

// queueOf is the queue of n pending tasks (fill's: one INSERT, so one
// transaction) on dialect, made on first use. SQLite's has no statistics,
// as a freshly migrated queue; PostgreSQL's is analyzed, as autovacuum
// would.
func queueOf(tb testing.TB, dialect string, n int) *Store {
	tb.Helper()
	queues.Lock()
	defer queues.Unlock()
	key := fmt.Sprintf("%s/%d", dialect, n)
	if s := queues.open[key]; s != nil {
		return s
	}
	ctx := context.Background()
	cfg := Config{Name: "governance", Driver: dialect, Create: true}
	if dialect == sqlite.name {
		if queues.dir == "" {
			dir, err := os.MkdirTemp("", "claimdeck-growth-")
			if err != nil {
				tb.Fatal(err)
			}
			queues.dir = dir
		}
		cfg.Name, cfg.Path = "local", filepath.Join(queues.dir, fmt.Sprintf("queue-%d.db", n))
	} else {
		cfg.DSN, cfg.Table = pgDSN(tb), freshTable()
	}
	s, err := Open(ctx, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	start := time.Now()
	fill(tb, s, n)
	if dialect == postgres.name {
		analyze(tb, s)
	}
	tb.Logf("%s: %d tasks inserted in %v", key, n, time.Since(start).Round(time.Millisecond))
	if queues.open == nil {
		queues.open = map[string]*Store{}
	}
	queues.open[key] = s
	return s
}

func closeQueues() {
	queues.Lock()
	defer queues.Unlock()
	for _, s := range queues.open {
		if s.d.name == postgres.name {
			_, _ = s.db.exec(context.Background(), "DROP TABLE "+s.table)
		}
		s.Close()
	}
	if queues.dir != "" {
		os.RemoveAll(queues.dir)
	}
}

// agentCall is one agent call for BenchmarkAgentCalls: prepare readies it
// on a queue of n tasks and returns a step that makes the call once and
// returns how long the call alone took (what a step undoes to keep the
// queue as it was is not counted).
type agentCall struct {
	name    string
	prepare func(tb testing.TB, s *Store, n int) func() time.Duration
}

// requeue puts a claimed task back, as a release does, unmeasured: the
// queue keeps its size whatever b.N is.
func requeue(tb testing.TB, s *Store, id string) {
	st, _ := s.stmts()
	if _, err := s.db.exec(context.Background(), st.release, id, s.cfg.Pool); err != nil {
		tb.Fatal(err)
	}
}

var agentCalls = []agentCall{
	{"next", func(tb testing.TB, s *Store, n int) func() time.Duration {
		ctx := context.Background()
		return func() time.Duration {
			return sourcetest.Timed(tb, "next", func() error {
				t, err := s.Next(ctx, "bench-agent")
				if err == nil && t == nil {
					err = fmt.Errorf("no task")
				}
				return err
			})
		}
	}},
	{"claim", func(tb testing.TB, s *Store, n int) func() time.Duration {
		ctx := context.Background()
		return func() time.Duration {
			var t *model.Task
			d := sourcetest.Timed(tb, "claim", func() (err error) {
				t, err = s.ClaimNext(ctx, sources.ClaimRequest{Agent: "bench-agent"})
				if err == nil && t == nil {
					err = fmt.Errorf("no task")
				}
				return err
			})
			requeue(tb, s, t.ID)
			return d
		}
	}},
	{"claim-task", func(tb testing.TB, s *Store, n int) func() time.Duration {
		ctx := context.Background()
		id := fmt.Sprintf("bench-%d", n/2)
		return func() time.Duration {
			d := sourcetest.Timed(tb, "claim --task", func() error {
				_, err := s.Claim(ctx, id, sources.ClaimRequest{Agent: "bench-agent"})
				return err
			})
			requeue(tb, s, id)
			return d
		}
	}},
	{"heartbeat", func(tb testing.TB, s *Store, n int) func() time.Duration {
		ctx := context.Background()
		id := fmt.Sprintf("bench-%d", n/2+1)
		t, err := s.Claim(ctx, id, sources.ClaimRequest{Agent: "bench-agent"})
		if model.CodeOf(err) == model.CodeConflict { // claimed by this benchmark's earlier run
			t, err = s.Get(ctx, id)
		}
		if err != nil {
			tb.Fatal(err)
		}
		token := t.Claim().Token
		return func() time.Duration {
			return sourcetest.Timed(tb, "heartbeat", func() error {
				_, err := s.Heartbeat(ctx, id, token, 0)
				return err
			})
		}
	}},
	{"complete", func(tb testing.TB, s *Store, n int) func() time.Duration {
		ctx := context.Background()
		id := fmt.Sprintf("bench-%d", n/2+2)
		return func() time.Duration {
			t, err := s.Claim(ctx, id, sources.ClaimRequest{Agent: "bench-agent"})
			if err != nil {
				tb.Fatal(err)
			}
			d := sourcetest.Timed(tb, "complete", func() error {
				_, err := s.Finish(ctx, id, t.Claim().Token, sources.Outcome{State: model.StateDone})
				return err
			})
			requeue(tb, s, id)
			return d
		}
	}},
	{"get", func(tb testing.TB, s *Store, n int) func() time.Duration {
		ctx := context.Background()
		id := fmt.Sprintf("bench-%d", n/2+3)
		return func() time.Duration {
			return sourcetest.Timed(tb, "get", func() error {
				_, err := s.Get(ctx, id)
				return err
			})
		}
	}},
	// What list --status READY --limit 20 reads through sources.List.
	{"list-ready-20", func(tb testing.TB, s *Store, n int) func() time.Duration {
		ctx := context.Background()
		return func() time.Duration {
			return sourcetest.Timed(tb, "list", func() error {
				tasks, _, err := sources.List(ctx, s, model.StateQueued, 20)
				if err == nil && len(tasks) != 20 {
					err = fmt.Errorf("%d tasks, want 20", len(tasks))
				}
				return err
			})
		}
	}},
}

// BenchmarkAgentCalls makes each agent call in this process on queues of
// every growthSizes size, SQLite and PostgreSQL, the sizes alternated in
// each round (each round starting with another), and reports the median
// of each size (µs) and the growth from the smallest to the largest.
// `-benchtime 200x` makes 200 calls at each size.
func BenchmarkAgentCalls(b *testing.B) {
	for _, dialect := range []string{sqlite.name, postgres.name} {
		if dialect == postgres.name && os.Getenv("CLAIMDECK_TEST_PG_DSN") == "" {
			continue
		}
		sizes := growthSizes(b)
		for _, call := range agentCalls {
			b.Run(dialect+"/"+call.name, func(b *testing.B) {
				steps := make([]func() time.Duration, len(sizes))
				for k, n := range sizes {
					steps[k] = call.prepare(b, queueOf(b, dialect, n), n)
				}
				walls := make([][]time.Duration, len(sizes))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					for k := range sizes {
						j := (i + k) % len(sizes)
						walls[j] = append(walls[j], steps[j]())
					}
				}
				b.StopTimer()
				sourcetest.ReportGrowth(b, sizes, walls, "", "µs", time.Microsecond)
			})
		}
	}
}

// BenchmarkAgentCallGrowth runs `claimdeck next` and `claimdeck claim`
// (claim-next) as processes, the way agents call them, on SQLite queues
// of every growthSizes size, alternated in each round (each round starting
// with another), beside two floors at each size: testdata/nextfloor (the
// driver alone, running next's SELECT) and, once a round, claimdeck
// --version. It reports the median wall time of each (ms) and each one's
// growth from the smallest queue to the largest. The binary is built as
// BenchmarkNextCommand builds it, or CLAIMDECK_NEW_BIN. A claim's task
// stays claimed: a round of claims takes one task from each queue.
func BenchmarkAgentCallGrowth(b *testing.B) {
	dir := b.TempDir()
	bin := os.Getenv("CLAIMDECK_NEW_BIN")
	if bin == "" {
		bin = releaseBuild(b, "github.com/claimdeck/claimdeck/cmd/claimdeck", filepath.Join(dir, "built"))
	}
	bin = copyBinary(b, bin, filepath.Join(dir, "claimdeck"))
	floor := copyBinary(b, releaseBuild(b, "./testdata/nextfloor", filepath.Join(dir, "floor")), filepath.Join(dir, "driver"))
	sizes := growthSizes(b)
	type contender struct {
		name string
		size int // 0: once a round
		cmd  func() *exec.Cmd
		want string
		wall []time.Duration
	}
	var cs []*contender
	for _, n := range sizes {
		s := queueOf(b, sqlite.name, n)
		cfg := filepath.Join(dir, fmt.Sprintf("config-%d.yaml", n))
		yaml := fmt.Sprintf("sources:\n  - name: local\n    kind: sqlite\n    path: %s\naudit_log: %s\n", s.cfg.Path, filepath.Join(dir, fmt.Sprintf("audit-%d.jsonl", n)))
		if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
			b.Fatal(err)
		}
		env := append(os.Environ(), "CLAIMDECK_CONFIG="+cfg, "HOME="+dir, "XDG_DATA_HOME="+dir)
		run := func(bin string, args ...string) func() *exec.Cmd {
			return func() *exec.Cmd {
				c := exec.Command(bin, args...)
				c.Env = env
				return c
			}
		}
		floorArgs := []string{sqliteDSN(s.cfg.Path), s.sql.next, "bench-agent", s.cfg.Pool,
			strconv.FormatInt(s.cfg.SeedTimeout.Milliseconds(), 10), strconv.FormatInt(s.cfg.Grace.Milliseconds(), 10)}
		cs = append(cs,
			&contender{name: "next", size: n, cmd: run(bin, "next", "--agent-name", "bench-agent"), want: "bench-"},
			&contender{name: "claim", size: n, cmd: run(bin, "claim", "--agent-name", "bench-agent"), want: "lock_token"},
			&contender{name: "driver", size: n, cmd: run(floor, floorArgs...), want: "bench-"})
	}
	cs = append(cs, &contender{name: "version", cmd: func() *exec.Cmd { return exec.Command(bin, "--version") }})
	for _, c := range cs { // once each, unmeasured, to check and warm the page cache
		if out, err := c.cmd().CombinedOutput(); err != nil || !bytes.Contains(out, []byte(c.want)) {
			b.Fatalf("%s at %d: %v\n%s", c.name, c.size, err, out)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range cs {
			c := cs[(i+k)%len(cs)]
			cmd := c.cmd()
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%s at %d: %v\n%s", c.name, c.size, err, out)
			}
			c.wall = append(c.wall, time.Since(start))
		}
	}
	b.StopTimer()
	for _, name := range []string{"next", "claim", "driver"} {
		var walls [][]time.Duration
		for _, c := range cs {
			if c.name == name {
				walls = append(walls, c.wall)
			}
		}
		sourcetest.ReportGrowth(b, sizes, walls, name+"-", "ms", time.Millisecond)
	}
	v := cs[len(cs)-1].wall
	slices.Sort(v)
	b.ReportMetric(float64(v[len(v)/2])/float64(time.Millisecond), "version-ms")
}
