package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

func TestBadInputIsMisconfigured(t *testing.T) {
	for _, src := range []string{
		"  - name: q\n    kind: sqlite\n    path: DIR/q.db\n",
		"  - name: q\n    kind: lockdir\n    path: DIR/.locks\n",
	} {
		c := cmdtest.NewCLI(t, src)
		id := c.Run(0, "create", "--title", "design-vpc-module").Task.PageID
		for _, bad := range []struct {
			args []string
			says string
		}{
			{[]string{"claim", "--task", id, "--agent-name", "a", "--lease", "-5s"}, "lease -5s is out of range"},
			{[]string{"claim", "--task", id, "--agent-name", "a", "--lease", "2562047h"}, "is out of range"},
			{[]string{"create", "--title", "x", "--priority", "2147483648"}, "priority 2147483648 is out of range"},
			{[]string{"create", "--title", "caf\xe9"}, "not valid UTF-8"},
		} {
			r := c.Run(3, bad.args...)
			if r.Error.Code != "MISCONFIGURED" || !strings.Contains(r.Error.Message, bad.says) {
				t.Errorf("%v: %+v, want MISCONFIGURED saying %q", bad.args, r.Error, bad.says)
			}
		}
		if tasks := c.Run(0, "list").Tasks; len(tasks) != 1 || tasks[0].State != "queued" {
			t.Errorf("bad input changed the queue: %+v", tasks)
		}
	}
}

// A lock directory nobody may write (immutable: chattr +i holds even for
// root) is MISCONFIGURED for claims, and list still reads it.
func TestReadOnlyLockDirectoryIsMisconfigured(t *testing.T) {
	c := cmdtest.NewCLI(t, "  - name: locks\n    kind: lockdir\n    path: DIR/.locks\n")
	id := c.Run(0, "create", "--title", "design-vpc-module").Task.PageID
	dir := filepath.Join(c.Dir, ".locks")
	if out, err := exec.Command("chattr", "+i", dir).CombinedOutput(); err != nil {
		t.Skipf("chattr +i is not available here: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("chattr", "-i", dir).Run() })
	if r := c.Run(3, "claim", "--task", id, "--agent-name", "a"); !strings.Contains(r.Error.Message, "refuses writes") {
		t.Errorf("claim in a read-only lock directory: %+v", r.Error)
	}
	if tasks := c.Run(0, "list").Tasks; len(tasks) != 1 {
		t.Errorf("list of a read-only lock directory: %+v", tasks)
	}
}

// doctor puts a refused login on its credentials line, not on schema or
// reachability (real PostgreSQL, a role it does not know).
func TestDoctorNamesRefusedCredentials(t *testing.T) {
	dsn := os.Getenv("CLAIMDECK_TEST_PG_DSN")
	if dsn == "" {
		t.Skip("set CLAIMDECK_TEST_PG_DSN (bash .ci/run starts a throwaway cluster and sets it)")
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword("no_such_role_cd", "hunter2-secret")
	c := cmdtest.NewCLI(t, "  - name: gov\n    kind: postgres\n    dsn: "+u.String()+"\n")
	var out bytes.Buffer
	cmdtest.Program(context.Background(), []string{"--config", c.Conf, "doctor"}, nil, &out, &out)
	var rep struct {
		Sources []struct{ Checks []cmdutil.Check }
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || len(rep.Sources) != 1 {
		t.Fatalf("doctor: %v %s", err, out.String())
	}
	checks := rep.Sources[0].Checks
	if last := checks[len(checks)-1]; last.Check != "credentials" || last.OK {
		t.Errorf("doctor with a refused login: %+v", checks)
	}
	if strings.Contains(out.String(), "hunter2-secret") {
		t.Errorf("doctor shows the password: %s", out.String())
	}
}
