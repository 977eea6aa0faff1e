package cli_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/sources"
)

type bulkOut struct {
	OK      bool                `json:"ok"`
	DryRun  bool                `json:"dry_run"`
	Preview sources.BulkPreview `json:"preview"`
	Summary *sources.BulkSummary
	Error   struct{ Code, Message string }
}

func cliBulk(c *cmdtest.CLI, wantExit int, args ...string) bulkOut {
	c.T.Helper()
	stdout, stderr, code := cmdtest.Raw(c, "", args...)
	var out bulkOut
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		c.T.Fatalf("claimdeck %v: stdout is not one JSON document: %v\n%s\nstderr: %s", args, err, stdout, stderr)
	}
	if code != wantExit {
		c.T.Fatalf("claimdeck %v exited %d, want %d:\n%s", args, code, wantExit, stdout)
	}
	return out
}

// TestBulkReleaseFromTheCommandLine is the runbook: ORACLE_LOCAL is DOWN in
// the registry; its agents' claims on a SQLite queue and a lock directory
// are previewed with --dry-run (nothing changes), refused without a
// terminal or --yes, refused on --read-only, then released with --yes,
// each recorded in the audit log; SANDMAN's claim is left alone.
func TestBulkReleaseFromTheCommandLine(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource+"  - name: locks\n    kind: lockdir\n    path: DIR/.locks\n")
	cliWithRegistry(c, map[string]string{"ORACLE_LOCAL": "down", "SANDMAN": "healthy"},
		fmt.Sprintf("  record: %s\n  holders:\n    worker-7: oracle_local\n    worker-9: ORACLE_LOCAL\n    worker-8: SANDMAN\n", filepath.Join(c.Dir, "sweep.json")))
	claim := func(source, agent string) string {
		id := c.Run(0, "--source", source, "create", "--title", "job of "+agent).Task.PageID
		c.Run(0, "--source", source, "claim", "--task", id, "--agent-name", agent, "--lease", "1h")
		return id
	}
	a, healthy, b := claim("local", "worker-7"), claim("local", "worker-8"), claim("locks", "worker-9")
	filter := "node:ORACLE_LOCAL level>=stale"

	dry := cliBulk(c, 0, "release", "--force", "--filter", filter, "--reason", "node lost", "--dry-run")
	p := dry.Preview
	if !dry.OK || !dry.DryRun || p.Count != 2 || p.Sources["local"] != 1 || p.Sources["locks"] != 1 || len(p.Apply) != 2 || len(p.Refused) != 0 || dry.Summary != nil {
		t.Fatalf("--dry-run: %+v", dry)
	}
	if got := c.Run(0, "--source", "local", "get", "--task", a).Task; got.ClaimedBy != "AGENT" {
		t.Fatalf("--dry-run changed %s: %+v", a, got)
	}
	// list --filter, across both sources, gives the preview's answer.
	var listed []string
	for _, task := range c.Run(0, "list", "--filter", filter).Tasks {
		listed = append(listed, task.Source+"/"+task.PageID)
	}
	slices.Sort(listed)
	if want := []string{"local/" + a, "locks/" + b}; !slices.Equal(listed, want) {
		t.Fatalf("list --filter %q = %v, want %v as the preview", filter, listed, want)
	}
	if stdout, _, code := cmdtest.Raw(c, "", "release", "--force", "--filter", filter, "--reason", "node lost"); code != 3 || !strings.Contains(stdout, "pass --yes") {
		t.Fatalf("without a terminal or --yes: exit %d, %s", code, stdout)
	}
	ro := cliBulk(c, 3, "--read-only", "release", "--force", "--filter", filter, "--reason", "node lost", "--yes")
	if ro.OK || len(ro.Summary.Applied) != 0 || len(ro.Summary.Refused) != 2 || !strings.Contains(ro.Summary.Refused[0].Reason, "read-only") {
		t.Fatalf("--read-only: %+v", ro)
	}

	done := cliBulk(c, 0, "release", "--force", "--filter", filter, "--reason", "node lost", "--yes")
	if !done.OK || len(done.Summary.Applied) != 2 || len(done.Summary.Refused) != 0 || len(done.Summary.Failed) != 0 {
		t.Fatalf("the release: %+v", done)
	}
	for source, id := range map[string]string{"local": a, "locks": b} {
		if got := c.Run(0, "--source", source, "get", "--task", id).Task; got.State != "queued" || got.ClaimedBy != "" {
			t.Errorf("%s/%s after the bulk release: %+v", source, id, got)
		}
	}
	if got := c.Run(0, "--source", "local", "get", "--task", healthy).Task; got.ClaimedBy != "AGENT" {
		t.Errorf("SANDMAN's claim was released: %+v", got)
	}
	audit, err := os.ReadFile(filepath.Join(c.Dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{a, b} {
		if !strings.Contains(string(audit), `"task":"`+id+`","action":"force-release","reason":"node lost"`) {
			t.Errorf("the audit log lacks the release of %s:\n%s", id, audit)
		}
	}
	again := cliBulk(c, 0, "release", "--force", "--filter", filter, "--reason", "node lost", "--yes")
	if again.Preview.Count != 0 {
		t.Fatalf("a second run found work: %+v", again.Preview)
	}
}

func TestBulkBadInputIsRefusedBeforeAnythingIsRead(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	for _, args := range [][]string{
		{"release", "--force", "--filter", "level>=urgnt", "--dry-run"},
		{"release", "--force", "--filter", "tls", "--task", "x", "--dry-run"},
		{"release", "--force", "--dry-run"},
		{"cancel", "--filter", "tls", "--reason", "x"},
	} {
		if r := c.Run(3, args...); r.Error.Code != "MISCONFIGURED" {
			t.Errorf("%v: %+v", args, r.Error)
		}
	}
	if r := c.Run(3, "release", "--force", "--filter", "level>=urgnt", "--dry-run"); !strings.Contains(r.Error.Message, `filter: "level>=urgnt": unknown level "urgnt" (want stale, urgent, notify or escalated)`) {
		t.Errorf("a bad filter does not say what to fix: %s", r.Error.Message)
	}
}

// withRegistry writes a mesh registry whose nodes stand as statuses says
// (their webhooks answer nothing) and adds a mesh section naming it to the
// configuration, extra lines under it; it returns the registry's path.
func cliWithRegistry(c *cmdtest.CLI, statuses map[string]string, extra string) string {
	c.T.Helper()
	var nodes []string
	for _, name := range slices.Sorted(maps.Keys(statuses)) {
		nodes = append(nodes, fmt.Sprintf(`%q: {"webhook": "http://127.0.0.1:1/hooks/agent", "health": "http://127.0.0.1:1/hooks/health", "status": %q}`, name, statuses[name]))
	}
	reg := filepath.Join(c.Dir, "mesh-nodes.json")
	if err := os.WriteFile(reg, []byte(`{"nodes": {`+strings.Join(nodes, ",\n")+`}}`), 0o600); err != nil {
		c.T.Fatal(err)
	}
	conf, _ := os.ReadFile(c.Conf)
	conf = append(conf, fmt.Sprintf("mesh:\n  registry: %s\n%s", reg, extra)...)
	if err := os.WriteFile(c.Conf, conf, 0o600); err != nil {
		c.T.Fatal(err)
	}
	return reg
}
