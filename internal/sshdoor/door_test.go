package sshdoor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	gossh "golang.org/x/crypto/ssh"
)

// probe is the model the tests serve: it shows who is connected, with
// which role, on what size, and how many keys came; t acts (or says
// read-only), n sends a notification, q quits.
type probe struct {
	s           *Session
	w, h, keys  int
	said        string
	title       string
	environment []string
}

func newProbe(_ context.Context, s *Session) (tea.Model, error) {
	return &probe{s: s, w: s.Width, h: s.Height, title: "claimdeck: " + s.Person}, nil
}

func (m *probe) Init() tea.Cmd { return nil }

func (m *probe) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
	case tea.KeyPressMsg:
		m.keys++
		switch msg.String() {
		case "t":
			if m.s.ReadOnly() {
				m.said = "read-only: " + m.s.Person + " may only look"
			} else {
				m.said = "taken over by " + m.s.Person + " " + m.s.Fingerprint
			}
		case "n":
			return m, tea.Raw(ansi.Notify("claimdeck: a claim escalated"))
		case "q":
			return m, tea.Quit
		}
	}
	return m, nil
}

func (m *probe) View() tea.View {
	v := tea.NewView(fmt.Sprintf("person=%s role=%s\nsize=%dx%d keys=%d\n%s", m.s.Person, m.s.Role, m.w, m.h, m.keys, m.said))
	v.AltScreen = true
	v.WindowTitle = m.title
	return v
}

// testDoor is a door serving the probe on 127.0.0.1 with its own keys
// file and host key.
type testDoor struct {
	*Door
	addr   string
	keys   string // the keys file's path
	cancel context.CancelFunc
	done   chan error
	logs   *syncBuffer
}

func startDoor(t testing.TB, keys string, tweak func(*Config)) *testDoor {
	t.Helper()
	dir := t.TempDir()
	cfg := Config{KeysFile: filepath.Join(dir, "keys"), HostKeyPath: filepath.Join(dir, "data", HostKeyFile)}
	if tweak != nil {
		tweak(&cfg)
	}
	if err := os.WriteFile(cfg.KeysFile, []byte(keys), 0o600); err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	d, err := New(cfg, newProbe, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	td := &testDoor{Door: d, addr: ln.Addr().String(), keys: cfg.KeysFile, cancel: cancel, done: make(chan error, 1), logs: logs}
	go func() { td.done <- d.Serve(ctx, ln) }()
	t.Cleanup(td.stop)
	return td
}

func (td *testDoor) stop() {
	td.cancel()
	<-td.done
	td.done <- nil // stop may be called again
}

func (td *testDoor) writeKeys(t testing.TB, keys string) {
	t.Helper()
	if err := os.WriteFile(td.keys, []byte(keys), 0o600); err != nil {
		t.Fatal(err)
	}
}

// dial connects as signer, checking the host key is the door's.
func (td *testDoor) dial(signer gossh.Signer) (*gossh.Client, error) {
	return gossh.Dial("tcp", td.addr, &gossh.ClientConfig{
		User: "anyone",
		Auth: []gossh.AuthMethod{gossh.PublicKeys(signer)},
		HostKeyCallback: func(_ string, _ net.Addr, key gossh.PublicKey) error {
			if gossh.FingerprintSHA256(key) != td.HostKeyFingerprint() {
				return errors.New("not the door's host key")
			}
			return nil
		},
		Timeout: 10 * time.Second,
	})
}

// syncBuffer is a buffer several goroutines write and one reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// terminal is one interactive session from the Go client.
type terminal struct {
	sess     *gossh.Session
	in       io.WriteCloser
	out, err *syncBuffer
	ended    chan error
}

func openTerminal(t testing.TB, c *gossh.Client, w, h int) *terminal {
	t.Helper()
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	term := &terminal{sess: s, out: &syncBuffer{}, err: &syncBuffer{}, ended: make(chan error, 1)}
	s.Stdout, s.Stderr = term.out, term.err
	if term.in, err = s.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := s.RequestPty("xterm-256color", h, w, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Shell(); err != nil {
		t.Fatal(err)
	}
	go func() { term.ended <- s.Wait() }()
	return term
}

// waitFor waits until the output holds want; the deadline only stops a
// test that would otherwise hang.
func waitFor(t testing.TB, what func() string, want string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(what(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("never saw %q in:\n%q", want, what())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func waitEnd(t testing.TB, term *terminal) error {
	t.Helper()
	select {
	case err := <-term.ended:
		return err
	case <-time.After(15 * time.Second):
		t.Fatal("the session did not end")
		return nil
	}
}

func TestAnOnCallKeySeesItsIdentityActsAndFollowsResizes(t *testing.T) {
	alice, aliceKey := newKey(t, "alice@laptop")
	td := startDoor(t, "alice oncall "+aliceKey+"\n", nil)
	c, err := td.dial(alice)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	term := openTerminal(t, c, 80, 24)
	waitFor(t, term.out.String, "person=alice role=oncall")
	waitFor(t, term.out.String, "size=80x24")
	waitFor(t, term.out.String, ansi.SetWindowTitle("claimdeck: alice"))
	fmt.Fprint(term.in, "t")
	waitFor(t, term.out.String, "taken over by alice "+gossh.FingerprintSHA256(alice.PublicKey()))
	if err := term.sess.WindowChange(30, 100); err != nil {
		t.Fatal(err)
	}
	waitFor(t, term.out.String, "size=100x30")
	fmt.Fprint(term.in, "n")
	waitFor(t, term.out.String, ansi.Notify("claimdeck: a claim escalated"))
	fmt.Fprint(term.in, "q")
	if err := waitEnd(t, term); err != nil {
		t.Fatalf("quit: %v (stderr %q)", err, term.err.String())
	}
	waitFor(t, td.logs.String, "session ended")
	if !strings.Contains(td.logs.String(), "person=alice role=oncall fingerprint="+gossh.FingerprintSHA256(alice.PublicKey())) {
		t.Errorf("the log does not name the person, role and key:\n%s", td.logs.String())
	}
}

func TestAViewerKeysActionSaysReadOnly(t *testing.T) {
	bob, bobKey := newKey(t, "")
	td := startDoor(t, "bob viewer "+bobKey+"\n", nil)
	c, err := td.dial(bob)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	term := openTerminal(t, c, 80, 24)
	waitFor(t, term.out.String, "person=bob role=viewer")
	fmt.Fprint(term.in, "t")
	waitFor(t, term.out.String, "read-only: bob may only look")
	if strings.Contains(term.out.String(), "taken over") {
		t.Fatal("a viewer acted")
	}
}

func TestAnUnknownKeyOrAPasswordGetsNoSession(t *testing.T) {
	_, aliceKey := newKey(t, "")
	stranger, _ := newKey(t, "")
	td := startDoor(t, "alice oncall "+aliceKey+"\n", nil)
	if c, err := td.dial(stranger); err == nil {
		c.Close()
		t.Fatal("a key not in the keys file got in")
	} else if !strings.Contains(err.Error(), "unable to authenticate") {
		t.Fatalf("err = %v", err)
	}
	_, err := gossh.Dial("tcp", td.addr, &gossh.ClientConfig{
		User: "alice", Auth: []gossh.AuthMethod{gossh.Password("alice"), gossh.KeyboardInteractive(func(string, string, []string, []bool) ([]string, error) { return nil, nil })},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second,
	})
	if err == nil || !strings.Contains(err.Error(), "attempted methods [none]") {
		t.Fatalf("password or keyboard-interactive was offered: %v", err)
	}
	if !strings.Contains(td.logs.String(), "unknown key refused") || !strings.Contains(td.logs.String(), gossh.FingerprintSHA256(stranger.PublicKey())) {
		t.Errorf("the refusal is not logged with the key's fingerprint:\n%s", td.logs.String())
	}
}

func TestNoCommandNoSubsystemNoForwardingNoAgentNoTerminalless(t *testing.T) {
	alice, aliceKey := newKey(t, "")
	td := startDoor(t, "alice oncall "+aliceKey+"\n", nil)
	c, err := td.dial(alice)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	s, _ := c.NewSession()
	out, err := s.CombinedOutput("cat /etc/passwd")
	var exit *gossh.ExitError
	if !errors.As(err, &exit) || exit.ExitStatus() != 1 || !strings.Contains(string(out), "runs no commands") || strings.Contains(string(out), "root:") {
		t.Errorf("exec: err %v, output %q", err, out)
	}

	s, _ = c.NewSession()
	if err := s.RequestSubsystem("sftp"); err == nil {
		t.Error("the sftp subsystem was granted")
	}
	s.Close()

	s, _ = c.NewSession()
	var stderr syncBuffer
	s.Stderr = &stderr
	if err := s.Shell(); err != nil {
		t.Fatal(err)
	}
	if err := s.Wait(); !errors.As(err, &exit) || !strings.Contains(stderr.String(), "needs a terminal") {
		t.Errorf("a shell without a terminal: err %v, stderr %q", err, stderr.String())
	}

	s, _ = c.NewSession()
	for _, req := range []string{"auth-agent-req@openssh.com", "x11-req"} {
		if ok, err := s.SendRequest(req, true, nil); ok || err != nil {
			t.Errorf("%s: granted %v, err %v", req, ok, err)
		}
	}
	s.Close()

	if conn, err := c.Dial("tcp", td.addr); err == nil {
		conn.Close()
		t.Error("local port forwarding (direct-tcpip) was granted")
	}
	if ln, err := c.Listen("tcp", "127.0.0.1:0"); err == nil {
		ln.Close()
		t.Error("remote port forwarding (tcpip-forward) was granted")
	}
}

func TestReloadRefusesARemovedKeysNewConnectionsAndKeepsOpenSessions(t *testing.T) {
	alice, aliceKey := newKey(t, "")
	bob, bobKey := newKey(t, "")
	td := startDoor(t, "alice oncall "+aliceKey+"\nbob viewer "+bobKey+"\n", nil)
	c, err := td.dial(alice)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	term := openTerminal(t, c, 80, 24)
	waitFor(t, term.out.String, "person=alice")

	// A bad file changes nothing.
	td.writeKeys(t, "alice admin "+aliceKey+"\n")
	if err := td.Reload(); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("a bad file reloaded: %v", err)
	}
	if c2, err := td.dial(bob); err != nil {
		t.Fatalf("bob, still in the keys in force, refused after a bad reload: %v", err)
	} else {
		c2.Close()
	}

	td.writeKeys(t, "bob viewer "+bobKey+"\n")
	if err := td.Reload(); err != nil {
		t.Fatal(err)
	}
	if c2, err := td.dial(alice); err == nil {
		c2.Close()
		t.Fatal("a removed key got a new connection")
	}
	// alice's open session goes on.
	fmt.Fprint(term.in, "t")
	waitFor(t, term.out.String, "taken over by alice")
	// but her connection opens no new session.
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	refused := &terminal{sess: s, out: &syncBuffer{}, err: &syncBuffer{}, ended: make(chan error, 1)}
	s.Stdout, s.Stderr = refused.out, refused.err
	_ = s.RequestPty("xterm", 24, 80, gossh.TerminalModes{})
	_ = s.Shell()
	go func() { refused.ended <- s.Wait() }()
	waitEnd(t, refused)
	if !strings.Contains(refused.err.String(), "no longer in the keys file") {
		t.Errorf("a new session of a removed key: stderr %q", refused.err.String())
	}

	// SIGHUP reloads: alice back in.
	td.writeKeys(t, "alice viewer "+aliceKey+"\n")
	reloads := strings.Count(td.logs.String(), "keys reloaded")
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() string { return fmt.Sprint(strings.Count(td.logs.String(), "keys reloaded") > reloads) }, "true")
	c3, err := td.dial(alice)
	if err != nil {
		t.Fatalf("alice after SIGHUP: %v", err)
	}
	defer c3.Close()
	term3 := openTerminal(t, c3, 80, 24)
	waitFor(t, term3.out.String, "person=alice role=viewer")
}

func TestCapsOnSessionsAndKeyAttempts(t *testing.T) {
	alice, aliceKey := newKey(t, "")
	td := startDoor(t, "alice oncall "+aliceKey+"\n", func(c *Config) { c.MaxSessions = 1; c.MaxAuthPerAddr = 4 })
	c, err := td.dial(alice)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	first := openTerminal(t, c, 80, 24)
	waitFor(t, first.out.String, "person=alice")
	second := openTerminal(t, c, 80, 24)
	if err := waitEnd(t, second); err == nil || !strings.Contains(second.err.String(), "all 1 sessions are in use") {
		t.Errorf("a second session: err %v, stderr %q", err, second.err.String())
	}
	if td.Sessions() != 1 {
		t.Errorf("Sessions = %d", td.Sessions())
	}

	// alice's connection made one attempt; three strangers' keys use the rest.
	for range 3 {
		stranger, _ := newKey(t, "")
		if c, err := td.dial(stranger); err == nil {
			c.Close()
			t.Fatal("a stranger got in")
		}
	}
	if c, err := td.dial(alice); err == nil {
		c.Close()
		t.Fatal("a fifth attempt in a minute was let in")
	}
	waitFor(t, td.logs.String, "too many key attempts from this address")
}

func TestAttemptsSlideOutOfTheWindow(t *testing.T) {
	a := newAttempts(2, time.Minute)
	t0 := time.Unix(1e9, 0)
	if !a.try("h", t0) || !a.try("h", t0.Add(time.Second)) {
		t.Fatal("refused within the limit")
	}
	if a.try("h", t0.Add(2*time.Second)) {
		t.Fatal("a third attempt in the window")
	}
	if spent, first := a.spent("h", t0.Add(2*time.Second)); !spent || !first {
		t.Fatalf("spent %v, first %v", spent, first)
	}
	if spent, first := a.spent("h", t0.Add(3*time.Second)); !spent || first {
		t.Fatalf("said twice in a window: spent %v, first %v", spent, first)
	}
	if !a.try("other", t0) {
		t.Fatal("another address refused")
	}
	if !a.try("h", t0.Add(time.Minute)) {
		t.Fatal("the first attempt did not slide out")
	}
}

func TestAnIdleSessionIsToldAndDisconnected(t *testing.T) {
	alice, aliceKey := newKey(t, "")
	td := startDoor(t, "alice oncall "+aliceKey+"\n", func(c *Config) { c.IdleTimeout = time.Second })
	c, err := td.dial(alice)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	term := openTerminal(t, c, 80, 24)
	waitFor(t, term.out.String, "person=alice")
	err = waitEnd(t, term)
	var exit *gossh.ExitError
	if !errors.As(err, &exit) || exit.ExitStatus() != 1 || !strings.Contains(term.err.String(), "no input for 1s: disconnected") {
		t.Fatalf("err %v, stderr %q", err, term.err.String())
	}
	if !strings.Contains(term.out.String(), ansi.ResetModeAltScreenSaveCursor) {
		t.Errorf("the terminal was not put back before the message: %q", term.out.String())
	}
}

func TestStoppingTheServerPutsEveryTerminalBack(t *testing.T) {
	alice, aliceKey := newKey(t, "")
	td := startDoor(t, "alice oncall "+aliceKey+"\n", nil)
	c, err := td.dial(alice)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	term := openTerminal(t, c, 80, 24)
	waitFor(t, term.out.String, "person=alice")
	td.stop()
	waitEnd(t, term)
	if !strings.Contains(term.err.String(), "the server is stopping") || !strings.Contains(term.out.String(), ansi.ResetModeAltScreenSaveCursor) {
		t.Fatalf("stderr %q, output %q", term.err.String(), term.out.String())
	}
}

func TestTheHostKeyIsMadeOnceAndKeptPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "claimdeck")
	path := filepath.Join(dir, HostKeyFile)
	first, err := LoadHostKey(path)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]fs.FileMode{dir: 0o700, path: 0o600, path + ".pub": 0o644} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, err %v, want %#o", p, fi.Mode().Perm(), err, want)
		}
	}
	if first.PublicKey().Type() != gossh.KeyAlgoED25519 {
		t.Errorf("host key type %s", first.PublicKey().Type())
	}
	pub, _ := os.ReadFile(path + ".pub")
	if string(pub) != string(gossh.MarshalAuthorizedKey(first.PublicKey())) {
		t.Errorf(".pub %q is not the key's public half", pub)
	}
	again, err := LoadHostKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if gossh.FingerprintSHA256(again.PublicKey()) != gossh.FingerprintSHA256(first.PublicKey()) {
		t.Fatal("a second start made a new host key")
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadHostKey(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a host key others may read: %v", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadHostKey(path); err == nil || !strings.Contains(err.Error(), "remove it to have a new one made") {
		t.Fatalf("a broken host key: %v", err)
	}
}

func TestCheckListen(t *testing.T) {
	for _, c := range []struct {
		addr, warn, err string
	}{
		{"127.0.0.1:2222", "", ""},
		{"localhost:2222", "", ""},
		{"[::1]:2222", "", ""},
		{"0.0.0.0:2222", "serving SSH on 0.0.0.0:2222, reachable from other hosts", ""},
		{"10.1.2.3:22", "only the keys in the keys file get a session", ""},
		{":2222", "", "names no host"},
		{"2222", "", "want host:port"},
	} {
		w, err := CheckListen(c.addr)
		if (c.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: err %v", c.addr, err)
		}
		if (c.warn == "") != (w == "") || !strings.Contains(w, c.warn) {
			t.Errorf("%s: warning %q", c.addr, w)
		}
	}
}

func TestNewRefusesABadKeysFileOrNone(t *testing.T) {
	dir := t.TempDir()
	hk := filepath.Join(dir, HostKeyFile)
	if _, err := New(Config{HostKeyPath: hk}, newProbe, nil); err == nil || !strings.Contains(err.Error(), "no keys file") {
		t.Errorf("no keys file: %v", err)
	}
	bad := filepath.Join(dir, "keys")
	if err := os.WriteFile(bad, []byte("alice\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{KeysFile: bad, HostKeyPath: hk}, newProbe, nil); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("bad keys file: %v", err)
	}
}

// The client's terminal type and environment reach the session: the
// colour profile follows them, and NO_COLOR is the person's, not the
// server's.
func TestTheSessionCarriesTheClientsTerminalAndEnvironment(t *testing.T) {
	alice, aliceKey := newKey(t, "")
	seen := make(chan *Session, 2)
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	if err := os.WriteFile(keys, []byte("alice oncall "+aliceKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := New(Config{KeysFile: keys, HostKeyPath: filepath.Join(dir, HostKeyFile)}, func(ctx context.Context, s *Session) (tea.Model, error) {
		seen <- s
		return newProbe(ctx, s)
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- d.Serve(ctx, ln) }()
	defer func() { cancel(); <-served }()
	td := &testDoor{Door: d, addr: ln.Addr().String()}
	c, err := td.dial(alice)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, env := range []map[string]string{{"COLORTERM": "truecolor"}, {"NO_COLOR": "1"}} {
		s, err := c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range env {
			if err := s.Setenv(k, v); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.RequestPty("xterm-256color", 30, 100, gossh.TerminalModes{}); err != nil {
			t.Fatal(err)
		}
		if err := s.Shell(); err != nil {
			t.Fatal(err)
		}
		got := <-seen
		want := colorprofile.TrueColor
		if env["NO_COLOR"] != "" {
			want = colorprofile.Ascii
		}
		if got.Term != "xterm-256color" || got.Width != 100 || got.Height != 30 || got.Profile != want || got.Person != "alice" || got.RemoteAddr == nil {
			t.Errorf("env %v: session %+v, want profile %v", env, got, want)
		}
		s.Close()
	}
}
