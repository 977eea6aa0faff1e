package rootcmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clidoor "github.com/claimdeck/claimdeck/internal/cli"
	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/internal/rootcmd"
	"github.com/claimdeck/claimdeck/sources/mesh"
)

const oracleToken = "oracle-bearer-0x5eed5eed"

func TestDeadNodeRecordedByWatchIsDownForDoctorListAndSweep(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	oracle := httptest.NewServer(mesh.NodeHandler("ORACLE", oracleToken, func(context.Context) (mesh.HealthReport, error) {
		return mesh.HealthReport{Status: "healthy"}, nil
	}, mesh.NewInbox(oracleToken)))
	sandman := httptest.NewServer(mesh.NodeHandler("SANDMAN", oracleToken, func(context.Context) (mesh.HealthReport, error) {
		return mesh.HealthReport{Status: "healthy"}, nil
	}, mesh.NewInbox(oracleToken)))
	defer sandman.Close()
	reg := filepath.Join(c.Dir, "mesh-nodes.json")
	if err := os.WriteFile(reg, fmt.Appendf(nil, `{"nodes": {
  "ORACLE": {"webhook": %q, "health": %q, "status": "healthy", "token": %q},
  "SANDMAN": {"webhook": %q, "health": %q, "status": "healthy", "token": %q}
}}`, oracle.URL+"/hooks/agent", oracle.URL+"/hooks/health", oracleToken,
		sandman.URL+"/hooks/agent", sandman.URL+"/hooks/health", oracleToken), 0o600); err != nil {
		t.Fatal(err)
	}
	conf, _ := os.ReadFile(c.Conf)
	conf = append(conf, fmt.Sprintf("mesh:\n  registry: %s\n  ping_every: 1ms\n  timeout: 5s\n  down_after: 3\n  holders:\n    worker-7: ORACLE\n", reg)...)
	if err := os.WriteFile(c.Conf, conf, 0o600); err != nil {
		t.Fatal(err)
	}
	id := c.Run(0, "create", "--title", "job on oracle").Task.PageID
	c.Run(0, "claim", "--task", id, "--agent-name", "worker-7", "--lease", "1h")

	if d := doctorMesh(t, c); !d.OK || len(d.Down) != 0 {
		t.Fatalf("doctor before any ping: %+v", d)
	}
	watch(t, c, "--rounds", "1")
	if d := doctorMesh(t, c); !d.OK {
		t.Fatalf("doctor with ORACLE answering: %+v", d)
	}

	oracle.Close() // the node dies
	before := time.Now().UTC().Truncate(time.Second)
	lines := watch(t, c, "--rounds", "3")
	if !strings.Contains(lines, `"node":"ORACLE","status":"DOWN"`) {
		t.Fatalf("node watch never printed ORACLE DOWN:\n%s", lines)
	}

	d := doctorMesh(t, c)
	if d.OK || len(d.DownNodes) != 1 || d.DownNodes[0].Node != "ORACLE" || d.DownNodes[0].Failures != 3 || d.DownNodes[0].RecordedBy != "node watch" {
		t.Fatalf("doctor does not name ORACLE DOWN from the record: %+v", d)
	}
	since, err := time.Parse(time.RFC3339, d.DownNodes[0].Since)
	if err != nil || since.Before(before) {
		t.Fatalf("doctor's since %q is not the time ORACLE went down (after %s)", d.DownNodes[0].Since, before)
	}
	var out, errOut bytes.Buffer
	rootcmd.Run(context.Background(), []string{"--config", c.Conf, "doctor", "-o", "table"}, strings.NewReader(""), &out, &errOut)
	if !strings.Contains(out.String(), "ORACLE DOWN since "+d.DownNodes[0].Since) {
		t.Fatalf("doctor's table does not name ORACLE DOWN and since when:\n%s", out.String())
	}

	listed := c.Run(0, "list", "--filter", "node:ORACLE level>=stale").Tasks
	if len(listed) != 1 || listed[0].PageID != id || listed[0].StaleReason != "node ORACLE DOWN" {
		t.Fatalf("list --filter node:ORACLE level>=stale: %+v", listed)
	}
	dry, _ := (&meshCLI{CLI: c}).sweep(0, "--dry-run")
	if len(dry.Marks) == 0 || dry.Marks[0].Task != id || dry.Marks[0].Level != "stale" {
		t.Fatalf("sweep --dry-run does not mark ORACLE's claim stale: %+v", dry.Marks)
	}
}

func watch(t *testing.T, c *cmdtest.CLI, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := rootcmd.Run(context.Background(), append([]string{"--config", c.Conf, "node", "watch"}, args...), strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("node watch exited %d:\n%s\n%s", code, out.String(), errOut.String())
	}
	if strings.Contains(out.String()+errOut.String(), oracleToken) {
		t.Fatal("node watch printed a bearer token")
	}
	return out.String()
}

func doctorMesh(t *testing.T, c *cmdtest.CLI) clidoor.MeshReport {
	t.Helper()
	var out, errOut bytes.Buffer
	rootcmd.Run(context.Background(), []string{"--config", c.Conf, "doctor"}, strings.NewReader(""), &out, &errOut)
	var doc struct{ Mesh *clidoor.MeshReport }
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc.Mesh == nil {
		t.Fatalf("doctor: %v\n%s", err, out.String())
	}
	return *doc.Mesh
}
