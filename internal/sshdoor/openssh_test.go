package sshdoor

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// These tests connect with the real OpenSSH client, typed at in tmux as a
// person would, to a door serving the probe model in this process.

// sshKey makes a key with ssh-keygen and returns its private key's path,
// its public line and its fingerprint as ssh-keygen -lf prints it.
func sshKey(t *testing.T, dir, name string) (path, pub, fingerprint string) {
	t.Helper()
	path = filepath.Join(dir, name)
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name+"@test", "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	b, err := os.ReadFile(path + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("ssh-keygen", "-lf", path+".pub").Output()
	if err != nil {
		t.Fatal(err)
	}
	return path, strings.TrimSpace(string(b)), strings.Fields(string(out))[1]
}

// sshArgs runs OpenSSH with nothing of this machine's own: no config
// file, no agent, only the given key, its own known_hosts.
func sshArgs(addr, key, knownHosts string, more ...string) []string {
	host, port, _ := net.SplitHostPort(addr)
	args := []string{"ssh", "-F", "/dev/null", "-i", key, "-p", port,
		"-o", "IdentitiesOnly=yes", "-o", "IdentityAgent=none", "-o", "BatchMode=yes",
		"-o", "StrictHostKeyChecking=accept-new", "-o", "UserKnownHostsFile=" + knownHosts}
	return append(append(args, more...), "alice@"+host)
}

// openSSH is a tmux server of the test's own, with one pane per client.
type openSSH struct {
	t      *testing.T
	socket string
}

func newOpenSSH(t *testing.T) *openSSH {
	t.Helper()
	if testing.Short() {
		t.Skip("OpenSSH in tmux skipped in -short mode")
	}
	for _, tool := range []string{"tmux", "ssh", "ssh-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	o := &openSSH{t: t, socket: fmt.Sprintf("claimdeck-sshdoor-%d", os.Getpid())}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", o.socket, "kill-server").Run() })
	return o
}

// run starts cmd in a new w×h pane named name; when it ends the pane
// shows EXIT=<status> and stays.
func (o *openSSH) run(name string, w, h int, cmd []string) {
	o.t.Helper()
	quoted := make([]string, len(cmd))
	for i, a := range cmd {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	line := strings.Join(quoted, " ") + "; echo EXIT=$?; sleep 600"
	args := []string{"-L", o.socket, "new-session", "-d", "-s", name, "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), "sh", "-c", line}
	if out, err := exec.Command("tmux", args...).CombinedOutput(); err != nil {
		o.t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
}

func (o *openSSH) tmux(args ...string) string {
	o.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", o.socket}, args...)...).CombinedOutput()
	if err != nil {
		o.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (o *openSSH) screen(name string) string { return o.tmux("capture-pane", "-p", "-t", name) }

func (o *openSSH) await(name, want string) string {
	o.t.Helper()
	var s string
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if s = o.screen(name); strings.Contains(s, want) {
			return s
		}
		time.Sleep(50 * time.Millisecond)
	}
	o.t.Fatalf("pane %s never showed %q:\n%s", name, want, s)
	return ""
}

func (o *openSSH) keys(name string, keys ...string) {
	o.t.Helper()
	o.tmux(append([]string{"send-keys", "-t", name}, keys...)...)
}

func TestOpenSSHInTmux(t *testing.T) {
	o := newOpenSSH(t)
	dir := t.TempDir()
	aliceKey, alicePub, aliceFP := sshKey(t, dir, "alice")
	bobKey, bobPub, _ := sshKey(t, dir, "bob")
	strangerKey, _, _ := sshKey(t, dir, "stranger")
	td := startDoor(t, "alice oncall "+alicePub+"\nbob viewer "+bobPub+"\n", nil)
	known := filepath.Join(dir, "known_hosts")

	t.Run("an oncall key sees the screen, acts, and a resize redraws", func(t *testing.T) {
		o.t = t
		o.run("alice", 80, 24, sshArgs(td.addr, aliceKey, known, "-tt"))
		o.await("alice", "person=alice role=oncall")
		o.await("alice", "size=80x24")
		if title := o.tmux("display-message", "-p", "-t", "alice", "#{pane_title}"); strings.TrimSpace(title) != "claimdeck: alice" {
			t.Errorf("the terminal's title is %q", title)
		}
		o.keys("alice", "t")
		o.await("alice", "taken over by alice "+aliceFP)
		o.tmux("resize-window", "-t", "alice", "-x", "100", "-y", "30")
		o.await("alice", "size=100x30")
		o.keys("alice", "q")
		o.await("alice", "EXIT=0")
	})

	t.Run("a viewer key's action is refused", func(t *testing.T) {
		o.t = t
		o.run("bob", 80, 24, sshArgs(td.addr, bobKey, known, "-tt"))
		o.await("bob", "person=bob role=viewer")
		o.keys("bob", "t")
		s := o.await("bob", "read-only: bob may only look")
		if strings.Contains(s, "taken over") {
			t.Fatal("a viewer acted")
		}
	})

	t.Run("an unknown key gets no session", func(t *testing.T) {
		o.t = t
		o.run("stranger", 80, 24, sshArgs(td.addr, strangerKey, known, "-tt"))
		s := o.await("stranger", "EXIT=")
		if !strings.Contains(s, "Permission denied (publickey)") || !strings.Contains(s, "EXIT=255") || strings.Contains(s, "person=") {
			t.Fatalf("an unknown key:\n%s", s)
		}
	})

	t.Run("a command is refused", func(t *testing.T) {
		o.t = t
		o.run("exec", 80, 24, append(sshArgs(td.addr, aliceKey, known, "-tt"), "cat", "/etc/passwd"))
		s := o.await("exec", "EXIT=")
		if !strings.Contains(s, "this server runs no commands") || !strings.Contains(s, "EXIT=1") || strings.Contains(s, "root:") {
			t.Fatalf("a command:\n%s", s)
		}
	})

	t.Run("port forwarding is refused", func(t *testing.T) {
		o.t = t
		// -W is a local forward of stdin/stdout: the direct-tcpip channel.
		o.run("local", 80, 24, sshArgs(td.addr, aliceKey, known, "-W", td.addr))
		s := o.await("local", "EXIT=")
		if !strings.Contains(s, "open failed") || strings.Contains(s, "EXIT=0") {
			t.Fatalf("-W:\n%s", s)
		}
		o.run("remote", 80, 24, sshArgs(td.addr, aliceKey, known, "-tt", "-o", "ExitOnForwardFailure=yes", "-R", "127.0.0.1:0:127.0.0.1:9"))
		s = o.await("remote", "EXIT=")
		if !strings.Contains(s, "remote port forwarding failed") || strings.Contains(s, "EXIT=0") {
			t.Fatalf("-R:\n%s", s)
		}
	})

	t.Run("the host key is reused across restarts", func(t *testing.T) {
		o.t = t
		hostKey := filepath.Join(filepath.Dir(td.keys), "data", HostKeyFile)
		fi, err := os.Stat(hostKey)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("host key %s: %v %v", hostKey, fi.Mode(), err)
		}
		before := td.HostKeyFingerprint()
		td.stop()
		again := startDoor(t, "alice oncall "+alicePub+"\n", func(c *Config) { c.HostKeyPath = hostKey })
		if again.HostKeyFingerprint() != before {
			t.Fatalf("host key %s after a restart, %s before", again.HostKeyFingerprint(), before)
		}
		// known_hosts holds the first server's key under 127.0.0.1:
		// OpenSSH checks it strictly against the restarted one.
		strict := sshArgs(again.addr, aliceKey, known, "-tt", "-o", "StrictHostKeyChecking=yes")
		// The port changed; HostKeyAlias keeps the name OpenSSH recorded.
		_, oldPort, _ := net.SplitHostPort(td.addr)
		strict = append(strict[:len(strict)-1], "-o", "HostKeyAlias=[127.0.0.1]:"+oldPort, strict[len(strict)-1])
		o.run("again", 80, 24, strict)
		o.await("again", "person=alice role=oncall")
		o.keys("again", "q")
		o.await("again", "EXIT=0")
		out, err := exec.Command("ssh-keygen", "-lf", known).Output()
		if err != nil || !strings.Contains(string(out), before) {
			t.Fatalf("known_hosts %s does not hold %s: %v", out, before, err)
		}
	})
}
