package cmdutil

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/claimdeck/claimdeck/model"
)

// This file teaches: the examples of every command, the completion of every
// flag with a fixed set of values (and of task ids and source names), and
// the refusal of an unknown sub-command. It is applied to the finished
// command trees by walking them (decorate), keyed by command path and flag
// name, so a command's definition stays about what the command does.

// examples by command path. Each line starting with the program's name is
// parsed by TestEveryCommandHasExamplesThatParse against the tree.
var examples = map[string]string{
	"claimdeck": `  claimdeck                                  # the dashboard over the configured sources
  claimdeck --source team-board --theme dark
  claimdeck --enforce --metrics-listen 127.0.0.1:9464`,
	"claimdeck demo": `  claimdeck demo                             # simulated agents on a throwaway queue
  claimdeck demo --backend lockdir --speed 120 --seed 7`,
	"claimdeck stats": `  claimdeck stats
  claimdeck stats -o table --source governance`,
	"claimdeck metrics": `  claimdeck metrics --listen 127.0.0.1:9464   # then scrape http://127.0.0.1:9464/metrics`,
	"claimdeck ssh": `  claimdeck ssh --listen 127.0.0.1:2222 --keys ~/.config/claimdeck/ssh-keys   # then: ssh -t -p 2222 127.0.0.1
  kill -HUP $(pidof claimdeck)   # read the keys file again; no session drops`,
	"claimdeck relay": `  CLAIMDECK_RELAY_TOKEN=$(openssl rand -hex 32) claimdeck relay --listen 127.0.0.1:7480
  claimdeck relay --listen 127.0.0.1:7480 --token-env TEAM_RELAY_TOKEN   # dashboards: relay: http://127.0.0.1:7480
  claimdeck relay --listen 127.0.0.1:7480 --max-full 128 --stall 30s   # a bigger fleet, slower links`,
	"claimdeck next": `  claimdeck next --agent-name SANDMAN         # "task": null when the queue is empty`,
	"claimdeck claim": `  claimdeck claim --agent-name SANDMAN --run-id run-42          # the next eligible task
  claimdeck claim --task 42 --agent-name SANDMAN --lease 30m    # a given task, a longer lease`,
	"claimdeck heartbeat": `  claimdeck heartbeat --task 42 --lock-token "$TOKEN"
  claimdeck heartbeat --task 42 --lock-token-file ~/.run/token --run-id run-42`,
	"claimdeck complete": `  claimdeck complete --task 42 --lock-token "$TOKEN" --artifacts pr/17
  claimdeck complete --task 42                   # your own HUMAN claim: no token needed`,
	"claimdeck block":  `  claimdeck block --task 42 --lock-token "$TOKEN" --reason "needs creds" --unblock-action "ask ops" --next-check-at 2026-02-01T09:00:00Z`,
	"claimdeck review": `  claimdeck review --task 42 --lock-token "$TOKEN" --artifacts pr/17`,
	"claimdeck fail":   `  claimdeck fail --task 42 --lock-token "$TOKEN" --reason "tests cannot pass on this branch"`,
	"claimdeck cancel": `  claimdeck cancel --task 42 --lock-token "$TOKEN" --reason "duplicate of 41"
  claimdeck cancel --force --task 42 --reason "not needed" --yes       # anyone's task (operator)
  claimdeck cancel --force --filter 'state:queued source:old' --reason cleanup --dry-run`,
	"claimdeck comment": `  claimdeck comment --task 42 "lock was inconsistent; took it anyway"
  claimdeck comment --task 42 --body "waiting on review"`,
	"claimdeck get": `  claimdeck get --task 42
  claimdeck get --task 42 -o table`,
	"claimdeck list": `  claimdeck list
  claimdeck list --status READY -o table
  claimdeck list --filter 'node:ORACLE_LOCAL level>=stale'`,
	"claimdeck create": `  claimdeck create --title "Design VPC module" --priority high --class EXPEDITE
  claimdeck create --title "Write tests" --parent 41`,
	"claimdeck update": `  claimdeck update --task 42 --priority critical
  claimdeck update --task 42 --lock-token "$TOKEN" --title "Design the VPC module"`,
	"claimdeck history": `  claimdeck history --task 42
  claimdeck history --task 42 -o table`,
	"claimdeck mcp": `  claimdeck mcp                                # MCP on stdio, for a local agent
  claimdeck mcp --source team-board
  claimdeck mcp --http 127.0.0.1:8765          # streamable HTTP, bearer tokens per client`,
	"claimdeck takeover": `  claimdeck takeover --task 42 --reason "finishing it myself"
  claimdeck takeover --task 42 --expect-token 3669b0a --yes`,
	"claimdeck release": `  claimdeck release --task 42 --yes                                # your own claim
  claimdeck release --force --task 42 --reason "agent wedged"
  claimdeck release --force --filter 'node:ORACLE_LOCAL level>=stale' --reason "node lost" --dry-run`,
	"claimdeck handoff": `  claimdeck handoff --task 42 --to ORACLE --reason "needs the GPU node"
  claimdeck handoff --task 42 --to ANY --priority urgent --for 30m --yes`,
	"claimdeck approve": `  claimdeck approve --task 42 --reason "looks good"
  claimdeck approve --filter 'state:review source:team-board' --dry-run`,
	"claimdeck rework": `  claimdeck rework --task 42 --reason "keep the comments"`,
	"claimdeck unblock": `  claimdeck unblock --task 42 --reason "credentials arrived"
  claimdeck unblock --filter 'status:blocked' --dry-run`,
	"claimdeck doctor": `  claimdeck doctor
  claimdeck doctor --source governance -o table`,
	"claimdeck migrate": `  claimdeck migrate --source governance --dry-run   # print the SQL, change nothing
  claimdeck migrate --source governance
  claimdeck migrate --source governance --create    # make seed 003's table first`,
	"claimdeck copy": `  claimdeck copy --from local --to governance --dry-run
  claimdeck copy --from local --to governance`,
	"claimdeck move": `  claimdeck move --from local --to governance --dry-run   # what would move; writes nothing
  claimdeck move --from local --to governance --yes
  claimdeck move --undo --from local --to governance --yes`,
	"claimdeck config": `  claimdeck config show
  claimdeck config path`,
	"claimdeck config show": `  claimdeck config show                        # secrets redacted
  claimdeck config show --config ./team.yaml`,
	"claimdeck config path": `  claimdeck config path`,
	"claimdeck version": `  claimdeck version
  claimdeck --version`,
	"claimdeck notion-emulator": `  claimdeck notion-emulator --listen 127.0.0.1:8787
  claimdeck notion-emulator --listen 127.0.0.1:8787 --fault-rate 0.1`,
	"claimdeck node": `  claimdeck node serve --name SANDMAN --listen 127.0.0.1:18789`,
	"claimdeck node watch": `  claimdeck node watch                        # ping every node, record DOWN/UP for doctor, list and sweep
  claimdeck node watch --rounds 3`,
	"claimdeck node serve": `  claimdeck node serve --name SANDMAN --listen 127.0.0.1:18789
  claimdeck node serve --name SANDMAN --token-env NODE_TOKEN`,
	"claimdeck sweep": `  claimdeck sweep --dry-run
  claimdeck sweep --node OPS`,
	"claimdeck completion": `  source <(claimdeck completion bash)
  claimdeck completion zsh > "${fpath[1]}/_claimdeck"
  claimdeck completion fish > ~/.config/fish/completions/claimdeck.fish`,
	"claimdeck completion bash":       `  source <(claimdeck completion bash)`,
	"claimdeck completion zsh":        `  claimdeck completion zsh > "${fpath[1]}/_claimdeck"`,
	"claimdeck completion fish":       `  claimdeck completion fish > ~/.config/fish/completions/claimdeck.fish`,
	"claimdeck completion powershell": `  claimdeck completion powershell | Out-String | Invoke-Expression`,
	"claimdeck help": `  claimdeck help claim
  claimdeck help config show`,

	"ntask": `  ntask doctor && ntask next
  ntask claim TASK-42`,
	"ntask doctor":    `  ntask doctor`,
	"ntask next":      `  ntask next                                   # exit 10 when nothing is ready`,
	"ntask claim":     `  ntask claim TASK-42 --lease-min 30`,
	"ntask heartbeat": `  ntask heartbeat TASK-42`,
	"ntask block":     `  ntask block TASK-42 --reason "needs creds" --unblock-action "ask ops"`,
	"ntask unblock":   `  ntask unblock TASK-42`,
	"ntask escalate":  `  ntask escalate TASK-42`,
	"ntask create": `  ntask create --title "Write tests" --priority 3 --class Expedite
  ntask create --title "Sub-step" --parent TASK-42 --status Ready --ac "tests pass"`,
	"ntask list":    `  ntask list --status Ready --limit 10`,
	"ntask get":     `  ntask get TASK-42`,
	"ntask comment": `  ntask comment TASK-42 --text "half done"`,
	"ntask review":  `  ntask review TASK-42 --summary "PR #17"`,
	"ntask approve": `  NOTION_AGENT_USER_ID=reviewer-1 ntask approve TASK-42 --summary "merged"`,
	"ntask rework":  `  NOTION_AGENT_USER_ID=reviewer-1 ntask rework TASK-42 --reason "keep the comments"`,
	"ntask cancel":  `  ntask cancel TASK-42 --reason "duplicate"`,
	"ntask update":  `  ntask update TASK-42 --priority 2 --class Standard`,
	"ntask version": `  ntask version`,
	"ntask reap": `  ntask reap --dry-run                         # what would go back to Ready
  ntask reap`,
	"ntask help": `  ntask help claim`,
}

// enumerations are the fixed values of flags, by program and flag name;
// a "program command/flag" key wins over "program flag".
var enumerations = map[string][]string{
	"claimdeck output":           {"json", "table"},
	"claimdeck status":           {"READY", "IN_PROGRESS", "BLOCKED", "REVIEW", "DONE", "FAILED", "CANCELED"},
	"claimdeck priority":         {"critical", "high", "medium", "low"},
	"claimdeck handoff/priority": {"normal", "urgent", "critical"},
	"claimdeck class":            {"EXPEDITE", "FIXED_DATE", "STANDARD", "INTANGIBLE"},
	"claimdeck theme":            {"auto", "light", "dark"},
	"claimdeck backend":          {"sqlite", "lockdir", "notion"},
	"ntask status":               {"Backlog", "Ready", "In Progress", "Blocked", "Review", "Done", "Canceled"},
	"ntask create/status":        {"Backlog", "Ready"},
	"ntask update/status":        {"Backlog", "Ready", "Blocked", "Canceled"},
	"ntask class":                {"Expedite", "Fixed Date", "Standard", "Intangible"},
	"ntask priority":             {"1", "2", "3"},
}

// sourceFlags complete the configured source names; taskFlags the task ids
// of the configured sources.
var (
	sourceFlags = []string{"source", "from", "to"}
	taskIDFlags = []string{"task", "page-id", "parent"}
)

// decorate applies the examples, the completions and the refusal of
// unknown sub-commands to root and every command under it. The flags'
// completions are left out of a command line that asks for none: they
// are most of the tree's building time, which every agent command pays.
func (a *Env) Decorate(root *cobra.Command) {
	prog := root.Name()
	Walk(root, func(c *cobra.Command) {
		if ex, ok := examples[c.CommandPath()]; ok && c.Example == "" {
			c.Example = ex
		}
		if c.HasSubCommands() && !c.Runnable() {
			refuseUnknown(c)
		}
		if a.NoCompletions {
			return
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			a.completeFlag(prog, c, f.Name)
		})
		if c == root {
			c.PersistentFlags().VisitAll(func(f *pflag.Flag) { a.completeFlag(prog, c, f.Name) })
		}
	})
	// cobra adds help and completion lazily; make them now so they are
	// decorated too.
	root.InitDefaultHelpCmd()
	for _, c := range root.Commands() {
		if c.Name() == "help" || c.Name() == "completion" {
			Walk(c, func(c *cobra.Command) {
				if ex, ok := examples[c.CommandPath()]; ok && c.Example == "" {
					c.Example = ex
				}
			})
		}
	}
}

// completionRequest reports whether args ask cobra for completions.
func CompletionRequest(args []string) bool {
	return slices.ContainsFunc(args, func(s string) bool {
		return s == cobra.ShellCompRequestCmd || s == cobra.ShellCompNoDescRequestCmd
	})
}

func Walk(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, sub := range c.Commands() {
		Walk(sub, fn)
	}
}

// refuseUnknown makes a command that only groups others refuse an unknown
// word with cobra's suggestions, instead of printing its help and exiting 0.
func refuseUnknown(c *cobra.Command) {
	c.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
		if cmd.SuggestionsMinimumDistance <= 0 {
			cmd.SuggestionsMinimumDistance = 2 // cobra's own default for the root
		}
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += "; did you mean " + strings.Join(s, " or ") + "?"
		} else {
			msg += "; run '" + cmd.CommandPath() + " --help' for its commands"
		}
		return model.Errorf(model.CodeMisconfigured, cmd.Name(), "", "%s", msg)
	}
	c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
}

// completeFlag registers the completion of one flag of c, if it has a
// fixed set of values or names a source or a task.
func (a *Env) completeFlag(prog string, c *cobra.Command, name string) {
	if _, exists := c.GetFlagCompletionFunc(name); exists {
		return
	}
	var fn cobra.CompletionFunc
	if vals, ok := enumerations[prog+" "+c.Name()+"/"+name]; ok {
		fn = cobra.FixedCompletions(vals, cobra.ShellCompDirectiveNoFileComp)
	} else if vals, ok := enumerations[prog+" "+name]; ok {
		fn = cobra.FixedCompletions(vals, cobra.ShellCompDirectiveNoFileComp)
	} else if slices.Contains(sourceFlags, name) && !(c.Name() == "handoff" && name == "to") {
		fn = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return a.sourceNames(), cobra.ShellCompDirectiveNoFileComp
		}
	} else if slices.Contains(taskIDFlags, name) {
		fn = a.completeTasks
	} else if c.Name() == "handoff" && name == "to" {
		fn = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return a.agentNames(), cobra.ShellCompDirectiveNoFileComp
		}
	}
	if fn != nil {
		_ = c.RegisterFlagCompletionFunc(name, fn)
	}
}

// completionConfig loads the configuration for a completion, which runs
// no command hooks; nil when it does not load.
func (a *Env) completionConfig() *Config {
	if a.Cfg != nil {
		return a.Cfg
	}
	cfg, err := LoadConfig(a.ConfigFile)
	if err != nil {
		return nil
	}
	return cfg
}

func (a *Env) sourceNames() []string {
	cfg := a.completionConfig()
	if cfg == nil {
		return nil
	}
	names := make([]string, len(cfg.Sources))
	for i, s := range cfg.Sources {
		names[i] = s.Name
	}
	return names
}

// agentNames are the hand-off targets: ANY, and the agents and nodes the
// mesh configuration names.
func (a *Env) agentNames() []string {
	names := []string{"ANY"}
	if cfg := a.completionConfig(); cfg != nil {
		for agent, node := range cfg.Mesh.Holders {
			names = append(names, agent, node)
		}
	}
	sort.Strings(names[1:])
	return slices.Compact(names)
}

// completeTasks offers the ids of the tasks of every configured source (or
// --source), with their titles, read within two seconds; it never creates
// a missing queue.
func (a *Env) completeTasks(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
	cfg := a.completionConfig()
	if cfg == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	a.Cfg, a.Create = cfg, false
	ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Second)
	defer cancel()
	_, all, closeSrcs, err := a.readAll(ctx)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer closeSrcs()
	model.SortPullOrder(all)
	var out []string
	for _, t := range all {
		if strings.HasPrefix(t.ID, prefix) && !t.State.Final() {
			out = append(out, t.ID+"\t"+oneLine(t.Title))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
