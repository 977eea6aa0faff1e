package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	clidoor "github.com/claimdeck/claimdeck/internal/cli"
	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

func TestBrokenLockFileAndDownNodeAreNamedByListGetAndDoctor(t *testing.T) {
	c := cmdtest.NewCLI(t, "  - name: locks\n    kind: lockdir\n    path: DIR/locks\n")
	broken := filepath.Join(c.Dir, "locks", "index-rebuild.lock")
	if err := os.WriteFile(broken, []byte("garbage{{{"), 0o644); err != nil {
		t.Fatal(err)
	}
	cliWithRegistry(c, map[string]string{"ORACLE_LOCAL": "down", "SANDMAN": "healthy"}, "")

	got := c.Run(0, "get", "--task", "index-rebuild")
	if !strings.HasPrefix(got.Task.Problem, broken+": ") {
		t.Fatalf("get does not name the broken file: problem %q", got.Task.Problem)
	}
	var out, errOut bytes.Buffer
	cmdtest.Program(context.Background(), []string{"--config", c.Conf, "list", "-o", "table"}, strings.NewReader(""), &out, &errOut)
	var row string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.Contains(l, "index-rebuild") {
			row = l
		}
	}
	if f := strings.Fields(row); len(f) < 3 || f[2] != "BROKEN" || !strings.Contains(row, broken) {
		t.Fatalf("list -o table shows the broken lock as\n%s", out.String())
	}

	out.Reset()
	code := cmdtest.Program(context.Background(), []string{"--config", c.Conf, "doctor"}, strings.NewReader(""), &out, &errOut)
	var doc struct {
		OK      bool `json:"ok"`
		Sources []struct {
			Checks []cmdutil.Check `json:"checks"`
		} `json:"sources"`
		Mesh *clidoor.MeshReport `json:"mesh"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("doctor: %v\n%s", err, out.String())
	}
	if code != 3 || doc.OK {
		t.Fatalf("doctor over a broken lock file exited %d ok=%v:\n%s", code, doc.OK, out.String())
	}
	var data *cmdutil.Check
	for i, ch := range doc.Sources[0].Checks {
		if ch.Check == "data" {
			data = &doc.Sources[0].Checks[i]
		}
	}
	if data == nil || data.OK || !strings.Contains(data.Detail, broken) {
		t.Fatalf("doctor does not name the broken file: %+v", doc.Sources[0].Checks)
	}
	if doc.Mesh == nil || doc.Mesh.OK || len(doc.Mesh.Down) != 1 || doc.Mesh.Down[0] != "ORACLE_LOCAL" || doc.Mesh.Nodes != 2 {
		t.Fatalf("doctor does not name the DOWN node: %+v", doc.Mesh)
	}
}
