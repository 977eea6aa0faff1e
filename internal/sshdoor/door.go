// Package sshdoor serves the dashboard over SSH: one Bubble Tea program
// per session, each person known by their public key through a keys file
// that gives every key a person and a role. It runs nothing but that
// program: no shell, no command, no forwarding, no subsystem. It knows
// neither the dashboard nor the sources: the command that starts it hands
// in how to build one session's model.
package sshdoor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/ssh"
	"charm.land/wish/v2"
	"github.com/charmbracelet/colorprofile"
	gossh "golang.org/x/crypto/ssh"

	"github.com/claimdeck/claimdeck/sources/webserver"
)

// Defaults for the Config's zero values.
const (
	DefaultMaxSessions      = 32
	DefaultMaxAuthPerAddr   = 20
	DefaultIdleTimeout      = 30 * time.Minute
	DefaultHandshakeTimeout = 20 * time.Second
)

// pendingConns is how many connections beyond MaxSessions may be open at
// once: room for people to be told that every session is in use, and
// for handshakes under way.
const pendingConns = 16

// stopGrace is how long sessions get to put their terminals back when
// the server stops, before their connections are closed.
const stopGrace = 5 * time.Second

// Config is how the SSH door serves.
type Config struct {
	// Listen is host:port; the host is required (CheckListen).
	Listen string
	// KeysFile maps public keys to people and roles (ParseKeys).
	KeysFile string
	// HostKeyPath is the server's private key, made on first start
	// (LoadHostKey); claimdeck keeps it in its data directory as
	// HostKeyFile.
	HostKeyPath string
	// MaxSessions caps the sessions open at once (DefaultMaxSessions).
	MaxSessions int
	// MaxAuthPerAddr caps the keys one remote address may offer in a
	// minute, accepted or not (DefaultMaxAuthPerAddr). A client offers
	// each key of its agent in turn: keep room for a few.
	MaxAuthPerAddr int
	// IdleTimeout ends a session that has had no input for that long
	// (DefaultIdleTimeout).
	IdleTimeout time.Duration
	// HandshakeTimeout bounds a connection's handshake and authentication
	// (DefaultHandshakeTimeout).
	HandshakeTimeout time.Duration
}

func (c Config) withDefaults() Config {
	if c.MaxSessions <= 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	if c.MaxAuthPerAddr <= 0 {
		c.MaxAuthPerAddr = DefaultMaxAuthPerAddr
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = DefaultHandshakeTimeout
	}
	return c
}

// Session is one person's SSH session, as the program built for it sees
// it: who connected, with which key, on what terminal.
type Session struct {
	Person      string
	Role        Role
	Fingerprint string // the key's, SHA256:… as ssh-keygen -lf prints it
	Comment     string // the key's comment in the keys file
	RemoteAddr  net.Addr
	Term        string // the client's $TERM
	// Width and Height are the terminal's size at the start; the
	// program gets a tea.WindowSizeMsg for every change after.
	Width, Height int
	// Profile is the colour profile the client's $TERM and environment
	// (NO_COLOR, COLORTERM where the client sends them) allow; the
	// program renders with it.
	Profile colorprofile.Profile
	// Environ is the client's environment as the session received it,
	// with TERM: read NO_COLOR and the like here, never from os.Getenv.
	Environ []string
}

// ReadOnly reports whether the session may only look: every role but
// oncall.
func (s *Session) ReadOnly() bool { return s.Role != OnCall }

// NewModel builds the model one session runs. ctx ends with the session.
// The program it runs in writes to the person's terminal: a title set in
// the view (tea.View.WindowTitle) and a notification sent with tea.Raw
// reach it as they are.
type NewModel func(ctx context.Context, s *Session) (tea.Model, error)

// Door is a running SSH server for the dashboard.
type Door struct {
	cfg      Config
	newModel NewModel
	log      *slog.Logger
	keys     atomic.Pointer[Keys]
	hostKey  gossh.Signer
	server   *ssh.Server
	auth     *attempts
	conns    atomic.Int64
	sessions atomic.Int64
	mu       sync.Mutex // guards stopped, and running's count going up from zero
	stopped  bool
	running  sync.WaitGroup
	stop     chan struct{} // closed when the server stops: sessions end
}

// CheckListen is webserver.CheckAddr's rule for where claimdeck listens,
// with SSH's own warning off loopback.
func CheckListen(addr string) (warning string, err error) {
	warning, err = webserver.CheckAddr(addr)
	if err != nil || warning == "" {
		return "", err
	}
	return fmt.Sprintf("serving SSH on %s, reachable from other hosts: only the keys in the keys file get a session, but anyone who can reach the port can try; prefer 127.0.0.1 behind a bastion or a VPN (docs/ssh.md)", addr), nil
}

// Serve listens on cfg.Listen and serves until ctx ends. A listen address
// off loopback is logged as a warning.
func Serve(ctx context.Context, cfg Config, newModel NewModel, log *slog.Logger) error {
	warning, err := CheckListen(cfg.Listen)
	if err != nil {
		return err
	}
	if warning != "" {
		log.Warn(warning)
	}
	d, err := New(cfg, newModel, log)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	return d.Serve(ctx, ln)
}

// New reads the keys file and the host key (making it on first start) and
// builds the server. A bad keys file stops it here, with every bad line.
func New(cfg Config, newModel NewModel, log *slog.Logger) (*Door, error) {
	cfg = cfg.withDefaults()
	if newModel == nil {
		return nil, errors.New("sshdoor: no model to serve")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.KeysFile == "" {
		return nil, errors.New("no keys file: give the file that maps each public key to a person and a role (docs/ssh.md)")
	}
	keys, err := LoadKeys(cfg.KeysFile)
	if err != nil {
		return nil, err
	}
	signer, err := LoadHostKey(cfg.HostKeyPath)
	if err != nil {
		return nil, err
	}
	d := &Door{cfg: cfg, newModel: newModel, log: log, hostKey: signer, auth: newAttempts(cfg.MaxAuthPerAddr, time.Minute), stop: make(chan struct{})}
	d.keys.Store(keys)
	d.server, err = wish.NewServer(
		func(s *ssh.Server) error { s.AddHostKey(signer); return nil },
		wish.WithVersion("claimdeck"),
		wish.WithPublicKeyAuth(d.allowKey),
		// Any traffic keeps a connection alive at this level; the session's
		// own clock (watchIdle) counts input only.
		wish.WithIdleTimeout(cfg.IdleTimeout+time.Minute),
		wish.WithMiddleware(func(ssh.Handler) ssh.Handler { return d.handle }),
		func(s *ssh.Server) error {
			s.HandshakeTimeout = cfg.HandshakeTimeout
			s.ConnCallback = d.admit
			s.ConnectionCloseCallback = func(net.Conn) { d.conns.Add(-1) }
			s.ServerConfigCallback = func(ssh.Context) *gossh.ServerConfig { return &gossh.ServerConfig{MaxAuthTries: 6} }
			// Only sessions, and those without an agent; no global
			// requests (tcpip-forward), no subsystems (sftp). Forwarding
			// callbacks stay nil: the library then refuses it.
			s.ChannelHandlers = map[string]ssh.ChannelHandler{"session": sessionWithoutAgent}
			s.RequestHandlers = map[string]ssh.RequestHandler{}
			s.SubsystemHandlers = map[string]ssh.SubsystemHandler{}
			return nil
		},
	)
	if err != nil {
		return nil, err
	}
	log.Info("ssh door ready", "keys", keys.Len(), "host_fingerprint", gossh.FingerprintSHA256(signer.PublicKey()))
	return d, nil
}

// HostKeyFingerprint is the server's key's fingerprint, SHA256:…, for
// the people who connect to check on first contact.
func (d *Door) HostKeyFingerprint() string { return gossh.FingerprintSHA256(d.hostKey.PublicKey()) }

// Sessions is how many sessions are open.
func (d *Door) Sessions() int { return int(d.sessions.Load()) }

// Reload reads the keys file again. New connections are checked against
// the new keys, and so is every session a connection opens from now on;
// sessions already open go on. A bad file changes nothing: the old keys
// stay, and the error says what to fix.
func (d *Door) Reload() error {
	keys, err := LoadKeys(d.cfg.KeysFile)
	if err != nil {
		return err
	}
	d.keys.Store(keys)
	d.log.Info("keys reloaded", "keys", keys.Len())
	return nil
}

// Serve serves SSH on ln until ctx ends, reloading the keys file on
// SIGHUP. When ctx ends, every session's program ends and puts its
// terminal back before the connections close.
func (d *Door) Serve(ctx context.Context, ln net.Listener) error {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	done := make(chan error, 1)
	go func() { done <- d.server.Serve(ln) }()
	for {
		select {
		case <-hup:
			if err := d.Reload(); err != nil {
				d.log.Error("keys file not reloaded: the keys read before stay in force", "error", err)
			}
		case err := <-done:
			d.close()
			return err
		case <-ctx.Done():
			d.close()
			<-done
			return nil
		}
	}
}

// close ends every session, waits a little for their programs to put the
// terminals back, and closes the server.
func (d *Door) close() {
	d.mu.Lock()
	if !d.stopped {
		d.stopped = true
		close(d.stop)
	}
	d.mu.Unlock()
	ended := make(chan struct{})
	go func() { d.running.Wait(); close(ended) }()
	select {
	case <-ended:
	case <-time.After(stopGrace):
	}
	_ = d.server.Close()
}

// admit takes or refuses a new connection before its handshake: over the
// cap of connections, or from an address that used up its attempts, it
// is closed at once.
func (d *Door) admit(_ ssh.Context, conn net.Conn) net.Conn {
	if spent, first := d.auth.spent(hostOf(conn.RemoteAddr()), time.Now()); spent {
		if first { // once a window: a flood of connections is not a flood of lines
			d.log.Warn("connections refused: too many key attempts from this address in the last minute", "remote", conn.RemoteAddr().String())
		}
		return nil
	}
	if n := d.conns.Add(1); n > int64(d.cfg.MaxSessions+pendingConns) {
		d.conns.Add(-1)
		d.log.Warn("connection refused: too many connections", "remote", conn.RemoteAddr().String(), "limit", d.cfg.MaxSessions+pendingConns)
		return nil
	}
	return conn
}

// allowKey is public-key authentication: the key must be in the keys
// file as it reads now, and the address must have attempts left.
func (d *Door) allowKey(ctx ssh.Context, key ssh.PublicKey) bool {
	remote := ctx.RemoteAddr().String()
	if !d.auth.try(hostOf(ctx.RemoteAddr()), time.Now()) {
		d.log.Warn("key refused: too many key attempts from this address in the last minute", "remote", remote)
		return false
	}
	if _, ok := d.keys.Load().Lookup(key); !ok {
		d.log.Info("unknown key refused", "remote", remote, "fingerprint", gossh.FingerprintSHA256(key))
		return false
	}
	return true
}

// handle runs one session: the dashboard's program and nothing else.
func (d *Door) handle(sess ssh.Session) {
	id, ok := d.keys.Load().Lookup(sess.PublicKey())
	if !ok {
		// Taken out of the file after this connection authenticated.
		refuse(sess, "this key is no longer in the keys file: ask for access again")
		return
	}
	if sess.RawCommand() != "" || sess.Subsystem() != "" {
		refuse(sess, "this server runs no commands: connect without one (ssh -t) to see the dashboard")
		return
	}
	pty, windows, ok := sess.Pty()
	if !ok {
		refuse(sess, "the dashboard needs a terminal: connect with ssh -t")
		return
	}
	if n := d.sessions.Add(1); n > int64(d.cfg.MaxSessions) {
		d.sessions.Add(-1)
		refuse(sess, fmt.Sprintf("all %d sessions are in use: try again later", d.cfg.MaxSessions))
		return
	}
	defer d.sessions.Add(-1)
	d.mu.Lock()
	if d.stopped {
		d.mu.Unlock()
		refuse(sess, "the server is stopping")
		return
	}
	d.running.Add(1)
	d.mu.Unlock()
	defer d.running.Done()

	env := append(sess.Environ(), "TERM="+pty.Term)
	s := &Session{
		Person: id.Person, Role: id.Role, Fingerprint: id.Fingerprint, Comment: id.Comment,
		RemoteAddr: sess.RemoteAddr(), Term: pty.Term, Width: pty.Window.Width, Height: pty.Window.Height,
		Profile: colorprofile.Env(env), Environ: env,
	}
	log := d.log.With("person", s.Person, "role", string(s.Role), "fingerprint", s.Fingerprint, "remote", s.RemoteAddr.String())
	ctx, cancel := context.WithCancel(sess.Context())
	defer cancel()
	go func() {
		select {
		case <-d.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	m, err := d.newModel(ctx, s)
	if err != nil {
		log.Error("session not started", "error", err)
		refuse(sess, "the dashboard could not start: the server's log says why")
		return
	}
	in := newInputClock(sess)
	p := tea.NewProgram(m,
		tea.WithContext(ctx),
		tea.WithInput(in),
		tea.WithOutput(sess),
		tea.WithEnvironment(env),
		tea.WithColorProfile(s.Profile),
		tea.WithWindowSize(s.Width, s.Height),
		// The process's signals are the server's, not one session's.
		tea.WithoutSignalHandler(),
		// A session has no job control to suspend into.
		tea.WithFilter(func(_ tea.Model, msg tea.Msg) tea.Msg {
			if _, ok := msg.(tea.SuspendMsg); ok {
				return tea.ResumeMsg{}
			}
			return msg
		}),
	)
	if b, ok := m.(interface{ Bind(*tea.Program) }); ok {
		b.Bind(p) // bells, notifications and the clipboard reach this terminal
	}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case w, ok := <-windows:
				if !ok {
					return
				}
				p.Send(tea.WindowSizeMsg{Width: w.Width, Height: w.Height})
			}
		}
	}()
	idle := make(chan struct{})
	go watchIdle(ctx, in, d.cfg.IdleTimeout, func() { close(idle); p.Quit() })
	log.Info("session started")
	start := time.Now()
	_, err = p.Run()
	cancel()
	select {
	case <-idle:
		log.Info("session ended: idle", "after", time.Since(start).Round(time.Second))
		refuse(sess, fmt.Sprintf("no input for %s: disconnected; connect again to go on", d.cfg.IdleTimeout))
		return
	default:
	}
	select {
	case <-d.stop:
		refuse(sess, "the server is stopping")
	default:
	}
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) {
		log.Error("session ended", "error", err, "after", time.Since(start).Round(time.Second))
		return
	}
	log.Info("session ended", "after", time.Since(start).Round(time.Second))
}

// refuse tells the person why, on the terminal's error stream, and ends
// the session with status 1.
func refuse(sess ssh.Session, why string) {
	_, _ = io.WriteString(sess.Stderr(), "claimdeck: "+why+"\r\n")
	_ = sess.Exit(1)
	_ = sess.Close()
}

// hostOf is the address attempts are counted by: the remote IP.
func hostOf(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.String()
	}
	return a.String()
}

// sessionWithoutAgent is the library's session channel with agent
// forwarding refused: the library would say yes to it (without ever
// using the agent); saying no tells the client the truth.
func sessionWithoutAgent(srv *ssh.Server, conn *gossh.ServerConn, ch gossh.NewChannel, ctx ssh.Context) {
	ssh.DefaultSessionHandler(srv, conn, refusingChannel{ch}, ctx)
}

type refusingChannel struct{ gossh.NewChannel }

func (c refusingChannel) Accept() (gossh.Channel, <-chan *gossh.Request, error) {
	ch, reqs, err := c.NewChannel.Accept()
	if err != nil {
		return ch, reqs, err
	}
	out := make(chan *gossh.Request)
	go func() {
		defer close(out)
		for r := range reqs {
			switch r.Type {
			case "auth-agent-req@openssh.com", "x11-req":
				if r.WantReply {
					_ = r.Reply(false, nil)
				}
			default:
				out <- r
			}
		}
	}()
	return ch, out, nil
}
