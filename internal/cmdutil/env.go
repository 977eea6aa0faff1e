package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/claimdeck/claimdeck/model"
)

// Env carries the global flags and what they load.
type Env struct {
	ConfigFile string
	SourceName string
	Output     string
	readOnly   bool
	debug      bool
	// metricsListen is the dashboard's --metrics-listen; it wins over the config.
	MetricsListen string
	CreateFlag    bool
	// create lets this command make a missing SQLite file or lock directory.
	Create bool

	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Cfg            *Config
	// noCompletions leaves the flags' completions out of the command
	// tree: the command line asks for none.
	NoCompletions bool
	// limit is list's --limit: -1 unset, 0 all.
	limit int
	// background holds what a command left running until its context
	// ends (the dashboard's health poller): wait on it before the files
	// it writes go away.
	Background sync.WaitGroup
}

func (a *Env) Out() Printer {
	p := Printer{W: a.Stdout, errw: a.Stderr, table: a.Output == "table", limit: a.limit}
	if f, ok := a.Stdout.(*os.File); ok && p.table && term.IsTerminal(int(f.Fd())) {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil {
			p.Width = w
		}
	}
	if a.limit < 0 { // list without --limit: a screenful of a table, all of JSON
		p.limit = 0
		if p.table {
			p.limit = DefaultTableLimit
		}
	}
	return p
}

// defaultTableLimit is how many tasks `list -o table` shows unless
// --limit says otherwise: a 20,000-task queue is not read in a terminal.
const DefaultTableLimit = 100

// execute runs one command line of root and returns the exit status: 0,
// the status a command that printed its answer ended with, or what fail
// prints and returns for the error.
func Execute(ctx context.Context, root *cobra.Command, args []string, stdin io.Reader, stdout, stderr io.Writer, fail func(error) int) int {
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var done ExitStatus
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
type ExitStatus int

func (e ExitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// newRoot is the root command: the global flags every door reads and
// the configuration they load before any command runs. The doors add
// their commands to it; finishRoot completes it.
func (a *Env) NewRoot(themeName *string) *cobra.Command {
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
			if a.Output != "json" && a.Output != "table" {
				return model.Errorf(model.CodeMisconfigured, "", "", "--output %q: want json or table", a.Output)
			}
			if err := a.checkOutput(cmd); err != nil {
				return err
			}
			log, err := a.setupLog()
			if err != nil {
				return err
			}
			cmd.SetContext(withLog(cmd.Context(), log))
			cfg, err := LoadConfig(a.ConfigFile)
			if err != nil {
				return err
			}
			if err := a.personalOutput(cmd, cfg); err != nil {
				return err
			}
			log.Debug("configuration loaded", "file", cfg.File, "sources", len(cfg.Sources), "implicit", cfg.Implicit, "output", a.Output)
			if w := cfg.inlineSecretsWarning(); w != "" {
				fmt.Fprintln(a.Stderr, "warning:", w)
			}
			if a.readOnly {
				cfg.ReadOnly = true
			}
			if a.MetricsListen != "" {
				cfg.MetricsListen = a.MetricsListen
			}
			a.Cfg = cfg
			// The embedded default queue is made by the first command that
			// writes to it; a configured path only by --create or migrate.
			a.Create = a.CreateFlag || (cfg.Implicit && !readCommands[cmd.Name()])
			return nil
		},
	}
	f := root.PersistentFlags()
	f.StringVar(&a.ConfigFile, "config", "", "configuration file (default "+ConfigPath()+")")
	f.StringVar(&a.SourceName, "source", "", "the configured source to act on (default: $CLAIMDECK_DEFAULT_SOURCE, else default_source, else the only one)")
	f.StringVarP(&a.Output, "output", "o", "json", "output format: json or table")
	f.BoolVar(&a.readOnly, "read-only", false, "refuse every write")
	f.BoolVar(&a.debug, "debug", false, "log what claimdeck does to stderr (also CLAIMDECK_LOG=debug); secrets redacted")
	f.BoolVar(&a.CreateFlag, "create", false, "create a missing SQLite file or lock directory (otherwise a missing one is MISCONFIGURED)")
	root.SetFlagErrorFunc(flagError)
	root.Flags().StringVar(themeName, "theme", "auto", "dashboard colours: auto, light or dark (NO_COLOR is respected)")
	root.Flags().StringVar(&a.MetricsListen, "metrics-listen", "", "also serve Prometheus metrics at ADDR/metrics (metrics_listen in config)")
	root.AddGroup(
		&cobra.Group{ID: "dashboard", Title: "Dashboard (claimdeck alone opens it over the configured sources):"},
		&cobra.Group{ID: "agent", Title: "Agent commands (the ntask contract):"},
		&cobra.Group{ID: "operator", Title: "Operator overrides (audited, refused in read-only mode):"},
		&cobra.Group{ID: "mesh", Title: "Mesh (seed 001 nodes, stale sweep, escalation):"},
		&cobra.Group{ID: "admin", Title: "Setup and diagnosis:"},
	)
	return root
}

// finishRoot completes root once the doors added their commands: the
// commands at jsonOnlyPaths answer in JSON only, the completion command,
// and the help every command shows.
func (a *Env) FinishRoot(root *cobra.Command, jsonOnlyPaths ...string) {
	markJSONOnly(root, jsonOnlyPaths...)
	root.SetHelpCommandGroupID("admin")
	root.SetCompletionCommandGroupID("admin")
	root.CompletionOptions.HiddenDefaultCmd = false
	root.SetOut(a.Stdout) // cobra's completion commands keep the writer they are built with
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
	a.Decorate(root)
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

// Doors adds the commands of one or more doors to root, the shared root
// of NewRoot (theme is its --theme), and returns the paths of those that
// answer in JSON only.
type Doors func(env *Env, root *cobra.Command, theme *string) (jsonOnly []string)

// Root is the root command with the commands of doors, finished.
func (a *Env) Root(doors Doors) *cobra.Command {
	var theme string
	root := a.NewRoot(&theme)
	a.FinishRoot(root, doors(a, root, &theme)...)
	return root
}

// Run executes one command line of the commands of doors and returns the
// exit status of the ntask contract: 0 ok, 2 CONFLICT, 3 MISCONFIGURED,
// 4 LOST_LOCK, 5 API_ERROR. The program runs every door with it; a
// door's tests run the door's own commands.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, doors Doors) int {
	env := &Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, NoCompletions: !CompletionRequest(args)}
	// env.Out() is read after the command ran: --output is parsed by then.
	return Execute(ctx, env.Root(doors), args, stdin, stdout, stderr, func(err error) int { return env.Out().Fail(err) })
}
