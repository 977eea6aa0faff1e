package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/model"
)

// A person finishing their own claim without its token is asked as
// model.Action.Needs says: y/N at a terminal (here a tmux pane), where No
// changes nothing; a script with no terminal, like an agent's, is never
// asked and goes on as it always has.
func TestTmuxOwnFinishAsksAtATerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("tmux screens skipped in -short mode")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	if !model.ActionComplete.Needs().Confirm {
		t.Fatal("model.Action.Needs no longer asks to confirm complete: this test asks the wrong question")
	}
	bin := binary(t)
	conf, _ := lockdirConfig(t)
	run := func(want int, args ...string) cmdtest.Result {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--config", conf}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		out, _ := cmd.Output()
		var r cmdtest.Result
		if code := cmd.ProcessState.ExitCode(); code != want || json.Unmarshal(out, &r) != nil {
			t.Fatalf("%v: exit %d, want %d: %s", args, code, want, out)
		}
		return r
	}
	id := run(0, "create", "--title", "Design the VPC module").Task.PageID
	run(0, "takeover", "--task", id, "--yes")

	session := fmt.Sprintf("claimdeck-ownfinish-%d", os.Getpid())
	script := fmt.Sprintf("%q --config %q complete --task %q; echo EXIT=$?; sleep 60", bin, conf, id)
	if out, err := exec.Command("tmux", "new", "-d", "-s", session, "-x", "160", "-y", "20", "env", "HOME="+t.TempDir(), "sh", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("tmux new: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "kill-session", "-t", session).Run() })
	p := &tmuxPane{t: t, session: session}
	p.await("the y/N question", func(s string) bool { return strings.Contains(s, "Proceed? [y/N]") })
	p.keys("n", "Enter")
	p.await("the refusal", func(s string) bool { return strings.Contains(s, "not confirmed") && strings.Contains(s, "EXIT=3") })
	if got := run(0, "get", "--task", id).Task; got.State != "claimed" {
		t.Fatalf("after No at the terminal the task is %s, want still claimed", got.State)
	}
	if done := run(0, "complete", "--task", id).Task; done.State != "done" {
		t.Fatalf("complete with no terminal: the task is %s, want done", done.State)
	}
}
