package dashboard

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/internal/sshdoor"
	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/mesh"
	"github.com/claimdeck/claimdeck/sources/relay"
	"github.com/claimdeck/claimdeck/sources/stats"
	"github.com/claimdeck/claimdeck/sources/webserver"
	"github.com/claimdeck/claimdeck/theme"
	"github.com/claimdeck/claimdeck/tui"
)

// SSH is `claimdeck ssh`: the dashboard served over SSH.
func SSH(env *cmdutil.Env) *cobra.Command { return (&app{env}).sshCommand() }

func (a *app) sshCommand() *cobra.Command {
	var listen, keys string
	cmd := &cobra.Command{
		Use:   "ssh --listen HOST:PORT --keys FILE",
		Short: "Serve the dashboard over SSH, each person known by their key",
		Long: `ssh serves the dashboard to any SSH client: ssh -t -p PORT HOST. The keys
file gives each public key a person and a role, one line a key:

  alice oncall ssh-ed25519 AAAA… alice@laptop
  bob   viewer ssh-ed25519 AAAA… bob@phone

oncall may act, viewer may only look. An unknown key gets no session; every
action goes through the same checks as at the dashboard, as the key's
person at door ssh, and is journaled with the key's fingerprint. Public
keys only; no shell, command, forwarding or subsystem. The host key is made
on first start in the data directory (mode 0600) and kept. All sessions
share one reader of the sources: twenty people cost the database what one
does. SIGHUP reads the keys file again without dropping a session
(docs/ssh.md). It runs until interrupted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sc := a.Cfg.SSH
			if listen == "" {
				listen = sc.Listen
			}
			if keys == "" {
				keys = sc.Keys
			}
			if listen == "" {
				return model.Errorf(model.CodeMisconfigured, "ssh", "", "--listen HOST:PORT is required (or ssh.listen in the configuration), e.g. 127.0.0.1:2222")
			}
			if keys == "" {
				return model.Errorf(model.CodeMisconfigured, "ssh", "", "--keys FILE is required (or ssh.keys): one line a key, PERSON ROLE KEY (docs/ssh.md)")
			}
			return a.serveSSH(cmd.Context(), listen, cmdutil.Expand(keys), sc)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "address to serve SSH on, host required (ssh.listen)")
	cmd.Flags().StringVar(&keys, "keys", "", "the keys file: PERSON ROLE KEY a line (ssh.keys)")
	return cmd
}

func (a *app) serveSSH(ctx context.Context, listen, keysFile string, sc cmdutil.SSHConfig) error {
	warning, err := sshdoor.CheckListen(listen)
	if err != nil {
		return model.Errorf(model.CodeMisconfigured, "ssh", "", "%v", err)
	}
	if warning != "" {
		fmt.Fprintf(a.Stderr, "WARNING: claimdeck ssh: %s\n", warning)
	}
	hostKey := cmdutil.Expand(sc.HostKey)
	if hostKey == "" {
		dir := cmdutil.DataDir()
		if dir == "" {
			return cmdutil.NoHome("the SSH host key", "XDG_DATA_HOME", "ssh.host_key")
		}
		if err := sources.PrivateDir("data directory", dir); err != nil {
			return model.Wrap(model.CodeMisconfigured, "ssh", "", err)
		}
		hostKey = filepath.Join(dir, sshdoor.HostKeyFile)
	}
	journalPath := cmdutil.Expand(a.Cfg.AuditLog)
	if journalPath == "" {
		return cmdutil.NoHome("the audit log", "XDG_DATA_HOME", "audit_log")
	}
	journal, err := sources.OpenJournal(journalPath)
	if err != nil {
		return model.Wrap(model.CodeMisconfigured, "audit", "", err)
	}
	defer journal.Close()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// One reader for every session, as the relay is for dashboards: the
	// sources are opened and polled once; each session's hub reads that
	// reader over loopback and writes to the sources through its own desk.
	for i := range a.Cfg.Sources {
		a.Cfg.Sources[i].ListenPause = relay.ListenPause
	}
	srcs, err := a.OpenAll(ctx)
	if err != nil {
		return err
	}
	defer cmdutil.CloseAll(srcs)
	policy := a.Cfg.Policy()
	fleet := cmdutil.TeamNumbers(srcs, time.Now().Add(-stats.Window), cmdutil.TrailEvery)
	shared := a.ReadHub(policy, cmdutil.DashboardEvery, srcs...)
	shared.Observe = fleet.Tracker.Observe
	reader := hub.New(relay.HubConfig(shared))
	var secret [32]byte
	if _, err := rand.Read(secret[:]); err != nil {
		return model.Wrap(model.CodeAPIError, "ssh", "", err)
	}
	token := mesh.Token(hex.EncodeToString(secret[:]))
	srv := relay.NewServer(token)
	relayLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return model.Wrap(model.CodeAPIError, "ssh", "", err)
	}
	var running sync.WaitGroup
	defer running.Wait() // the reader stops before its sources close
	defer cancel()
	running.Go(func() { reader.Run(ctx) })
	running.Go(func() { srv.Run(ctx, reader) })
	web := webserver.New(srv.Handler(), webserver.Limits{PerClient: 256, Write: 2 * time.Minute})
	running.Go(func() { _ = web.Serve(ctx, relayLn) })
	relayAddr := "http://" + relayLn.Addr().String()
	// One health poller for every session, as there is one reader: nodes
	// do not travel through the relay, so the sessions read the poller.
	reg, err := a.Registry()
	if err != nil {
		return err
	}
	var nodes func() []model.Node
	if reg != nil {
		p, err := a.Poller(reg, "ssh")
		if err != nil {
			return err
		}
		running.Go(func() { _ = p.Run(ctx) })
		nodes = p.Nodes
	}

	history, err := sources.ReadJournal(journalPath)
	if err != nil {
		return model.Wrap(model.CodeMisconfigured, "audit", "", err)
	}
	colors := map[string]string{}
	for _, s := range a.Cfg.Sources {
		if s.Color != "" {
			colors[s.Name] = s.Color
		}
	}
	newModel := func(ctx context.Context, s *sshdoor.Session) (tea.Model, error) {
		feeds := make([]hub.Feed, len(srcs))
		for i, src := range srcs {
			rs, err := relay.Wrap(src, relayAddr, token, "")
			if err != nil {
				return nil, err
			}
			feeds[i] = hub.Feed{Source: rs.Via("through the SSH server"), Every: cmdutil.DashboardEvery}
		}
		desk := &sources.Desk{Actor: s.Person, Door: model.DoorSSH, KeyFingerprint: s.Fingerprint, Journal: journal,
			ReadOnly:    func(src string) bool { return s.ReadOnly() || a.Cfg.ReadOnlyFor(src) },
			SelfApprove: a.Cfg.Review.SelfApprove, Grace: policy.Grace}
		h := hub.New(hub.Config{Policy: policy, Window: a.Cfg.HistoryWindow, Feeds: feeds, Desk: desk, Nodes: nodes, Holders: a.Cfg.Mesh.Holders})
		go h.Run(ctx)
		th := theme.Options{Mode: theme.Auto, SourceColors: colors}
		for _, kv := range s.Environ {
			if v, ok := strings.CutPrefix(kv, "NO_COLOR="); ok && v != "" {
				th.NoColor = true
			}
		}
		return tui.New(tui.Options{
			Hub:      h,
			Stats:    fleet.Report,
			ReadOnly: s.ReadOnly() || a.Cfg.ReadOnly,
			// The session's terminal, not the server's: NO_COLOR comes
			// from the client, and the colours its TERM allows from the
			// program's profile (sshdoor).
			Styles:  theme.New(th),
			Theme:   th,
			Keys:    a.Cfg.Keys,
			Filters: a.Cfg.Filters,
			// SaveFilter stays nil: a remote person does not write the
			// server's configuration file.
			Journal: history,
			// Notifications go to the person's terminal, never notify-send
			// on the server.
			Alerts: tui.AlertOptions{Bell: a.Cfg.Alerts.Bell, Desktop: a.Cfg.Alerts.Desktop, Remote: true},
		})
	}
	log := cmdutil.NewLog(a.Stderr, slog.LevelInfo)
	door, err := sshdoor.New(sshdoor.Config{Listen: listen, KeysFile: keysFile, HostKeyPath: hostKey,
		MaxSessions: sc.MaxSessions, MaxAuthPerAddr: sc.MaxAuth, IdleTimeout: sc.IdleTimeout}, newModel, log)
	if err != nil {
		return model.Wrap(model.CodeMisconfigured, "ssh", "", err)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return model.Errorf(model.CodeMisconfigured, "ssh", "", "listen on %s: %v", listen, err)
	}
	names := make([]string, len(srcs))
	for i, s := range srcs {
		names[i] = s.Name()
	}
	if err := a.Out().JSON(map[string]any{"ok": true, "ssh": ln.Addr().String(), "host_key": door.HostKeyFingerprint(), "sources": names}); err != nil {
		ln.Close()
		return err
	}
	cmdutil.HUPReloads.Store(true)
	defer cmdutil.HUPReloads.Store(false)
	if err := door.Serve(ctx, ln); err != nil && ctx.Err() == nil {
		return model.Wrap(model.CodeAPIError, "ssh", "", err)
	}
	return nil
}
