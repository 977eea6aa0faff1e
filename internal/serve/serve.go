// Package serve is claimdeck's long-running servers: the relay, `node
// serve` (a mesh node's endpoint) and the Prometheus metrics server.
package serve

import (
	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
)

type app struct{ *cmdutil.Env }

// Relay is `claimdeck relay`.
func Relay(env *cmdutil.Env) *cobra.Command { return (&app{env}).relayCommand() }

// Metrics is `claimdeck metrics`.
func Metrics(env *cmdutil.Env) *cobra.Command { return (&app{env}).metricsCommand() }

// NodeServe is `claimdeck node serve`.
func NodeServe(env *cmdutil.Env) *cobra.Command { return (&app{env}).nodeServeCommand() }
