//go:build faults

package faults

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// claimdeck is the binary under test: $FAULTS_CLAIMDECK, or built once by
// TestMain.
var claimdeck string

func TestMain(m *testing.M) {
	if claimdeck = os.Getenv("FAULTS_CLAIMDECK"); claimdeck != "" {
		os.Exit(m.Run()) // another build under the same faults
	}
	dir, err := os.MkdirTemp("", "claimdeck-faults")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	claimdeck = filepath.Join(dir, "claimdeck")
	if out, err := exec.Command("go", "build", "-o", claimdeck, "github.com/claimdeck/claimdeck/cmd/claimdeck").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building claimdeck: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// size is how hard a run pushes: FAULTS_LONG=1 for the published figures.
// The queue runs dry about halfway through the load, so that agents keep
// asking for work while dead holders' leases and graces end: a rescue
// that comes too early has somebody there to take it.
type size struct {
	tasks, agents int
	load          time.Duration
	killEvery     time.Duration
	restartEvery  time.Duration
}

func sizeOf() size {
	if os.Getenv("FAULTS_LONG") != "" {
		return size{tasks: 600, agents: 8, load: 3 * time.Minute, killEvery: 40 * time.Millisecond, restartEvery: 8 * time.Second}
	}
	return size{tasks: 60, agents: 4, load: 10 * time.Second, killEvery: 60 * time.Millisecond, restartEvery: 4 * time.Second}
}

// lease is short so that dead holders' leases end within the run, and the
// grace (the configuration's `grace`) after which their tasks are handed
// out again short so that the run can wait for it.
const (
	lease = 3 * time.Second
	grace = 2 * time.Second
)

// graceLine is the configuration's grace line, or nothing for a build that
// knows no grace (its strict configuration would refuse the key): there a
// dead holder's task is never handed out again, and the suite counts it
// stuck.
var graceLine = sync.OnceValue(func() string {
	dir, err := os.MkdirTemp("", "claimdeck-faults-grace")
	if err != nil {
		return ""
	}
	defer os.RemoveAll(dir)
	conf := filepath.Join(dir, "config.yaml")
	line := "grace: " + grace.String() + "\n"
	if os.WriteFile(conf, []byte(line+"sources:\n  - name: q\n    kind: sqlite\n    path: "+filepath.Join(dir, "q.db")+"\n"), 0o600) != nil {
		return ""
	}
	if exec.Command(claimdeck, "--config", conf, "config", "show").Run() != nil {
		return ""
	}
	return line
})

func writeConfig(t *testing.T, source string) string {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "config.yaml")
	body := "actor: faults\n" + graceLine() + "audit_log: " + filepath.Join(dir, "audit.jsonl") + "\nsources:\n" + strings.ReplaceAll(source, "DIR", dir)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return conf
}

func seed(t *testing.T, w *world, n int) {
	t.Helper()
	ctx := context.Background()
	w.must(ctx, "--create", "list") // the team makes its queue's files once
	for i := range n {
		w.must(ctx, "create", "--title", fmt.Sprintf("fault-task-%04d", i))
	}
}

// killRun: agents work the queue while random claimdeck processes get
// SIGKILL, mid-claim and mid-complete alike.
func killRun(t *testing.T, name, source string) {
	s := sizeOf()
	w := newWorld(t, writeConfig(t, source), lease)
	seed(t, w, s.tasks)
	w.load(s.agents, s.load, func(ctx context.Context) { w.killer(ctx, s.killEvery) }, w.operate)
	w.drain(s.tasks)
	w.judge(name, "kill -9 of agents", w.count(w.list(context.Background())), true)
}

func TestKillAgentsSQLite(t *testing.T) {
	t.Parallel()
	killRun(t, "sqlite", "  - name: q\n    kind: sqlite\n    path: DIR/queue.db\n")
}

func TestKillAgentsLockdir(t *testing.T) {
	t.Parallel()
	killRun(t, "lockdir", "  - name: q\n    kind: lockdir\n    path: DIR/.locks\n")
}

// TestPostgresCrashRestart: agents work a PostgreSQL queue while the
// server is stopped with -m immediate (a crash: no checkpoint, no goodbye
// to clients, crash recovery at start) and started again, over and over. FAULTS_PG_DATA names the
// cluster's data directory (.ci/faults starts one) and CLAIMDECK_TEST_PG_DSN
// reaches it.
func TestPostgresCrashRestart(t *testing.T) {
	t.Parallel()
	data, dsn := os.Getenv("FAULTS_PG_DATA"), os.Getenv("CLAIMDECK_TEST_PG_DSN")
	if data == "" || dsn == "" {
		t.Skip("set FAULTS_PG_DATA and CLAIMDECK_TEST_PG_DSN (.ci/faults does)")
	}
	s := sizeOf()
	w, _ := postgresWorld(t, dsn)
	seed(t, w, s.tasks)
	restarts := 0
	w.load(s.agents, s.load, w.operate, func(ctx context.Context) {
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(s.restartEvery):
			}
			// restart keeps the options the cluster was started with.
			pgCtl(t, data, "restart", "-m", "immediate", "-w")
			restarts++
		}
	})
	w.drain(s.tasks)
	w.judge("postgres", fmt.Sprintf("%d crash-restarts", restarts), w.count(w.list(context.Background())), true)
}

// postgresWorld makes a fresh table of the team's shape, as seed 003 has
// it, migrates it to claimdeck's columns, and returns a world over it.
func postgresWorld(t *testing.T, dsn string) (*world, string) {
	table := fmt.Sprintf("faults_%d", time.Now().UnixNano())
	w := newWorld(t, writeConfig(t, "  - name: gov\n    kind: postgres\n    dsn_env: FAULTS_DSN\n    table: "+table+"\n"), lease, "FAULTS_DSN="+dsn)
	psql(t, dsn, "CREATE TABLE "+table+` (id TEXT PRIMARY KEY, title TEXT NOT NULL, description TEXT, priority TEXT,
		task_type TEXT, status TEXT NOT NULL DEFAULT 'pending', assigned_worker TEXT,
		created_at TIMESTAMPTZ NOT NULL DEFAULT NOW(), started_at TIMESTAMPTZ, completed_at TIMESTAMPTZ)`)
	w.must(context.Background(), "migrate")
	return w, table
}

func psql(t *testing.T, dsn, sql string) {
	t.Helper()
	if out, err := exec.Command("/usr/lib/postgresql/15/bin/psql", dsn, "-v", "ON_ERROR_STOP=1", "-c", sql).CombinedOutput(); err != nil {
		t.Fatalf("psql %.60s…: %v\n%s", sql, err, out)
	}
}

func pgCtl(t *testing.T, data string, args ...string) {
	bin := "/usr/lib/postgresql/15/bin/pg_ctl"
	full := append([]string{"-u", "postgres", "--", bin, "-D", data, "-l", filepath.Join(filepath.Dir(data), "log")}, args...)
	if out, err := exec.Command("runuser", full...).CombinedOutput(); err != nil {
		t.Errorf("pg_ctl %v: %v\n%s", args, err, out)
	}
}

// TestNotionStorm: agents work a Notion database on the emulator, which
// answers 429 past its rate and 504 to a share of requests — a write among
// them applied before its 504, as a gateway timeout after Notion committed. Notion
// has no conditional writes, so its figures are published, not asserted
// to zero: double claims there are the race the docs describe.
func TestNotionStorm(t *testing.T) {
	t.Parallel()
	s := sizeOf()
	s.tasks = min(s.tasks, s.tasks/10+4)
	w := notionWorld(t, 0, 200*time.Millisecond, "--rate", "25", "--fault-rate", "0.1", "--fault-status", "504", "--fault-apply")
	seed(t, w, s.tasks)
	w.load(s.agents, s.load, func(ctx context.Context) { w.killer(ctx, 4*s.killEvery) }, w.operate)
	w.drain(s.tasks)
	w.judge("notion", "429 past 25 req/s, 10% 504 (writes applied first), kill -9", w.count(w.list(context.Background())), false)
}

// notionWorld starts the Notion emulator with args, puts the check of
// Notion's published description in front of it (holding each page write
// for hold, as a slow Notion would), and returns a world over its ntask
// database whose claims settle for settle before they verify.
func notionWorld(t *testing.T, hold, settle time.Duration, args ...string) *world {
	emu := exec.Command(claimdeck, append([]string{"notion-emulator", "--listen", "127.0.0.1:0"}, args...)...)
	stderr, err := emu.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := emu.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emu.Process.Kill(); _ = emu.Wait() })
	var addr, token, db string
	sc := bufio.NewScanner(stderr)
	for sc.Scan() && (addr == "" || token == "" || db == "") {
		line := sc.Text()
		if m := regexp.MustCompile(`on (http://\S+)`).FindStringSubmatch(line); m != nil {
			addr = m[1]
		}
		if v, ok := strings.CutPrefix(line, "token: "); ok {
			token = v
		}
		if f := strings.Fields(line); len(f) == 3 && f[0] == "database" && f[1] == "ntask" {
			db = f[2]
		}
	}
	go func() {
		for sc.Scan() {
		}
	}()
	if db == "" {
		t.Fatal("the emulator did not print its address, token and database")
	}
	addr = publishedOnly(t, addr, token, db, hold)
	conf := writeConfig(t, fmt.Sprintf("  - name: emu\n    kind: notion\n    base_url: %s\n    token_env: FAULTS_NOTION_TOKEN\n    database_id: %s\n    schema: ntask\n    settle: %s\n", addr, db, settle))
	w := newWorld(t, conf, lease, "FAULTS_NOTION_TOKEN="+token)
	w.noRescue = true   // seed 002: an expired claim stays IN_PROGRESS until a sweep,
	w.rescueByID = true // and claim --task takes it once its grace has ended
	return w
}
