package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/google/uuid"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/notion/notionemu"
)

// dropinBackends are the backends a test here runs on: the contract's,
// without PostgreSQL's skip-or-fail ceremony when it is not configured.
func dropinBackends(t *testing.T, fn func(t *testing.T, c *cmdtest.CLI)) {
	for _, b := range cmdtest.ContractBackends {
		t.Run(b.Name, func(t *testing.T) {
			c := cmdtest.NewCLI(t, b.Yaml(t))
			c.Kind = b.Name
			fn(t, c)
		})
	}
}

func TestUnknownTaskIsAnsweredAtOnceOnEveryBackend(t *testing.T) {
	dropinBackends(t, func(t *testing.T, c *cmdtest.CLI) {
		nope := uuid.NewString() // an id of the right shape for every backend
		tok := uuid.NewString()
		for _, args := range [][]string{
			{"get", "--task", nope},
			{"heartbeat", "--task", nope, "--lock-token", tok},
			{"complete", "--task", nope, "--lock-token", tok},
			{"update", "--task", nope, "--title", "x"},
			{"comment", "--task", nope, "--body", "x"},
		} {
			r := c.Run(3, args...)
			if r.Error.Code != "MISCONFIGURED" || !strings.Contains(r.Error.Message, "no such task") {
				t.Errorf("%v: %+v", args, r.Error)
			}
		}
		if c.Kind != "lockdir" { // a lock directory claims any id (seed 004)
			if r := c.Run(3, "claim", "--task", nope, "--agent-name", "a"); !strings.Contains(r.Error.Message, "no such task") {
				t.Errorf("claim of an unknown id: %+v", r.Error)
			}
		}
	})
}

func TestUnknownTaskIsNotRetried(t *testing.T) {
	calls := 0
	_, err := cmdutil.Retrying(context.Background(), func() (*model.Task, error) {
		calls++
		return nil, sources.NotFound("get", "nope")
	})
	if calls != 1 || !errors.Is(err, model.ErrNoSuchTask) {
		t.Fatalf("an unknown id was tried %d times (%v); want once", calls, err)
	}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{model.Errorf(model.CodeAPIError, "get", "", "connection refused"), true},
		{model.Errorf(model.CodeAPIError, "get", "x", "%w", model.ErrNoSuchTask), false},
		{sources.NotFound("get", "x"), false},
		{model.Errorf(model.CodeConflict, "claim", "x", "held"), false},
		{sources.Lost("heartbeat", "x"), false},
	} {
		if got := cmdutil.Transient(tc.err); got != tc.want {
			t.Errorf("transient(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}

	// Over Notion, one page read answers it: no backoff loop behind it.
	c, w := cmdtest.NotionCLI(t)
	w.Srv.ResetStats()
	c.Run(3, "get", "--task", uuid.NewString())
	if n := w.Srv.Stats().ByEndpoint[notionemu.EndpointPageRetrieve]; n != 1 {
		t.Fatalf("get of an unknown page made %d page reads, want 1", n)
	}
}

func TestOperatorCommandsWithoutATerminalAskForYes(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	id := c.Run(0, "create", "--title", "x").Task.PageID
	held := c.Run(0, "claim", "--task", id, "--agent-name", "a").Task
	for _, args := range [][]string{
		{"takeover", "--task", id},
		{"release", "--force", "--task", id, "--reason", "r"},
		{"handoff", "--task", id, "--to", "ORACLE", "--reason", "r"},
		{"cancel", "--force", "--task", id, "--reason", "r"},
	} {
		r := c.Run(3, args...)
		if r.Error.Code != "MISCONFIGURED" || !strings.Contains(r.Error.Message, "--yes") {
			t.Errorf("%v without a terminal: %+v", args, r.Error)
		}
	}
	if now := c.Run(0, "get", "--task", id).Task; now.LockToken != model.ShownToken(held.LockToken) || now.Version != held.Version {
		t.Fatalf("a refused override changed the task: %+v", now)
	}
}

func TestLockTokenFromTheEnvironmentOrAFile(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	id := c.Run(0, "create", "--title", "x").Task.PageID
	tok := c.Run(0, "claim", "--task", id, "--agent-name", "a").Task.LockToken

	t.Setenv(cmdutil.LockTokenEnv, tok)
	if r := c.Run(0, "heartbeat", "--task", id); r.Task.LockToken != tok {
		t.Fatalf("heartbeat with $%s: %+v", cmdutil.LockTokenEnv, r.Task)
	}
	t.Setenv(cmdutil.LockTokenEnv, "")
	file := filepath.Join(c.Dir, "token")
	if err := os.WriteFile(file, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := c.Run(0, "heartbeat", "--task", id, "--lock-token-file", file); r.Task.LockToken != tok {
		t.Fatalf("heartbeat with --lock-token-file: %+v", r.Task)
	}
	if err := os.WriteFile(file, []byte("hunter2-not-a-uuid"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := c.Run(3, "heartbeat", "--task", id, "--lock-token-file", file)
	if !strings.Contains(r.Error.Message, file) || strings.Contains(r.Error.Message, "hunter2") {
		t.Fatalf("a bad token file must be named, its content not shown: %+v", r.Error)
	}
	if r := c.Run(3, "heartbeat", "--task", id); !strings.Contains(r.Error.Message, cmdutil.LockTokenEnv) {
		t.Fatalf("no token anywhere: %+v", r.Error)
	}
	// A FIFO would hang the read, /dev/zero never end it: both are refused
	// at once, named.
	fifo := filepath.Join(c.Dir, "token.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for path, says := range map[string]string{fifo: "named pipe", "/dev/zero": "a device"} {
		r := c.Run(3, "heartbeat", "--task", id, "--lock-token-file", path)
		if !strings.Contains(r.Error.Message, path) || !strings.Contains(r.Error.Message, says) {
			t.Errorf("--lock-token-file %s: %+v, want it named as %s", path, r.Error, says)
		}
	}
}

func TestRunIDIsRecordedInTheTrail(t *testing.T) {
	dropinBackends(t, func(t *testing.T, c *cmdtest.CLI) {
		id := c.Run(0, "create", "--title", "x").Task.PageID
		tok := c.Run(0, "claim", "--task", id, "--agent-name", "SANDMAN", "--run-id", "run-001").Task.LockToken
		c.Run(0, "heartbeat", "--task", id, "--run-id", "run-002", "--lock-token", tok)
		c.Run(0, "complete", "--task", id, "--run-id", "run-001", "--lock-token", tok)
		trail := trailOf(t, c, id)
		for _, want := range []string{"heartbeat by run run-002", "complete by run run-001"} {
			if !strings.Contains(trail, want) {
				t.Errorf("the trail lacks %q:\n%s", want, trail)
			}
		}
	})
}

// trailOf is a task's trail as its backend keeps it: the history `get`
// prints, and for Notion the page's comments.
func trailOf(t *testing.T, c *cmdtest.CLI, id string) string {
	t.Helper()
	b, err := json.Marshal(c.Run(0, "get", "--task", id).Task.History)
	if err != nil {
		t.Fatal(err)
	}
	trail := string(b)
	if c.Kind == "notion" {
		conf, err := os.ReadFile(c.Conf)
		if err != nil {
			t.Fatal(err)
		}
		base := regexp.MustCompile(`base_url: (\S+)`).FindSubmatch(conf)
		token := regexp.MustCompile(`token: (\S+)`).FindSubmatch(conf)
		req, _ := http.NewRequest(http.MethodGet, string(base[1])+"/v1/comments?block_id="+id, nil)
		req.Header.Set("Authorization", "Bearer "+string(token[1]))
		req.Header.Set("Notion-Version", "2022-06-28")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(resp.Body)
		trail += buf.String()
	}
	return trail
}

func TestTableOutputCannotHurtTheTerminal(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	c.Run(0, "create", "--title", "\x1b]0;pwned\x07\x1b[2Jclear me\u202e")
	out, errOut, code := cmdtest.Raw(c, "", "--output", "table", "list")
	if code != 0 || !strings.Contains(out, "clear me") {
		t.Fatalf("list --output table: %d %q %q", code, out, errOut)
	}
	if strings.ContainsAny(out, "\x1b\x07\u202e") {
		t.Fatalf("a task title reached the terminal raw: %q", out)
	}
	out, errOut, code = cmdtest.Raw(c, "", "--output", "table", "get", "--task", "\x1b[2Jnope")
	if code != 3 || out != "" || !strings.HasPrefix(errOut, "error: MISCONFIGURED") || strings.Contains(errOut, "\x1b") {
		t.Fatalf("an error in table mode: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// JSON stays byte-exact: the title comes back as it was written.
	if got := c.Run(0, "list").Tasks[0].Title; got != "\x1b]0;pwned\x07\x1b[2Jclear me\u202e" {
		t.Fatalf("JSON output changed the title: %q", got)
	}
}

func TestTyposGetSuggestionsAndUnknownShellsAreRefused(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	if r := c.Run(3, "lsit"); !strings.Contains(r.Error.Message, "Did you mean this?") || !strings.Contains(r.Error.Message, "list") {
		t.Fatalf("a typo of list: %+v", r.Error)
	}
	if r := c.Run(3, "hartbeat"); !strings.Contains(r.Error.Message, "heartbeat") {
		t.Fatalf("a typo of heartbeat: %+v", r.Error)
	}
	if r := c.Run(3, "completion", "tcsh"); !strings.Contains(r.Error.Message, "tcsh") {
		t.Fatalf("completion of an unknown shell: %+v", r.Error)
	}
}
