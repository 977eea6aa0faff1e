package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/sources/sqlstore"
)

func TestOverrideFromCronWithDevNullIsToldToPassYes(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	id := c.Run(0, "create", "--title", "nightly rebuild").Task.PageID
	c.Run(0, "claim", "--task", id, "--agent-name", "worker-7")
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	var out, errOut bytes.Buffer
	code := cmdtest.Program(context.Background(), []string{"--config", c.Conf, "takeover", "--task", id}, devnull, &out, &errOut)
	var r cmdtest.Result
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if code != 3 || r.Error.Code != "MISCONFIGURED" || !bytes.Contains([]byte(r.Error.Message), []byte("pass --yes")) {
		t.Fatalf("takeover with stdin /dev/null exited %d: %s", code, out.String())
	}
	if got := c.Run(0, "get", "--task", id); got.Task.Agent != "worker-7" {
		t.Fatalf("the refused takeover changed the task: %+v", got.Task)
	}
}

// -o table is honoured or refused, never ignored: the commands that answer
// in JSON only refuse it before anything runs.
func TestTableOutputIsRefusedWhereTheAnswerIsJSONOnly(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	id := c.Run(0, "create", "--title", "left alone").Task.PageID
	for _, args := range [][]string{
		{"migrate"}, {"config", "show"}, {"config", "path"}, {"version"}, {"sweep", "--dry-run"},
		{"release", "--force", "--filter", "left", "--reason", "r", "--dry-run"},
		{"cancel", "--force", "--filter", "left", "--reason", "r", "--yes"},
	} {
		var out, errOut bytes.Buffer
		code := cmdtest.Program(context.Background(), append([]string{"--config", c.Conf, "-o", "table"}, args...), bytes.NewReader(nil), &out, &errOut)
		if code != 3 || !bytes.Contains(errOut.Bytes(), []byte("drop -o table")) || out.Len() != 0 {
			t.Errorf("claimdeck -o table %v exited %d: stdout %q stderr %q", args, code, out.String(), errOut.String())
		}
	}
	if got := c.Run(0, "get", "--task", id); got.Task.Status != "READY" {
		t.Fatalf("a refused command changed the task: %+v", got.Task)
	}
}

// A PostgreSQL that drops every connection for a moment after the first
// (a restart): the agent's call is tried again with backoff, as the README
// promises, and answers once the server is back; a single try would have
// ended in API_ERROR.
func TestConnectFailuresAreTriedAgainWithBackoff(t *testing.T) {
	dsn := cmdtest.PGTestDSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var first atomic.Int64 // when the first connection came, in unix nanoseconds
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			first.CompareAndSwap(0, time.Now().UnixNano())
			// Down for 300 ms from the first connection: the first try and
			// the second, 200 ms later, fail; the third, 400 ms after that, lands.
			if time.Since(time.Unix(0, first.Load())) < 300*time.Millisecond {
				conn.Close()
				continue
			}
			go forward(conn, u.Host)
		}
	}()
	table := fmt.Sprintf("retry_%d", os.Getpid())
	st, err := sqlstore.Open(context.Background(), sqlstore.Config{Name: "pg", Driver: "postgres", DSN: dsn, Table: table, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	proxied := *u
	proxied.Host = ln.Addr().String()
	dir := t.TempDir()
	c := &cmdtest.CLI{T: t, Conf: filepath.Join(dir, "config.yaml"), Dir: dir}
	conf := fmt.Sprintf("actor: alice\naudit_log: %s/audit.jsonl\nsources:\n  - name: pg\n    kind: postgres\n    dsn: %s\n    table: %s\n", dir, proxied.String(), table)
	if err := os.WriteFile(c.Conf, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := c.Run(0, "next", "--agent-name", "alpha"); r.Task != nil {
		t.Fatalf("next on an empty queue: %+v", r.Task)
	}
}

// forward copies bytes both ways between conn and the server at addr.
func forward(conn net.Conn, addr string) {
	defer conn.Close()
	up, err := net.Dial("tcp", addr)
	if err != nil {
		return
	}
	defer up.Close()
	go func() { _, _ = io.Copy(up, conn) }()
	_, _ = io.Copy(conn, up)
}

// A slip of the finger in a flag or a source's kind gets the nearest word.
func TestMistypedFlagAndKindSuggestTheNearest(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	if r := c.Run(3, "heartbeat", "--task", "t1", "--lock-tokn", "x"); !strings.Contains(r.Error.Message, "unknown flag: --lock-tokn (did you mean --lock-token?)") {
		t.Fatalf("mistyped flag: %s", r.Error.Message)
	}
	if r := c.Run(3, "takeover", "--taks", "t1"); !strings.Contains(r.Error.Message, "did you mean --task?") {
		t.Fatalf("mistyped flag: %s", r.Error.Message)
	}
	bad := &cmdtest.CLI{T: t, Conf: filepath.Join(t.TempDir(), "config.yaml")}
	if err := os.WriteFile(bad.Conf, []byte("sources:\n  - name: team\n    kind: postgress\n    dsn: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := bad.Run(3, "list"); !strings.Contains(r.Error.Message, `kind "postgress" is not one of sqlite, postgres, lockdir, notion (did you mean "postgres"?)`) {
		t.Fatalf("mistyped kind: %s", r.Error.Message)
	}
}

// claimdeck history names both sides of every override: whom the task was
// taken from, whom it was released from.
func TestHistoryNamesWhomEachOverrideWasFrom(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	id := c.Run(0, "create", "--title", "looping agent").Task.PageID
	c.Run(0, "claim", "--task", id, "--agent-name", "worker-7")
	c.Run(0, "takeover", "--task", id, "--reason", "looping", "--yes")
	c.Run(0, "release", "--force", "--task", id, "--reason", "back to the pool", "--yes")
	var out, errOut bytes.Buffer
	if code := cmdtest.Program(context.Background(), []string{"--config", c.Conf, "-o", "table", "history", "--task", id}, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("history exited %d: %s", code, errOut.String())
	}
	for _, want := range []string{"takeover", "was claimed by worker-7", "force-release", "was claimed by HUMAN:alice"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("history lacks %q:\n%s", want, out.String())
		}
	}
}
