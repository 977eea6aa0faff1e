package cmdtest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
)

type Result struct {
	OK    bool              `json:"ok"`
	Task  *cmdutil.TaskJSON `json:"task"`
	Tasks []cmdutil.TaskJSON
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// cli runs claimdeck in-process against one configuration file.
type CLI struct {
	T    *testing.T
	Conf string
	Dir  string
	Kind string // the backend, where a test depends on it
}

func NewCLI(t *testing.T, sourcesYAML string) *CLI {
	dir := t.TempDir()
	// What claimdeck keeps between runs (the sweep record, the node health
	// record) stays in the test's directory, never the user's.
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	conf := filepath.Join(dir, "config.yaml")
	body := "actor: alice\naudit_log: " + filepath.Join(dir, "audit.jsonl") + "\nsources:\n" + sourcesYAML
	if err := os.WriteFile(conf, []byte(strings.ReplaceAll(body, "DIR", dir)), 0o600); err != nil {
		t.Fatal(err)
	}
	// Make the sources' files as a team would once, with --create.
	Program(context.Background(), []string{"--config", conf, "--create", "doctor"}, strings.NewReader(""), io.Discard, io.Discard)
	return &CLI{T: t, Conf: conf, Dir: dir}
}

func (c *CLI) Run(wantExit int, args ...string) Result {
	c.T.Helper()
	var out, errOut bytes.Buffer
	code := Program(context.Background(), append([]string{"--config", c.Conf}, args...), strings.NewReader(""), &out, &errOut)
	var r Result
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		c.T.Fatalf("claimdeck %v: stdout is not one JSON document: %v\n%s\nstderr: %s", args, err, out.String(), errOut.String())
	}
	if code != wantExit {
		c.T.Fatalf("claimdeck %v exited %d, want %d: %s", args, code, wantExit, out.String())
	}
	if r.OK != (wantExit == 0) {
		c.T.Fatalf("claimdeck %v: ok=%v with exit %d", args, r.OK, code)
	}
	return r
}

const SQLiteSource = "  - name: local\n    kind: sqlite\n    path: DIR/queue.db\n"
