package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSSHDoorWithOpenSSH serves the real dashboard with `claimdeck ssh` and
// reaches it with the OpenSSH client, typed at in tmux: an oncall key sees
// the Queue and its takeover lands as the key's person at door ssh, with
// the key's fingerprint in the journal; a viewer's action key changes
// nothing; an unknown key gets no session.
func TestSSHDoorWithOpenSSH(t *testing.T) {
	for _, tool := range []string{"ssh", "ssh-keygen", "tmux"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	bin := binary(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	env := append(os.Environ(), "HOME="+filepath.Join(dir, "home"), "XDG_DATA_HOME="+data, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	keygen := func(name string) (key, fingerprint string) {
		key = filepath.Join(dir, name)
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name+"@laptop", "-f", key).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v\n%s", err, out)
		}
		out, err := exec.Command("ssh-keygen", "-l", "-f", key+".pub").Output()
		if err != nil {
			t.Fatal(err)
		}
		return key, strings.Fields(string(out))[1]
	}
	alice, aliceFP := keygen("alice")
	bob, _ := keygen("bob")
	eve, _ := keygen("eve")
	pub := func(key string) string {
		b, err := os.ReadFile(key + ".pub")
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	keys := filepath.Join(dir, "keys")
	if err := os.WriteFile(keys, []byte(fmt.Sprintf("# the on-call rota\nalice oncall %s\nbob viewer %s\n", pub(alice), pub(bob))), 0o600); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "config.yaml")
	queue := filepath.Join(dir, "queue.db")
	// a mesh of one node, pinged by the server's one poller for every session
	node := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `{"node": "ORACLE_LOCAL", "status": "healthy", "queue_depth": 0, "claimed_tasks": []}`)
	}))
	defer node.Close()
	reg := filepath.Join(dir, "mesh-nodes.json")
	if err := os.WriteFile(reg, []byte(fmt.Sprintf(`{"nodes": {"ORACLE_LOCAL": {"webhook": "%s/hooks/agent", "health": "%s/hooks/health"}}}`, node.URL, node.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	mesh := fmt.Sprintf("mesh:\n  registry: %s\n  record: %s\n  ping_every: 200ms\n", reg, filepath.Join(dir, "sweep.json"))
	if err := os.WriteFile(config, []byte("actor: lead\nsources:\n  - name: local\n    kind: sqlite\n    path: "+queue+"\n"+mesh), 0o600); err != nil {
		t.Fatal(err)
	}
	cli := func(args ...string) map[string]any {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--config", config}, args...)...)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("claimdeck %v: %v\n%s", args, err, out)
		}
		var v map[string]any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("claimdeck %v: %v\n%s", args, err, out)
		}
		return v
	}
	cli("--create", "create", "--title", "Design VPC module", "--priority", "high")
	claimed := cli("claim", "--agent-name", "SANDMAN", "--run-id", "run-1")
	id := claimed["task"].(map[string]any)["task_id"].(string)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	ln.Close()
	door := exec.Command(bin, "--config", config, "ssh", "--listen", addr.String(), "--keys", keys)
	door.Env = env
	stdout, err := door.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	door.Stderr = &stderr
	if err := door.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { door.Process.Signal(os.Interrupt); door.Wait() })
	ready, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.Contains(ready, `"ok":true`) {
		t.Fatalf("claimdeck ssh did not start: %q %v\n%s", ready, err, stderr.String())
	}

	known := filepath.Join(dir, "known_hosts")
	sshArgs := func(key, user string) []string {
		return []string{"ssh", "-tt", "-F", "/dev/null", "-i", key, "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
			"-o", "StrictHostKeyChecking=accept-new", "-o", "UserKnownHostsFile=" + known, "-p", fmt.Sprint(addr.Port), user + "@127.0.0.1"}
	}
	session := func(name string, w, h int, key string) *tmuxPane {
		p := &tmuxPane{t: t, session: fmt.Sprintf("claimdeck-ssh-%d-%s", os.Getpid(), name)}
		args := append([]string{"new", "-d", "-s", p.session, "-x", fmt.Sprint(w), "-y", fmt.Sprint(h)}, sshArgs(key, name)...)
		if out, err := exec.Command("tmux", args...).CombinedOutput(); err != nil {
			t.Fatalf("tmux new: %v\n%s", err, out)
		}
		t.Cleanup(func() { _ = exec.Command("tmux", "kill-session", "-t", p.session).Run() })
		return p
	}

	a := session("alice", 120, 40, alice)
	a.await("the Queue over SSH", func(s string) bool { return strings.Contains(s, "1 Queue") && strings.Contains(s, "updated") })
	// The footer says how the queue is read in the person's words, not the
	// address of the server's loopback relay.
	a.await("the footer", func(s string) bool {
		return strings.Contains(s, "through the SSH server") && !strings.Contains(s, "relay at")
	})
	a.keys("4")
	a.await("the mesh node in the Nodes view", func(s string) bool { return strings.Contains(s, "ORACLE_LOCAL") && strings.Contains(s, "4 Nodes 1") })
	a.keys("2")
	a.await("the Leases view with SANDMAN's claim", func(s string) bool { return strings.Contains(s, "SANDMAN") })
	a.keys("c")
	a.await("the takeover dialog", func(s string) bool { return strings.Contains(s, "Claim as HUMAN") })
	if err := exec.Command("tmux", "send-keys", "-t", a.session, "-l", "paged").Run(); err != nil {
		t.Fatal(err)
	}
	a.keys("Enter")
	a.await("the confirmation", func(s string) bool { return strings.Contains(s, "Proceed?") })
	a.keys("y")
	a.await("the takeover applied", func(s string) bool { return strings.Contains(s, "HUMAN:alice") })

	got := cli("get", "--task", id)
	if holder := got["task"].(map[string]any)["agent"]; holder != "HUMAN:alice" {
		t.Errorf("holder after alice's takeover over SSH: %v", holder)
	}
	journal, err := os.ReadFile(filepath.Join(data, "claimdeck", "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var applied bool
	for _, line := range strings.Split(strings.TrimSpace(string(journal)), "\n") {
		var r map[string]any
		if json.Unmarshal([]byte(line), &r) == nil && r["result"] == "applied" && r["action"] == "takeover" {
			applied = true
			if r["actor"] != "alice" || r["door"] != "ssh" || r["key_fingerprint"] != aliceFP {
				t.Errorf("the takeover journaled as %s, want alice at door ssh with key %s", line, aliceFP)
			}
		}
	}
	if !applied {
		t.Errorf("no applied takeover in the journal:\n%s", journal)
	}
	// The store's own trail, the one the team reads: the person, door ssh
	// and the key.
	var inTrail bool
	for _, e := range cli("history", "--task", id)["history"].([]any) {
		e := e.(map[string]any)
		if e["action"] == "takeover" {
			inTrail = true
			if e["actor"] != "alice" || e["door"] != "ssh" || !strings.Contains(fmt.Sprint(e["detail"]), "key "+aliceFP) {
				t.Errorf("the takeover in the store's trail: %v, want alice at door ssh naming key %s", e, aliceFP)
			}
		}
	}
	if !inTrail {
		t.Error("no takeover in the store's trail")
	}

	b := session("bob", 80, 24, bob)
	b.await("bob's Queue", func(s string) bool { return strings.Contains(s, "1 Queue") && strings.Contains(s, "updated") })
	b.keys("2", "r")
	b.await("the viewer refused", func(s string) bool { return strings.Contains(s, "read-only") })
	if holder := cli("get", "--task", id)["task"].(map[string]any)["agent"]; holder != "HUMAN:alice" {
		t.Errorf("a viewer's release changed the holder to %v", holder)
	}

	out, err := exec.Command(sshArgs(eve, "eve")[0], append(sshArgs(eve, "eve")[1:], "true")...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Permission denied") {
		t.Errorf("an unknown key: %v\n%s", err, out)
	}
}
