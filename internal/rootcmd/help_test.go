package rootcmd_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/internal/ntask"
	"github.com/claimdeck/claimdeck/internal/rootcmd"
)

func roots() map[string]func() *cobra.Command {
	return map[string]func() *cobra.Command{
		"claimdeck": func() *cobra.Command {
			return rootcmd.RootCommand(&cmdutil.Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard})
		},
		ntask.Name: func() *cobra.Command {
			return (&ntask.Ntask{Env: &cmdutil.Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard}}).Root()
		},
	}
}

// TestEveryCommandHasExamplesThatParse walks both command trees: every
// command shows an Examples block in its help, and every example line that
// runs the program names a real command with flags that parse.
func TestEveryCommandHasExamplesThatParse(t *testing.T) {
	t.Parallel()
	for prog, build := range roots() {
		root := build()
		root.InitDefaultHelpCmd()
		n := 0
		cmdutil.Walk(root, func(c *cobra.Command) {
			if c.Hidden || strings.HasPrefix(c.Name(), "__") {
				return
			}
			n++
			if strings.TrimSpace(c.Example) == "" {
				t.Errorf("%s has no examples", c.CommandPath())
				return
			}
			var help bytes.Buffer
			c.SetOut(&help)
			_ = c.Help()
			if !strings.Contains(help.String(), "Examples:") {
				t.Errorf("%s --help shows no Examples block", c.CommandPath())
			}
			for _, line := range strings.Split(c.Example, "\n") {
				words := shellWords(strings.TrimSpace(line))
				if len(words) == 0 || words[0] != prog {
					continue
				}
				fresh := build()
				fresh.InitDefaultVersionFlag()
				found, rest, err := fresh.Find(words[1:])
				if err != nil {
					t.Errorf("%s example %q: %v", c.CommandPath(), line, err)
					continue
				}
				if err := found.ParseFlags(rest); err != nil {
					t.Errorf("%s example %q: %v", c.CommandPath(), line, err)
				}
			}
		})
		if n < 15 {
			t.Errorf("%s: only %d commands walked", prog, n)
		}
	}
}

// A mistyped sub-command of a command that only groups others is refused
// with a suggestion and a non-zero exit, not answered with help and 0.
func TestUnknownSubcommandsExitNonZeroWithASuggestion(t *testing.T) {
	// Not parallel: newCLI sets the test's state directory in the environment.
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"config", "shwo"}, "did you mean show"},
		{[]string{"node", "srve"}, "did you mean serve"},
		{[]string{"config", "frobnicate"}, "config --help"},
		{[]string{"cliam"}, "claim"},
	} {
		r := c.Run(3, tc.args...)
		if r.Error.Code != "MISCONFIGURED" || !strings.Contains(r.Error.Message, tc.want) {
			t.Errorf("claimdeck %v: %+v, want MISCONFIGURED saying %q", tc.args, r.Error, tc.want)
		}
	}
	var out bytes.Buffer
	if code := rootcmd.Run(context.Background(), []string{"--config", c.Conf, "config"}, nil, &out, &out); code != 0 || !strings.Contains(out.String(), "Available Commands") {
		t.Errorf("claimdeck config alone: exit %d, want its help:\n%s", code, out.String())
	}
}

// complete runs cobra's completion request for args and returns the
// offered values, without their descriptions.
func complete(t *testing.T, conf string, args ...string) []string {
	t.Helper()
	var out bytes.Buffer
	rootcmd.Run(context.Background(), append([]string{cobra.ShellCompRequestCmd, "--config", conf}, args...), nil, &out, io.Discard)
	var vals []string
	for _, line := range strings.Split(out.String(), "\n") {
		if line == "" || strings.HasPrefix(line, ":") {
			continue
		}
		v, _, _ := strings.Cut(line, "\t")
		vals = append(vals, v)
	}
	return vals
}

func TestFlagsWithFixedValuesTasksAndSourcesComplete(t *testing.T) {
	// Not parallel: newCLI sets the test's state directory in the environment.
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource+"  - name: locks\n    kind: lockdir\n    path: DIR/.locks\n")
	id := c.Run(0, "--source", "local", "create", "--title", "complete me").Task.PageID
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"list", "-o", ""}, []string{"json", "table"}},
		{[]string{"list", "--status", ""}, []string{"READY", "IN_PROGRESS", "BLOCKED", "REVIEW", "DONE", "FAILED", "CANCELED"}},
		{[]string{"create", "--class", ""}, []string{"EXPEDITE", "FIXED_DATE", "STANDARD", "INTANGIBLE"}},
		{[]string{"create", "--priority", ""}, []string{"critical", "high", "medium", "low"}},
		{[]string{"handoff", "--priority", ""}, []string{"normal", "urgent", "critical"}},
		{[]string{"handoff", "--to", ""}, []string{"ANY"}},
		{[]string{"copy", "--to", ""}, []string{"local", "locks"}},
		{[]string{"list", "--source", ""}, []string{"local", "locks"}},
		{[]string{"demo", "--backend", ""}, []string{"sqlite", "lockdir", "notion"}},
		{[]string{"--source", "local", "get", "--task", ""}, []string{id}},
		{[]string{"release", "--task", ""}, []string{id}},
	} {
		got := complete(t, c.Conf, tc.args...)
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("complete %v = %q, want %q", tc.args, got, tc.want)
		}
	}
}

// The systemd units in docs/ops run commands and flags that exist.
func TestSystemdUnitsRunRealCommands(t *testing.T) {
	t.Parallel()
	units, err := filepath.Glob("../../docs/ops/systemd/*.service")
	if err != nil || len(units) < 3 {
		t.Fatalf("units: %v %v", units, err)
	}
	for _, u := range units {
		body, err := os.ReadFile(u)
		if err != nil {
			t.Fatal(err)
		}
		var exec string
		for _, line := range strings.Split(string(body), "\n") {
			if v, ok := strings.CutPrefix(line, "ExecStart="); ok {
				exec = v
			}
		}
		words := shellWords(exec)
		if len(words) < 2 || filepath.Base(words[0]) != "claimdeck" {
			t.Errorf("%s: ExecStart %q does not run claimdeck", u, exec)
			continue
		}
		root := roots()["claimdeck"]()
		found, rest, err := root.Find(words[1:])
		if err == nil {
			err = found.ParseFlags(rest)
		}
		if err != nil || found == root {
			t.Errorf("%s: %q: %v", u, exec, err)
		}
	}
}
