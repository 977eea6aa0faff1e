package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestImportGraph keeps the layout honest: model imports nothing of ours,
// the dashboard no backend and no mesh (the stats it shows are computed
// over the hub's snapshots), each backend only model and sources. It reads the graph as the go command resolves it.
func TestImportGraph(t *testing.T) {
	const mod = "github.com/claimdeck/claimdeck/"
	allowed := map[string][]string{
		"model":            nil,
		"theme":            nil,
		"sources":          {"model"},
		"sources/hub":      {"model", "sources"},
		"sources/mesh":     {"model", "sources"},
		"sources/lockdir":  {"model", "sources"},
		"sources/sqlstore": {"model", "sources"},
		"sources/notion":   {"model", "sources"},
		"sources/stats":    {"model", "sources", "sources/hub"},
		"sources/metrics":  {"model", "sources", "sources/hub", "sources/stats"},
		"tui":              {"model", "sources", "sources/hub", "sources/stats", "theme"},
	}
	for pkg, ok := range allowed {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", mod+pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			rel, ours := strings.CutPrefix(dep, mod)
			if !ours || rel == pkg || strings.HasPrefix(rel, pkg+"/internal/") || slices.Contains(ok, rel) {
				continue
			}
			t.Errorf("%s imports %s; it may import only %v of ours", pkg, rel, ok)
		}
	}
}
