// Package rootcmd is the claimdeck program: it assembles the root command
// from the door packages (cli, mcpdoor, serve, dashboard) over the shared
// environment of cmdutil, dispatches `ntask` by its name, and turns
// signals into a cancelled context. cmd/claimdeck's main only calls Main;
// the tests that need the whole command tree live here, in-process.
package rootcmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	clidoor "github.com/claimdeck/claimdeck/internal/cli"
	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/internal/dashboard"
	"github.com/claimdeck/claimdeck/internal/mcpdoor"
	"github.com/claimdeck/claimdeck/internal/ntask"
	"github.com/claimdeck/claimdeck/internal/serve"
)

// Main runs the command line of this process (claimdeck, or ntask when
// called by that name) and exits with its status.
func Main() {
	ctx, cancel := context.WithCancel(context.Background())
	watchSignals(cancel)
	runner := Run
	if ntask.CalledAs(os.Args[0]) {
		runner = ntask.Run
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
	// A server that reloads on SIGHUP (claimdeck ssh: its keys file) is
	// not stopped by it: its own handler reloads.
	next := func() os.Signal {
		for sig := range sigs {
			if sig != syscall.SIGHUP || !cmdutil.HUPReloads.Load() {
				return sig
			}
		}
		return nil
	}
	go func() {
		sig := next()
		cancel()
		fmt.Fprintf(os.Stderr, "claimdeck: %v: stopping; %v again stops at once\n", sig, sig)
		sig = next()
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

// Run executes one command line of claimdeck (or, first word ntask, of
// ntask) and returns the exit status of the ntask contract: 0 ok, 2
// CONFLICT, 3 MISCONFIGURED, 4 LOST_LOCK, 5 API_ERROR.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == ntask.Name {
		return ntask.Run(ctx, args[1:], stdin, stdout, stderr)
	}
	return cmdutil.Run(ctx, args, stdin, stdout, stderr, doors)
}

// RootCommand is claimdeck's root command over env.
func RootCommand(env *cmdutil.Env) *cobra.Command { return env.Root(doors) }

// doors assembles the root command from the doors: each door package
// gives its commands over the shared environment env.
func doors(env *cmdutil.Env, root *cobra.Command, themeName *string) []string {
	// No Args validator on the root: cobra's own check names an unknown
	// command with its "Did you mean" suggestions.
	root.RunE = dashboard.Run(env, themeName)
	demoCmd := dashboard.Demo(env, themeName)
	demoCmd.Flags().StringVar(themeName, "theme", "auto", "dashboard colours: auto, light or dark")
	demoCmd.Flags().StringVar(&env.MetricsListen, "metrics-listen", "", "also serve Prometheus metrics at ADDR/metrics")
	group := func(id string, cmds ...*cobra.Command) {
		for _, c := range cmds {
			c.GroupID = id
			root.AddCommand(c)
		}
	}
	group("dashboard", demoCmd, dashboard.SSH(env), clidoor.Stats(env), serve.Metrics(env), serve.Relay(env))
	group("agent", append(clidoor.Agent(env), mcpdoor.Command(env))...)
	group("operator", clidoor.Operator(env)...)
	group("admin", clidoor.Admin(env)...)
	// The mesh: `sweep`, `node serve`, `node watch` and the dashboard's --enforce.
	root.Flags().Bool("enforce", false, "run the escalation sweep from the dashboard (mesh.enforce in config)")
	node := &cobra.Command{Use: "node", Short: "Run this host as a mesh node, or watch the mesh's health"}
	node.AddCommand(serve.NodeServe(env), clidoor.NodeWatch(env))
	group("mesh", clidoor.Sweep(env), node)
	return []string{"migrate", "copy", "move", "config show", "config path", "version", "sweep", "node serve", "relay", "ssh"}
}
