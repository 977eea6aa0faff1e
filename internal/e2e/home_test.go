package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

// A service without User=, a cron job or a container with no HOME used to
// keep its queue and audit log in $TMPDIR/claimdeck, which another user
// could make first, and to follow an audit.jsonl link planted there: a
// task id written into the victim's shell rc. Run as a second user, with a
// directory another user (root here) owns and planted, claimdeck now
// refuses and says what to set, and the link's target is untouched.
func TestNoHomeMeansNoSharedDirectoryAsASecondUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run claimdeck as a second user")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv is not installed")
	}
	// Directories nobody can traverse: the binary, and a shared /tmp.
	open := func() string {
		d, err := os.MkdirTemp("", "claimdeck-home-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	bin := binary(t)
	shared := open()
	if err := os.Chmod(shared, 0o1777); err != nil {
		t.Fatal(err)
	}
	// The victim's file, and the attacker's directory with a link to it.
	rc := filepath.Join(shared, "victim.bashrc")
	if err := os.WriteFile(rc, []byte("# rc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(rc, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(shared, "claimdeck")
	if err := os.Mkdir(planted, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(planted, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(rc, filepath.Join(planted, "audit.jsonl")); err != nil {
		t.Fatal(err)
	}
	asNobody := func(env []string, args ...string) (string, int) {
		cmd := exec.Command(setpriv, append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", "--", bin}, args...)...)
		cmd.Env = append([]string{"PATH=/usr/bin:/bin", "TMPDIR=" + shared}, env...)
		cmd.Dir = shared
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		_ = cmd.Run()
		return out.String(), cmd.ProcessState.ExitCode()
	}
	out, code := asNobody(nil, "create", "--title", "x$(touch /tmp/pwned)")
	if code != 3 || !strings.Contains(out, "set HOME") {
		t.Errorf("create with no HOME: exit %d, %s: want MISCONFIGURED saying to set HOME", code, out)
	}
	// Had the queue been made, the release acts on its task and journals it.
	id := "t"
	var created cmdtest.Result
	if json.Unmarshal([]byte(out), &created) == nil && created.Task != nil && created.Task.PageID != "" {
		id = created.Task.PageID
	}
	for _, args := range [][]string{{"release", "--force", "--task", id, "--reason", "r", "--yes"}, {"sweep"}} {
		out, code := asNobody(nil, args...)
		if code != 3 || !strings.Contains(out, "set HOME") {
			t.Errorf("%v with no HOME: exit %d, %s: want MISCONFIGURED saying to set HOME", args, code, out)
		}
	}
	// XDG_DATA_HOME naming the attacker's directory is refused too.
	out, code = asNobody([]string{"XDG_DATA_HOME=" + shared}, "release", "--force", "--task", "t", "--reason", "r", "--yes")
	if code != 3 || !strings.Contains(out, planted) {
		t.Errorf("a data directory another user owns: exit %d, %s: want MISCONFIGURED naming it", code, out)
	}
	if data, _ := os.ReadFile(rc); string(data) != "# rc\n" {
		t.Fatalf("the victim's file was written through the planted link:\n%s", data)
	}
}
