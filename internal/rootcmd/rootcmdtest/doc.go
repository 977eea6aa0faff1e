// Package rootcmdtest is what the command line's tests share: CLI runs
// claimdeck in-process against one configuration file (NewCLI, Run), and
// the backends, tokens and MCP calls the tests of internal/rootcmd and
// internal/e2e both use.
package rootcmdtest
