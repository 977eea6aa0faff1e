package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

// TestSavedFiltersLandInTheConfigFile: :save writes filters: into the file
// the configuration came from, keeping its comments and sources, replaces
// a name saved before, and the strict reader takes the result back.
func TestSavedFiltersLandInTheConfigFile(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	body, err := os.ReadFile(c.Conf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.Conf, append([]byte("# the on-call desk\n"), body...), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := cmdutil.LoadConfig(c.Conf)
	if err != nil {
		t.Fatal(err)
	}
	save := cfg.SaveFilter()
	for _, f := range [][2]string{{"oracle", "node:ORACLE_LOCAL level>=stale"}, {"mine", "agent:alpha"}, {"oracle", "node:ORACLE_LOCAL !tls"}} {
		if err := save(f[0], f[1]); err != nil {
			t.Fatal(err)
		}
	}
	after, err := os.ReadFile(c.Conf)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(after), "# the on-call desk\n") {
		t.Fatalf("the comment is gone:\n%s", after)
	}
	again, err := cmdutil.LoadConfig(c.Conf)
	if err != nil {
		t.Fatalf("the strict reader refuses the saved file: %v\n%s", err, after)
	}
	if got := again.Filters; len(got) != 2 || got["oracle"] != "node:ORACLE_LOCAL !tls" || got["mine"] != "agent:alpha" {
		t.Fatalf("filters read back: %v", got)
	}
	if len(again.Sources) != len(cfg.Sources) {
		t.Fatalf("sources after saving: %d, before %d", len(again.Sources), len(cfg.Sources))
	}
}

// TestFiltersAreNotSavedWithoutAYAMLFile: the embedded queue has no file
// to save into, and a JSON file is refused rather than rewritten as YAML.
func TestFiltersAreNotSavedWithoutAYAMLFile(t *testing.T) {
	if (&cmdutil.Config{}).SaveFilter() != nil {
		t.Fatal("a configuration without a file offers :save")
	}
	file := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(file, []byte(`{"actor": "bob"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	err := (&cmdutil.Config{File: file}).SaveFilter()("x", "tls")
	if err == nil || !strings.Contains(err.Error(), "only into a YAML configuration") {
		t.Fatalf("saving into JSON: %v", err)
	}
}
