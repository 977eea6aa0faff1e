// Package cli is the claimdeck command line: the agent commands of the
// ntask contract, the operator overrides and review, and the setup and
// diagnosis commands (migrate, copy, config, doctor, history, stats,
// sweep, node watch, version). Its commands are methods of app, the
// shared environment of cmdutil as this door sees it.
package cli

import (
	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
)

type app struct{ *cmdutil.Env }

// Agent is the agent commands (the ntask contract) and history.
func Agent(env *cmdutil.Env) []*cobra.Command {
	a := &app{env}
	return append(a.AgentCommands(), a.historyCommand())
}

// Operator is the operator overrides and the review commands.
func Operator(env *cmdutil.Env) []*cobra.Command {
	a := &app{env}
	return append(a.operatorCommands(), a.reviewCommands()...)
}

// Admin is the setup and diagnosis commands.
func Admin(env *cmdutil.Env) []*cobra.Command {
	a := &app{env}
	return []*cobra.Command{a.doctorCommand(), a.migrateCommand(), a.copyCommand(), a.moveCommand(), a.configCommand(), a.versionCommand(), a.notionEmulatorCommand()}
}

// Stats is `claimdeck stats`.
func Stats(env *cmdutil.Env) *cobra.Command { return (&app{env}).statsCommand() }

// Sweep is `claimdeck sweep`.
func Sweep(env *cmdutil.Env) *cobra.Command { return (&app{env}).sweepCommand() }

// NodeWatch is `claimdeck node watch`.
func NodeWatch(env *cmdutil.Env) *cobra.Command { return (&app{env}).nodeWatchCommand() }
