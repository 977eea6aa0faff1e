package main

import (
	"strings"
	"testing"
)

// Bad input from the command line is MISCONFIGURED (exit 3) with a message
// naming what to fix, on the embedded queue and on lock files alike, and
// the queue is as it was.
func TestBadInputIsMisconfigured(t *testing.T) {
	for _, src := range []string{
		"  - name: q\n    kind: sqlite\n    path: DIR/q.db\n",
		"  - name: q\n    kind: lockdir\n    path: DIR/.locks\n",
	} {
		c := newCLI(t, src)
		id := c.run(0, "create", "--title", "design-vpc-module").Task.PageID
		for _, bad := range []struct {
			args []string
			says string
		}{
			{[]string{"claim", "--task", id, "--agent-name", "a", "--lease", "-5s"}, "lease -5s is out of range"},
			{[]string{"claim", "--task", id, "--agent-name", "a", "--lease", "2562047h"}, "is out of range"},
			{[]string{"create", "--title", "x", "--priority", "2147483648"}, "priority 2147483648 is out of range"},
			{[]string{"create", "--title", "caf\xe9"}, "not valid UTF-8"},
		} {
			r := c.run(3, bad.args...)
			if r.Error.Code != "MISCONFIGURED" || !strings.Contains(r.Error.Message, bad.says) {
				t.Errorf("%v: %+v, want MISCONFIGURED saying %q", bad.args, r.Error, bad.says)
			}
		}
		if tasks := c.run(0, "list").Tasks; len(tasks) != 1 || tasks[0].State != "queued" {
			t.Errorf("bad input changed the queue: %+v", tasks)
		}
	}
}
