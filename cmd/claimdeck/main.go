// Command claimdeck is the control room for multi-agent task queues: the
// dashboard, the ntask-compatible agent commands and the operator
// overrides, over every configured source. This package only wires
// configuration to constructors.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/claimdeck/claimdeck/model"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	watchSignals(cancel)
	runner := run
	if calledAsNtask(os.Args[0]) {
		runner = runNtask
	}
	code := runner(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	cancel()
	os.Exit(code)
}

// watchSignals: the first SIGINT, SIGTERM or SIGHUP (the terminal closed)
// cancels the command's context, so every wait that heeds it ends and the
// command says so, and what it made for itself (the demo's directory) is
// removed; the second ends the process at once, whatever it waits on (a
// terminal's answer, a driver that ignores its context), with the shell's
// status for that signal. A process started to outlive its terminal
// (nohup: SIGHUP ignored) keeps ignoring it; Notify would undo that.
func watchSignals(cancel context.CancelFunc) {
	sigs := make(chan os.Signal, 2)
	stops := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		stops = append(stops, syscall.SIGHUP)
	}
	signal.Notify(sigs, stops...)
	go func() {
		sig := <-sigs
		cancel()
		fmt.Fprintf(os.Stderr, "claimdeck: %v: stopping; %v again stops at once\n", sig, sig)
		sig = <-sigs
		status := 130
		switch sig {
		case syscall.SIGTERM:
			status = 143
		case syscall.SIGHUP:
			status = 129
		}
		os.Exit(status)
	}()
}

// app carries the global flags and what they load.
type app struct {
	configFile string
	sourceName string
	output     string
	readOnly   bool
	debug      bool
	// metricsListen is the dashboard's --metrics-listen; it wins over the config.
	metricsListen string
	createFlag    bool
	// create lets this command make a missing SQLite file or lock directory.
	create bool

	stdin          io.Reader
	stdout, stderr io.Writer
	cfg            *Config
	// noCompletions leaves the flags' completions out of the command
	// tree: the command line asks for none.
	noCompletions bool
	// limit is list's --limit: -1 unset, 0 all.
	limit int
	// background holds what a command left running until its context
	// ends (the dashboard's health poller): wait on it before the files
	// it writes go away.
	background sync.WaitGroup
}

func (a *app) out() printer {
	p := printer{w: a.stdout, errw: a.stderr, table: a.output == "table", limit: a.limit}
	if f, ok := a.stdout.(*os.File); ok && p.table && term.IsTerminal(int(f.Fd())) {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil {
			p.width = w
		}
	}
	if a.limit < 0 { // list without --limit: a screenful of a table, all of JSON
		p.limit = 0
		if p.table {
			p.limit = defaultTableLimit
		}
	}
	return p
}

// defaultTableLimit is how many tasks `list -o table` shows unless
// --limit says otherwise: a 20,000-task queue is not read in a terminal.
const defaultTableLimit = 100

// run executes one command line and returns the exit status of the ntask
// contract: 0 ok, 2 CONFLICT, 3 MISCONFIGURED, 4 LOST_LOCK, 5 API_ERROR.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == ntaskName {
		return runNtask(ctx, args[1:], stdin, stdout, stderr)
	}
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, noCompletions: !completionRequest(args)}
	// a.out() is read after the command ran: --output is parsed by then.
	return execute(ctx, a.rootCommand(), args, stdin, stdout, stderr, func(err error) int { return a.out().fail(err) })
}

// execute runs one command line of root and returns the exit status: 0,
// the status a command that printed its answer ended with, or what fail
// prints and returns for the error.
func execute(ctx context.Context, root *cobra.Command, args []string, stdin io.Reader, stdout, stderr io.Writer, fail func(error) int) int {
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var done exitStatus
	if errors.As(err, &done) {
		return int(done)
	}
	var me *model.Error
	if !errors.As(err, &me) {
		// cobra's own errors: unknown commands and flags, bad flag values.
		err = model.Errorf(model.CodeMisconfigured, "", "", "%v", err)
	}
	return fail(err)
}

// exitStatus ends a command that has already printed its result.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "claimdeck",
		Short: "A control room for multi-agent task queues",
		Long: `claimdeck watches and steers the task queues AI agents claim work from —
SQLite or PostgreSQL tables, lock-file directories, Notion databases — and
gives agents the ntask command line (next, claim, heartbeat, complete, …).

Output is JSON on stdout ({"ok": true, …} or {"ok": false, "error": {…}});
--output table is for people. Exit status: 0 ok, 2 CONFLICT,
3 MISCONFIGURED, 4 LOST_LOCK, 5 API_ERROR.`,
		Version:       model.Build().String(),
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if isCompletion(cmd) {
				return nil // shell completion scripts need no configuration
			}
			if a.output != "json" && a.output != "table" {
				return model.Errorf(model.CodeMisconfigured, "", "", "--output %q: want json or table", a.output)
			}
			if err := a.checkOutput(cmd); err != nil {
				return err
			}
			log, err := a.setupLog()
			if err != nil {
				return err
			}
			cmd.SetContext(withLog(cmd.Context(), log))
			cfg, err := loadConfig(a.configFile)
			if err != nil {
				return err
			}
			if err := a.personalOutput(cmd, cfg); err != nil {
				return err
			}
			log.Debug("configuration loaded", "file", cfg.file, "sources", len(cfg.Sources), "implicit", cfg.implicit, "output", a.output)
			if w := cfg.inlineSecretsWarning(); w != "" {
				fmt.Fprintln(a.stderr, "warning:", w)
			}
			if a.readOnly {
				cfg.ReadOnly = true
			}
			if a.metricsListen != "" {
				cfg.MetricsListen = a.metricsListen
			}
			a.cfg = cfg
			// The embedded default queue is made by the first command that
			// writes to it; a configured path only by --create or migrate.
			a.create = a.createFlag || (cfg.implicit && !readCommands[cmd.Name()])
			return nil
		},
	}
	f := root.PersistentFlags()
	f.StringVar(&a.configFile, "config", "", "configuration file (default "+configPath()+")")
	f.StringVar(&a.sourceName, "source", "", "the configured source to act on (default: the only one)")
	f.StringVarP(&a.output, "output", "o", "json", "output format: json or table")
	f.BoolVar(&a.readOnly, "read-only", false, "refuse every write")
	f.BoolVar(&a.debug, "debug", false, "log what claimdeck does to stderr (also CLAIMDECK_LOG=debug); secrets redacted")
	f.BoolVar(&a.createFlag, "create", false, "create a missing SQLite file or lock directory (otherwise a missing one is MISCONFIGURED)")
	root.SetFlagErrorFunc(flagError)
	var themeName string
	root.Flags().StringVar(&themeName, "theme", "auto", "dashboard colours: auto, light or dark (NO_COLOR is respected)")
	root.Flags().StringVar(&a.metricsListen, "metrics-listen", "", "also serve Prometheus metrics at ADDR/metrics (metrics_listen in config)")
	// No Args validator on the root: cobra's own check names an unknown
	// command with its "Did you mean" suggestions.
	root.RunE = a.dashboardRun(&themeName)
	demoCmd := a.demoCommand(&themeName)
	demoCmd.Flags().StringVar(&themeName, "theme", "auto", "dashboard colours: auto, light or dark")
	demoCmd.Flags().StringVar(&a.metricsListen, "metrics-listen", "", "also serve Prometheus metrics at ADDR/metrics")
	root.AddGroup(
		&cobra.Group{ID: "dashboard", Title: "Dashboard (claimdeck alone opens it over the configured sources):"},
		&cobra.Group{ID: "agent", Title: "Agent commands (the ntask contract):"},
		&cobra.Group{ID: "operator", Title: "Operator overrides (audited, refused in read-only mode):"},
		&cobra.Group{ID: "mesh", Title: "Mesh (seed 001 nodes, stale sweep, escalation):"},
		&cobra.Group{ID: "admin", Title: "Setup and diagnosis:"},
	)
	group := func(id string, cmds ...*cobra.Command) {
		for _, c := range cmds {
			c.GroupID = id
			root.AddCommand(c)
		}
	}
	group("dashboard", demoCmd, a.statsCommand(), a.metricsCommand(), a.relayCommand())
	group("agent", append(a.agentCommands(), a.historyCommand(), a.mcpCommand())...)
	group("operator", append(a.operatorCommands(), a.reviewCommands()...)...)
	group("admin", a.doctorCommand(), a.migrateCommand(), a.copyCommand(), a.configCommand(), a.versionCommand(), a.notionEmulatorCommand())
	a.addMesh(root, func(c *cobra.Command) { c.GroupID = "mesh" })
	markJSONOnly(root, "migrate", "copy", "config show", "config path", "version", "sweep", "node serve", "relay")
	root.SetHelpCommandGroupID("admin")
	root.SetCompletionCommandGroupID("admin")
	root.CompletionOptions.HiddenDefaultCmd = false
	root.SetOut(a.stdout) // cobra's completion commands keep the writer they are built with
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.Args = cobra.MaximumNArgs(1)
			c.RunE = func(cmd *cobra.Command, args []string) error {
				if len(args) == 0 {
					return cmd.Help()
				}
				return model.Errorf(model.CodeMisconfigured, "completion", "", "unknown shell %q: want bash, zsh, fish or powershell", args[0])
			}
		}
	}
	a.decorate(root)
	return root
}

// isCompletion reports whether cmd is cobra's completion command or one of
// its shells.
func isCompletion(cmd *cobra.Command) bool {
	for c := cmd; c != nil; c = c.Parent() {
		switch c.Name() {
		case "completion", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
			return true
		}
	}
	return false
}

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			b := model.Build()
			return a.out().json(map[string]any{"ok": true, "version": b.String(), "build": b})
		},
	}
}
