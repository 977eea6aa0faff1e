package rootcmd_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestImportGraph keeps the layout honest: model imports nothing of ours,
// the dashboard no backend and no mesh (the stats it shows are computed
// over the hub's snapshots), each backend only model and sources; the
// command line's shared package (internal/cmdutil) no door, and no door
// another door (doors). It reads the graph as the go command resolves it.
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
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}", mod+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, door := range append(doors, "internal/cmdutil") {
		allowed[door] = doorMayImport(door, strings.Fields(string(out)))
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

// doors are the packages each of claimdeck's doors lives in. Each may
// import internal/cmdutil, the libraries (model, theme, tui, sources and
// its packages, internal/demo) but never another door: what two doors
// share lives in cmdutil. cmdutil imports no door and no dashboard.
// A new door (internal/sshdoor) is added here.
var doors = []string{"internal/cli", "internal/ntask", "internal/mcpdoor", "internal/serve", "internal/dashboard"}

// doorMayImport lists the packages of ours (of all, the module's) pkg may
// import: every package but the doors, rootcmd (the assembly) and, for
// cmdutil, the dashboard's tui and demo.
func doorMayImport(pkg string, all []string) []string {
	var ok []string
	for _, p := range all {
		rel, _ := strings.CutPrefix(p, "github.com/claimdeck/claimdeck/")
		switch {
		case slices.Contains(doors, rel), rel == "internal/rootcmd", strings.HasPrefix(rel, "cmd/"):
		case pkg == "internal/cmdutil" && (rel == "tui" || rel == "internal/demo"):
		default:
			ok = append(ok, rel)
		}
	}
	return ok
}
