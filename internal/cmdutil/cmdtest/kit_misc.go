package cmdtest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/sources/notion"
	"github.com/claimdeck/claimdeck/sources/notion/notionemu"
	"github.com/claimdeck/claimdeck/sources/sqlstore"
)

// contractBackends are every backend the ntask contract must hold on.
// PostgreSQL skips outside CI when no server is configured, and fails in CI.
var ContractBackends = []backend{
	{"sqlite", func(*testing.T) string { return SQLiteSource }},
	{"lockdir", func(*testing.T) string { return "  - name: local\n    kind: lockdir\n    path: DIR/.locks\n" }},
	{"notion", func(t *testing.T) string { yaml, _ := NotionSource(t); return yaml }},
	{"postgres", func(t *testing.T) string {
		dsn := os.Getenv("CLAIMDECK_TEST_PG_DSN")
		if dsn == "" {
			if os.Getenv("CI") == "true" {
				t.Fatal("CI=true but CLAIMDECK_TEST_PG_DSN is not set: .ci/run must start PostgreSQL")
			}
			t.Skip("PostgreSQL contract skipped: set CLAIMDECK_TEST_PG_DSN (bash .ci/run starts a throwaway cluster and sets it)")
		}
		table := fmt.Sprintf("contract_%d_%d", os.Getpid(), pgTables.Add(1))
		st, err := sqlstore.Open(context.Background(), sqlstore.Config{Name: "local", Driver: "postgres", DSN: dsn, Table: table, Create: true})
		if err != nil {
			t.Fatal(err)
		}
		st.Close()
		return fmt.Sprintf("  - name: local\n    kind: postgres\n    dsn_env: CLAIMDECK_TEST_PG_DSN\n    table: %s\n", table)
	}},
}

// reviewBackends are the contract's backends and a Notion database set up
// by today's notion-task skill.
var ReviewBackends = append(ContractBackends[:len(ContractBackends):len(ContractBackends)],
	backend{"notion-today", func(t *testing.T) string { yaml, _ := TodaySource(t); return yaml }})

// The reviewer's loop from the CLI: an agent's review, rework with a
// reason, the agent's second review, approve; each refused with a clear
// message where it does not apply, and each in the audit log.
func TestTheReviewersLoopFromTheCLI(t *testing.T) {
	for _, b := range ReviewBackends {
		t.Run(b.Name, func(t *testing.T) {
			c := NewCLI(t, b.Yaml(t))
			id := c.Run(0, "create", "--title", "Design VPC module").Task.PageID
			tok := c.Run(0, "claim", "--task", id, "--agent-name", "SANDMAN").Task.LockToken
			// Refused before anyone is asked to confirm.
			if r := c.Run(3, "approve", "--task", id); r.Error.Code != "MISCONFIGURED" || !strings.Contains(r.Error.Message, "must be review to approve (it is claimed)") {
				t.Fatalf("approve of a claimed task: %+v", r.Error)
			}
			c.Run(0, "review", "--task", id, "--lock-token", tok, "--artifacts", "pr/1")
			if r := c.Run(3, "rework", "--task", id, "--yes"); !strings.Contains(r.Error.Message, "a reason is required") {
				t.Fatalf("rework without a reason: %+v", r.Error)
			}
			if r := c.Run(3, "rework", "--task", id, "--reason", "keep comments"); !strings.Contains(r.Error.Message, "--yes") {
				t.Fatalf("rework with no terminal to confirm on: %+v", r.Error)
			}
			back := c.Run(0, "rework", "--task", id, "--reason", "keep comments", "--yes")
			if back.Task.State != "queued" || back.Task.LockToken != "" {
				t.Fatalf("after rework: %+v", back.Task)
			}
			if next := c.Run(0, "next", "--agent-name", "ORACLE"); next.Task == nil || next.Task.PageID != id {
				t.Fatalf("next after rework: %+v", next.Task)
			}
			tok = c.Run(0, "claim", "--task", id, "--agent-name", "ORACLE").Task.LockToken
			c.Run(0, "review", "--task", id, "--lock-token", tok)
			preview := c.Run(0, "approve", "--filter", "state:review", "--dry-run")
			if !preview.OK {
				t.Fatalf("approve --dry-run: %+v", preview)
			}
			if got := c.Run(0, "get", "--task", id); got.Task.State != "review" {
				t.Fatalf("--dry-run changed the task: %+v", got.Task)
			}
			done := c.Run(0, "approve", "--task", id, "--yes")
			if done.Task.State != "done" {
				t.Fatalf("after approve: %+v", done.Task)
			}
			log, err := os.ReadFile(filepath.Join(c.Dir, "audit.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{`"action":"rework","reason":"keep comments"`, `"action":"approve"`} {
				if !strings.Contains(string(log), want) {
					t.Errorf("the audit log lacks %s:\n%s", want, log)
				}
			}
		})
	}
}

func RelayTestToken(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// relayProc is a `claimdeck relay` running as a process.
type RelayProc struct {
	Cmd    *exec.Cmd
	Addr   string
	Stdout *bufio.Reader
	Stderr bytes.Buffer
}

// stop ends the relay as a supervisor does (SIGTERM) and returns its exit
// status and all it printed.
func (p *RelayProc) Stop(t *testing.T) (int, string) {
	t.Helper()
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	rest, _ := p.Stdout.ReadString(0)
	err := p.Cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, rest + p.Stderr.String()
}

// relayedConfig writes a second configuration naming the relay for the
// source local of c's SQLite file, acting as actor.
func RelayedConfig(t *testing.T, c *CLI, relayAddr, actor string) *CLI {
	t.Helper()
	conf := filepath.Join(c.Dir, "relayed.yaml")
	body := fmt.Sprintf("actor: %s\naudit_log: %s\nsources:\n%s    relay: %s\n", actor, filepath.Join(c.Dir, "relayed-audit.jsonl"),
		strings.ReplaceAll(SQLiteSource, "DIR", c.Dir), relayAddr)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return &CLI{T: t, Conf: conf, Dir: c.Dir}
}

// runOut runs claimdeck and returns its exit status and stdout.
func RunOut(conf string, args ...string) (int, string) {
	var out, errOut bytes.Buffer
	code := Program(context.Background(), append([]string{"--config", conf}, args...), strings.NewReader(""), &out, &errOut)
	return code, out.String() + errOut.String()
}

// cliFlag is a command-line flag named in a message.
var CliFlag = regexp.MustCompile(`(^|[^\w-])--[a-z]`)

// backend is one kind of source the contract runs against.
type backend struct {
	Name string
	// yaml returns the `sources:` entry of a fresh, empty queue.
	Yaml func(t *testing.T) string
}

var pgTables atomic.Int64

// notionSource serves an emulator for the length of the test and returns
// the `sources:` entry of a notion source on its empty ntask database.
func NotionSource(t *testing.T) (string, *cmdutil.EmulatorWorkspace) {
	t.Helper()
	w, err := cmdutil.NewEmulatorWorkspace(notionemu.RateLimit{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addr, done, err := w.Serve(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); <-done })
	yaml := fmt.Sprintf("  - name: team-notion\n    kind: notion\n    token: %s\n    database_id: %s\n    schema: ntask\n    base_url: http://%s\n    rate: 200\n    settle: 10ms\n",
		w.Token, w.Dbs[notion.PresetNtask], addr)
	return yaml, w
}

// todaySource is the `sources:` entry of a notion source on the
// emulator's database set up as today's notion-task skill does.
func TodaySource(t *testing.T) (string, *cmdutil.EmulatorWorkspace) {
	t.Helper()
	yaml, w := NotionSource(t)
	yaml = strings.Replace(yaml, "name: team-notion", "name: skill-notion", 1)
	return strings.Replace(yaml, w.Dbs[notion.PresetNtask], w.Dbs[cmdutil.TodayDB], 1), w
}
