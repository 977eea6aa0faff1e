package serve_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/stats"
)

func cliStatsOf(c *cmdtest.CLI, args ...string) stats.Report {
	c.T.Helper()
	return cliStatsExit(c, 0, args...)
}

// cliStatsExit is stats' report from a run that exits wantExit: zero and
// "ok" when every source was read, else the report with "ok" false.
func cliStatsExit(c *cmdtest.CLI, wantExit int, args ...string) stats.Report {
	c.T.Helper()
	var out, errOut bytes.Buffer
	if code := cmdtest.Program(context.Background(), append([]string{"--config", c.Conf, "stats"}, args...), strings.NewReader(""), &out, &errOut); code != wantExit {
		c.T.Fatalf("stats exited %d, want %d: %s %s", code, wantExit, out.String(), errOut.String())
	}
	var r struct {
		OK    bool         `json:"ok"`
		Stats stats.Report `json:"stats"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil || r.OK != (wantExit == 0) {
		c.T.Fatalf("stats printed %v, %s", err, out.String())
	}
	return r.Stats
}

func TestStatsCountsTheLastHourTheQueueShowsAndTheOperatorsOverrides(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	ids := make([]string, 3)
	for i := range ids {
		ids[i] = c.Run(0, "create", "--title", "task").Task.PageID
	}
	done := c.Run(0, "claim", "--task", ids[0], "--agent-name", "SANDMAN").Task
	c.Run(0, "complete", "--task", ids[0], "--lock-token", done.LockToken)
	c.Run(0, "claim", "--task", ids[1], "--agent-name", "ORACLE")
	c.Run(0, "takeover", "--yes", "--task", ids[2])

	rep := cliStatsOf(c)
	o := rep.Overall
	// One look sees ORACLE's running claim (the finished claim's fields are
	// cleared) and the completion by its edit time.
	if o.Claims.Total != 1 || o.Completions.Total != 1 || o.Tasks["done"] != 1 || o.Tasks["claimed"] != 2 {
		t.Errorf("overall = claims %d, completions %d, tasks %v", o.Claims.Total, o.Completions.Total, o.Tasks)
	}
	if o.Claims.PerMinute[stats.Minutes-1] != 1 || o.Completions.PerMinute[stats.Minutes-1] != 1 {
		t.Errorf("this minute: claims %d, completions %d", o.Claims.PerMinute[stats.Minutes-1], o.Completions.PerMinute[stats.Minutes-1])
	}
	if o.Overrides["takeover"] != 1 {
		t.Errorf("overrides = %v, want the takeover (%+v)", o.Overrides, rep)
	}
	if o.LeaseAge.N != 2 || o.HeartbeatGap.N != 1 {
		t.Errorf("lease ages %d, heartbeat gaps %d: want both claims aged, only the agent's gap", o.LeaseAge.N, o.HeartbeatGap.N)
	}
	if len(rep.Sources) != 1 || rep.Sources[0].Name != "local" || rep.Sources[0].Status != "ok" {
		t.Errorf("sources = %+v", rep.Sources)
	}
	if len(rep.Agents) != 2 { // ORACLE and HUMAN:alice hold leases
		t.Errorf("agents = %+v", rep.Agents)
	}
}

func TestStatsShowsABrokenSourceWithItsErrorAndTheRest(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource+"  - name: gone\n    kind: postgres\n    dsn: postgres://claimdeck@127.0.0.1:1/queue?connect_timeout=5\n")
	c.Run(0, "create", "--source", "local", "--title", "task")
	// Not the fleet's numbers: printed, and API_ERROR's exit status.
	rep := cliStatsExit(c, model.CodeAPIError.ExitStatus())
	if len(rep.Sources) != 2 {
		t.Fatalf("sources = %+v", rep.Sources)
	}
	for _, s := range rep.Sources {
		switch s.Name {
		case "local":
			if s.Status != "ok" || s.Tasks["queued"] != 1 {
				t.Errorf("local = %+v", s)
			}
		case "gone":
			if s.Status != "degraded" || s.Error == "" {
				t.Errorf("gone = %+v: want degraded with its error", s)
			}
		}
	}
}

func TestMetricsWithoutAUsableAddressIsMisconfigured(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	if r := c.Run(3, "metrics"); !strings.Contains(r.Error.Message, "--listen") {
		t.Errorf("no --listen: %q", r.Error.Message)
	}
	if r := c.Run(3, "metrics", "--listen", "127.0.0.1:notaport"); !strings.Contains(r.Error.Message, "127.0.0.1:notaport") {
		t.Errorf("a bad address: %q", r.Error.Message)
	}
}

// TestMetricsServesTheQueueOverHTTP runs `claimdeck metrics` on a free
// loopback port and scrapes it as Prometheus would, then checks the
// exposition with promtool when it is installed.
func TestMetricsServesTheQueueOverHTTP(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	id := c.Run(0, "create", "--title", "task").Task.PageID
	c.Run(0, "claim", "--task", id, "--agent-name", "SANDMAN")
	ctx, cancel := context.WithCancel(context.Background())
	errR, errW := io.Pipe()
	exit := make(chan int, 1)
	go func() {
		exit <- cmdtest.Program(ctx, []string{"--config", c.Conf, "metrics", "--listen", "127.0.0.1:0"}, strings.NewReader(""), io.Discard, errW)
		errW.Close()
	}()
	line, err := bufio.NewReader(errR).ReadString('\n')
	if err != nil {
		t.Fatalf("metrics said nothing: %v", err)
	}
	go io.Copy(io.Discard, errR)
	url := strings.TrimSpace(line[strings.Index(line, "http://"):])
	// The first poll runs as the server starts; scrape until it has landed.
	body := cmdtest.ScrapeUntil(t, url, 1000, 10*time.Millisecond, `claimdeck_tasks{source="local",state="claimed"} 1`)
	for _, want := range []string{`claimdeck_source_up{source="local"} 1`, `claimdeck_lease_age_seconds_count{source="local"} 1`,
		`claimdeck_claims_stuck{level="escalated",source="local"} 0`} {
		if !strings.Contains(body, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	if resp, err := http.Post(url, "text/plain", nil); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("POST /metrics: %s, want 405", resp.Status)
		}
	}
	cmdtest.CheckMetrics(t, body)
	cancel()
	if code := <-exit; code != 0 {
		t.Errorf("metrics exited %d after its context ended", code)
	}
}

func TestStatsOnTheEmbeddedDefaultNeverCreatesIt(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	t.Setenv("CLAIMDECK_CONFIG", "")
	var out, errOut bytes.Buffer
	cmdtest.Program(context.Background(), []string{"stats"}, strings.NewReader(""), &out, &errOut)
	if _, err := os.Stat(filepath.Join(home, "data", "claimdeck", "queue.db")); err == nil {
		t.Fatalf("stats created the embedded queue:\n%s", out.String())
	}
}

// An agent's first call on a fresh machine: with no configuration, reads of
// the embedded queue that does not exist yet answer as an empty queue does,
// and still make nothing; a configured path that does not exist stays
// MISCONFIGURED.
func TestFirstRunReadsOfTheEmbeddedQueueAnswerAnEmptyQueue(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	t.Setenv("CLAIMDECK_CONFIG", "")
	empty := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	for _, args := range [][]string{{"next", "--agent-name", "alpha"}, {"list"}} {
		want := empty.Run(0, args...)
		var out, errOut bytes.Buffer
		code := cmdtest.Program(context.Background(), args, strings.NewReader(""), &out, &errOut)
		var got cmdtest.Result
		if err := json.Unmarshal(out.Bytes(), &got); err != nil || code != 0 || !got.OK || got.Task != nil || len(got.Tasks) != len(want.Tasks) {
			t.Fatalf("claimdeck %v on a fresh machine exited %d: %s %s (%v), want the empty queue's answer", args, code, out.String(), errOut.String(), err)
		}
	}
	if _, err := os.Stat(filepath.Join(home, "data", "claimdeck", "queue.db")); err == nil {
		t.Fatal("a read created the embedded queue")
	}
	missing := &cmdtest.CLI{T: t, Conf: filepath.Join(t.TempDir(), "config.yaml")}
	if err := os.WriteFile(missing.Conf, []byte("sources:\n  - name: local\n    kind: sqlite\n    path: "+filepath.Join(home, "nowhere.db")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := missing.Run(3, "next", "--agent-name", "alpha"); r.Error.Code != "MISCONFIGURED" || !strings.Contains(r.Error.Message, "does not exist") {
		t.Fatalf("a configured path that does not exist: %+v", r.Error)
	}
}

// stats through a relay that cannot be reached is not the fleet's
// numbers: it exits with API_ERROR's status, the source shown down.
func TestStatsThroughAnUnreachableRelayFails(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	t.Setenv("CLAIMDECK_RELAY_TOKEN", strings.Repeat("7f", 32))
	relayed := cmdtest.RelayedConfig(t, c, "http://"+addr, "alice")
	rep := cliStatsExit(relayed, model.CodeAPIError.ExitStatus())
	if len(rep.Sources) != 1 || rep.Sources[0].Status == "ok" {
		t.Fatalf("sources through an unreachable relay: %+v", rep.Sources)
	}
}
