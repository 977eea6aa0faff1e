package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/stats"
)

// `stats` through a relay that refuses its token, or one that is frozen
// (SIGSTOP), is not the fleet's numbers: it exits with API_ERROR's status
// and says which source could not be read and why, never "ok" with zero
// claims.
func TestStatsThroughARefusingOrFrozenRelayFails(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	id := c.Run(0, "create", "--title", "task").Task.PageID
	c.Run(0, "claim", "--task", id, "--agent-name", "SANDMAN")
	token := cmdtest.RelayTestToken(t)
	relay := startRelay(t, c.Conf, token)
	relayed := cmdtest.RelayedConfig(t, c, relay.Addr, "bob")
	statsWith := func(tok string) (int, stats.Report, string) {
		t.Helper()
		cmd := exec.Command(binary(t), "--config", relayed.Conf, "stats")
		cmd.Env = append(os.Environ(), "CLAIMDECK_RELAY_TOKEN="+tok)
		out, err := cmd.Output()
		if _, exited := err.(*exec.ExitError); err != nil && !exited {
			t.Fatal(err)
		}
		var r struct {
			OK    bool         `json:"ok"`
			Stats stats.Report `json:"stats"`
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("stats printed no JSON: %v\n%s", err, out)
		}
		if r.OK != (cmd.ProcessState.ExitCode() == 0) {
			t.Fatalf("stats: ok %v with exit %d: %s", r.OK, cmd.ProcessState.ExitCode(), out)
		}
		return cmd.ProcessState.ExitCode(), r.Stats, r.Error.Message
	}
	if code, rep, _ := statsWith(token); code != 0 || rep.Overall.Tasks["claimed"] != 1 {
		t.Fatalf("stats through the relay with its token: exit %d, %+v", code, rep.Overall.Tasks)
	}
	wrong := cmdtest.RelayTestToken(t)
	code, _, msg := statsWith(wrong)
	if code != model.CodeAPIError.ExitStatus() || !strings.Contains(msg, "local") {
		t.Errorf("stats with a wrong relay token: exit %d, %q: want API_ERROR naming the source", code, msg)
	}
	if strings.Contains(msg, wrong) || strings.Contains(msg, token) {
		t.Errorf("the message shows a token: %q", msg)
	}
	if err := relay.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer relay.Cmd.Process.Signal(syscall.SIGCONT)
	code, _, msg = statsWith(token)
	if code != model.CodeAPIError.ExitStatus() || !strings.Contains(msg, "local") {
		t.Errorf("stats through a frozen relay: exit %d, %q: want API_ERROR naming the source", code, msg)
	}
	t.Logf("wrong token and frozen relay: %q", msg)
}
