package rootcmd_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/internal/rootcmd"
	"github.com/claimdeck/claimdeck/model"
)

type published struct {
	Commands []struct {
		Name       string            `json:"name"`
		ExitCodes  map[string]string `json:"exit_codes"`
		Parameters struct {
			Properties map[string]struct {
				Type string `json:"type"`
			} `json:"properties"`
			Required []string `json:"required"`
		} `json:"parameters"`
		Examples []struct {
			Command  string         `json:"command"`
			Output   map[string]any `json:"example_output"`
			ExitCode int            `json:"exit_code"`
		} `json:"examples"`
	} `json:"commands"`
}

func loadPublished(t *testing.T) published {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "ntask", "commands.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p published
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Commands) < 14 {
		t.Fatalf("the published contract has %d commands; the copy is damaged", len(p.Commands))
	}
	return p
}

// notProduced are the example fields claimdeck deliberately does not print
// (docs/agents.md, "Where claimdeck differs"): it drives Notion through its API, not
// through the notion CLI, and reads tokens from its configuration.
var notProduced = map[string]bool{"doctor checks.notion_cli": true, "doctor checks.notion_token": true}

// shellWords splits an example command line as a shell would, as far as
// examples go: single and double quotes, and the end of the command at a
// comment, a pipe, a redirection or &&.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	quote := rune(0)
	for _, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case !inWord && (r == '#' || r == '|' || r == '>' || r == '&'):
			return words
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// TestPublishedContractExamples runs every example of the published
// commands.json, verbatim but for the page id and lock token it names,
// against every backend, and checks the exit status and that every field
// of the example output is printed (status words compared as the contract
// defines them).
func TestPublishedContractExamples(t *testing.T) {
	p := loadPublished(t)
	for _, b := range cmdtest.ContractBackends {
		t.Run(b.Name, func(t *testing.T) {
			c := cmdtest.NewCLI(t, b.Yaml(t))
			c.Kind = b.Name
			for _, cmd := range p.Commands {
				for i, ex := range cmd.Examples {
					t.Run(fmt.Sprintf("%s/%d", cmd.Name, i), func(t *testing.T) {
						args := shellWords(ex.Command)
						if args[0] != "ntask" {
							t.Fatalf("an example that is not an ntask command: %s", ex.Command)
						}
						args, real := cliPrepare(c, cmd.Name, args[1:])
						out, errOut, code := cmdtest.Raw(c, "", args...)
						if code != ex.ExitCode {
							t.Fatalf("claimdeck %v exited %d, the contract's example %d:\n%s%s", args, code, ex.ExitCode, out, errOut)
						}
						var got map[string]any
						if err := json.Unmarshal([]byte(out), &got); err != nil {
							t.Fatalf("claimdeck %v: not JSON: %v\n%s", args, err, out)
						}
						matchExample(t, cmd.Name, ex.Command, real, "", ex.Output, got)
					})
				}
			}
		})
	}
}

// prepare puts the backend in the state an example assumes and swaps the
// example's page id and lock token for real ones: a holder's command gets
// a task claimed for it; get and list a claimed task; the rest a free one.
func cliPrepare(c *cmdtest.CLI, name string, args []string) ([]string, map[string]string) {
	c.T.Helper()
	c.Run(0, "create", "--title", "contract example", "--priority", "1")
	ready := c.Run(0, "list", "--status", "READY").Tasks
	sort.Slice(ready, func(i, j int) bool { return ready[i].PageID < ready[j].PageID })
	page, token := ready[0].PageID, ""
	switch name {
	case "heartbeat", "complete", "block", "review", "cancel", "get", "list":
		token = c.Run(0, "claim", "--task", page, "--agent-name", "my-agent", "--run-id", "run-001").Task.LockToken
	}
	real := map[string]string{"abc-123": page, "uuid-lock-token": token}
	out := make([]string, len(args))
	for i, a := range args {
		if r, ok := real[a]; ok {
			a = r
		}
		out[i] = a
	}
	return out, real
}

// matchExample checks that every field of want is in got; the status is
// compared as a status word, and any value the example's command line
// passed must come back as passed.
func matchExample(t *testing.T, cmd, line string, real map[string]string, path string, want, got map[string]any) {
	t.Helper()
	for k, wv := range want {
		at := strings.TrimPrefix(path+"."+k, ".")
		if notProduced[cmd+" "+at] {
			continue
		}
		gv, ok := got[k]
		if !ok {
			t.Errorf("%s: the contract's field %s is missing", cmd, at)
			continue
		}
		switch w := wv.(type) {
		case map[string]any:
			g, ok := gv.(map[string]any)
			if !ok {
				t.Errorf("%s: %s is %T, the contract's an object", cmd, at, gv)
				continue
			}
			matchExample(t, cmd, line, real, at, w, g)
		case []any:
			g, ok := gv.([]any)
			if !ok || len(g) == 0 {
				t.Errorf("%s: %s is %v, the contract's a list like %v", cmd, at, gv, w)
				continue
			}
			for _, item := range w {
				wi, _ := item.(map[string]any)
				gi, _ := g[0].(map[string]any)
				matchExample(t, cmd, line, real, at+"[]", wi, gi)
			}
		default:
			if k == "status" {
				ws, _ := model.ParseStatus(fmt.Sprint(wv))
				gs, err := model.ParseStatus(fmt.Sprint(gv))
				if err != nil || gs != ws || fmt.Sprint(gv) != ws.Contract() {
					t.Errorf("%s: %s is %v, the contract's %v", cmd, at, gv, wv)
				}
				continue
			}
			s := fmt.Sprint(wv)
			if f, ok := wv.(float64); ok {
				s = strconv.FormatFloat(f, 'f', -1, 64)
			}
			passed := strings.Contains(line, " "+s) || strings.Contains(line, `"`+s+`"`)
			if r, ok := real[s]; ok {
				s = r
			}
			if passed && k != "version" && fmt.Sprint(gv) != s {
				t.Errorf("%s: %s is %v, the command passed %s", cmd, at, gv, s)
			}
		}
	}
}

// TestPublishedExitCodesAndFlags: every exit code the contract lists means
// the same here, and every flag it names is accepted by that command.
func TestPublishedExitCodesAndFlags(t *testing.T) {
	p := loadPublished(t)
	a := &cmdutil.Env{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}
	root := rootcmd.RootCommand(a)
	for _, cmd := range p.Commands {
		for status, meaning := range cmd.ExitCodes {
			word := strings.Fields(meaning)[0]
			if status == "0" {
				continue
			}
			if got := strconv.Itoa(model.Code(word).ExitStatus()); got != status {
				t.Errorf("%s: the contract exits %s for %s, claimdeck %s", cmd.Name, status, word, got)
			}
		}
		c, _, err := root.Find([]string{cmd.Name})
		if err != nil || c.Name() != cmd.Name {
			t.Errorf("the contract's command %s is missing: %v", cmd.Name, err)
			continue
		}
		for flag, spec := range cmd.Parameters.Properties {
			f := c.Flags().Lookup(strings.TrimPrefix(flag, "--"))
			if f == nil {
				t.Errorf("%s lacks the contract's flag %s", cmd.Name, flag)
				continue
			}
			if spec.Type == "integer" {
				if err := f.Value.Set("2"); err != nil {
					t.Errorf("%s %s refuses an integer: %v", cmd.Name, flag, err)
				}
			}
		}
	}
}
