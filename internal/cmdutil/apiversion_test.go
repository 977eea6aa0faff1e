package cmdutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNotionAPIVersionKey: api_version picks a Notion source's version,
// a bare YAML date included (YAML reads it as a time), and a version
// claimdeck does not speak is refused at load, naming the ones it does.
func TestNotionAPIVersionKey(t *testing.T) {
	write := func(version string) string {
		file := filepath.Join(t.TempDir(), "config.yaml")
		body := "sources:\n  - name: team\n    kind: notion\n    token_env: NOTION_TOKEN\n    data_source: 0123456789abcdef0123456789abcdef\n    api_version: " + version + "\n"
		if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return file
	}
	for _, version := range []string{"2026-12-01", `"2026-12-01"`, "2026-03-11"} {
		cfg, err := LoadConfig(write(version))
		if err != nil {
			t.Fatalf("api_version: %s: %v", version, err)
		}
		if got, want := cfg.Sources[0].NotionAPIVersion(), strings.Trim(version, `"`); got != want {
			t.Errorf("api_version: %s reads as %q, want %q", version, got, want)
		}
	}
	_, err := LoadConfig(write("2026-13-01"))
	if err == nil || !strings.Contains(err.Error(), "2026-12-01") || !strings.Contains(err.Error(), "api_version") {
		t.Errorf("api_version: 2026-13-01 gave %v, want a refusal naming api_version and the versions spoken", err)
	}
}
