package sqlstore

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkNextCommand runs an agent's `claimdeck next` as a process, the
// way agents call it, beside the bare sqlite3 CLI running the same SELECT
// on the same file, one after the other in each round so that both meet
// the same load, each round starting with another. It builds claimdeck
// from this tree as the release is built (no cgo, -trimpath, -s -w) unless
// CLAIMDECK_NEW_BIN names a binary; CLAIMDECK_OLD_BIN names an older one,
// built the same way, to alternate with it. Three floors run beside them:
// claimdeck's --version, testdata/nextfloor (the driver alone in a Go
// process) and testdata/emptygo (a Go process that does nothing). It
// reports medians of the wall time and of the CPU time (user + system) of
// each process.
func BenchmarkNextCommand(b *testing.B) {
	sqlite3, err := exec.LookPath("sqlite3")
	if err != nil {
		b.Skip("no sqlite3 CLI on PATH")
	}
	dir := b.TempDir()
	build := func(pkg, to string) string { return releaseBuild(b, pkg, to) }
	bin := os.Getenv("CLAIMDECK_NEW_BIN")
	if bin == "" {
		bin = build("github.com/claimdeck/claimdeck/cmd/claimdeck", filepath.Join(dir, "built"))
	}
	bin = copyBinary(b, bin, filepath.Join(dir, "new"))
	floor := copyBinary(b, build("./testdata/nextfloor", filepath.Join(dir, "floor")), filepath.Join(dir, "driver"))
	empty := copyBinary(b, build("./testdata/emptygo", filepath.Join(dir, "emptygo")), filepath.Join(dir, "go"))
	path := filepath.Join(dir, "queue.db")
	s := openSQLite(b, Config{Create: true, Path: path})
	fill(b, s, 1000)
	next := s.sql.next
	floorArgs := []string{sqliteDSN(path), next, "bench-agent", s.cfg.Pool,
		strconv.FormatInt(s.cfg.SeedTimeout.Milliseconds(), 10), strconv.FormatInt(s.cfg.Grace.Milliseconds(), 10)}
	s.Close()
	cfg := filepath.Join(dir, "config.yaml")
	yaml := fmt.Sprintf("sources:\n  - name: local\n    kind: sqlite\n    path: %s\naudit_log: %s\n", path, filepath.Join(dir, "audit.jsonl"))
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		b.Fatal(err)
	}
	env := append(os.Environ(), "CLAIMDECK_CONFIG="+cfg, "HOME="+dir, "XDG_DATA_HOME="+dir)

	// The CLI runs the same statement with the values the store binds
	// written in: the agent, the pool, the seed's timeout and the grace in
	// milliseconds.
	bare := strings.NewReplacer("$1", "'bench-agent'", "$2", "'claude-chat'", "$3", "600000", "$4", "300000").Replace(next)
	type contender struct {
		name string
		cmd  func() *exec.Cmd
		wall []time.Duration
		cpu  []time.Duration
	}
	claimdeck := func(bin string, args ...string) func() *exec.Cmd {
		return func() *exec.Cmd {
			c := exec.Command(bin, args...)
			c.Env = env
			return c
		}
	}
	cs := []*contender{
		{name: "sqlite3", cmd: func() *exec.Cmd { c := exec.Command(sqlite3, "-bail", path, bare); c.Env = env; return c }},
		{name: "new", cmd: claimdeck(bin, "next", "--agent-name", "bench-agent")},
		// The floor of any claimdeck command: the process starts (every
		// linked package's init) and builds its command tree, then prints
		// its version, with no configuration read and no SQLite opened.
		{name: "version", cmd: claimdeck(bin, "--version")},
		// The floor of the driver: a Go process linking only database/sql
		// and the SQLite driver, opening the file with the store's DSN and
		// running the store's SELECT with its arguments.
		{name: "driver", cmd: func() *exec.Cmd { c := exec.Command(floor, floorArgs...); c.Env = env; return c }},
		// The floor of any Go process: the runtime starts and exits.
		{name: "go", cmd: func() *exec.Cmd { c := exec.Command(empty); c.Env = env; return c }},
	}
	if old := os.Getenv("CLAIMDECK_OLD_BIN"); old != "" {
		old = copyBinary(b, old, filepath.Join(dir, "old"))
		cs = append(cs, &contender{name: "old", cmd: claimdeck(old, "next", "--agent-name", "bench-agent")})
	}
	for _, c := range cs { // once each, unmeasured, to check and warm the page cache
		if out, err := c.cmd().CombinedOutput(); err != nil || (c.name != "version" && !bytes.Contains(out, []byte("bench-"))) {
			b.Fatalf("%s: %v\n%s", c.name, err, out)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range cs { // each round starts with the next contender
			c := cs[(i+k)%len(cs)]
			cmd := c.cmd()
			var out bytes.Buffer
			cmd.Stdout = &out
			start := time.Now()
			if err := cmd.Run(); err != nil {
				b.Fatalf("%s: %v", c.name, err)
			}
			c.wall = append(c.wall, time.Since(start))
			c.cpu = append(c.cpu, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
		}
	}
	b.StopTimer()
	median := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2]) / float64(time.Millisecond)
	}
	base := cs[0]
	for _, c := range cs {
		b.ReportMetric(median(c.wall), c.name+"-ms")
		b.ReportMetric(median(c.cpu), c.name+"-cpu-ms")
		if c != base {
			b.ReportMetric(median(c.wall)/median(base.wall), c.name+"/sqlite3")
			b.ReportMetric(median(c.cpu)/median(base.cpu), c.name+"/sqlite3-cpu")
		}
	}
}

// releaseBuild builds pkg into to as .ci/release-check builds the release:
// no cgo, -trimpath, -s -w.
func releaseBuild(b *testing.B, pkg, to string) string {
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", to, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return to
}

// copyBinary writes a copy of the binary at from, with write calls: a
// binary just written by the Go linker (through a memory map) starts 2–3 ms
// slower here than a copy of it, which would favour whichever binary was
// built earlier.
func copyBinary(b *testing.B, from, to string) string {
	data, err := os.ReadFile(from)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o755); err != nil {
		b.Fatal(err)
	}
	return to
}
