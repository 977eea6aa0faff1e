package metrics

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/sourcetest/memsource"
	"github.com/claimdeck/claimdeck/sources/stats"
)

var now = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// fleet is a queue with one escalated claim (stuck 3 h), one healthy claim
// and two queued tasks, seen once by a hub, and a mesh whose node lab is
// DOWN when down is set.
func fleet(t *testing.T, escalated, down bool) *Collector {
	t.Helper()
	mem := memsource.NewMemory("local")
	mem.Now = func() time.Time { return now }
	mem.Put(&model.Task{ID: "q1", State: model.StateQueued})
	mem.Put(&model.Task{ID: "q2", State: model.StateQueued})
	mem.Put((&model.Task{ID: "fresh", State: model.StateClaimed}).WithClaim(model.Claim{Holder: model.HolderAgent, Name: "ORACLE",
		Token: "a", ClaimedAt: model.StampOf(now.Add(-90 * time.Second)), HeartbeatAt: model.StampOf(now.Add(-30 * time.Second)), Expires: model.StampOf(now.Add(19 * time.Minute))}))
	if escalated {
		mem.Put((&model.Task{ID: "stuck", State: model.StateClaimed}).WithClaim(model.Claim{Holder: model.HolderAgent, Name: "SANDMAN",
			Token: "b", ClaimedAt: model.StampOf(now.Add(-3 * time.Hour)), HeartbeatAt: model.StampOf(now.Add(-3 * time.Hour)), Expires: model.StampOf(now.Add(-160 * time.Minute))}))
	}
	status := model.NodeHealthy
	if down {
		status = model.NodeDown
	}
	nodes := []model.Node{
		{Name: "ops", Status: model.NodeHealthy, Latency: []time.Duration{3 * time.Millisecond, 4 * time.Millisecond}},
		{Name: "lab", Status: status, Failures: 3},
	}
	tr := stats.New()
	hub.New(hub.Config{Feeds: []hub.Feed{{Source: mem}}, Now: func() time.Time { return now }, Observe: tr.Observe,
		Nodes: func() []model.Node { return nodes }}).Once(context.Background())
	return New(Config{
		Tracker: tr, Now: func() time.Time { return now },
		Journal: func() ([]model.AuditRecord, error) {
			return []model.AuditRecord{
				{At: now, Source: "local", Action: model.ActionTakeover, Result: "pending", Pending: true},
				{At: now, Source: "local", Action: model.ActionTakeover, Result: "applied"},
				{At: now, Source: "local", Action: model.ActionForceRelease, Result: "CONFLICT"},
			}, nil
		},
	})
}

func TestTheExpositionShowsTheFleetAndPassesTheClientLibrarysLint(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(fleet(t, true, true)); err != nil {
		t.Fatal(err)
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	want := `
# HELP claimdeck_claims_stuck Tasks on the escalation ladder (seed 001) by level: stuck claims, claims of a DOWN node, expired hand-offs.
# TYPE claimdeck_claims_stuck gauge
claimdeck_claims_stuck{level="escalated",source="local"} 1
claimdeck_claims_stuck{level="notify",source="local"} 0
claimdeck_claims_stuck{level="stale",source="local"} 0
claimdeck_claims_stuck{level="urgent",source="local"} 0
# HELP claimdeck_node_up 0 when the mesh node is DOWN, else 1.
# TYPE claimdeck_node_up gauge
claimdeck_node_up{node="lab"} 0
claimdeck_node_up{node="ops"} 1
# HELP claimdeck_node_ping_latency_seconds Latency of the node's last successful health ping.
# TYPE claimdeck_node_ping_latency_seconds gauge
claimdeck_node_ping_latency_seconds{node="ops"} 0.004
# HELP claimdeck_overrides_total Human overrides the sources' shared trails recorded since the process started, by action and result (applied or the error code).
# TYPE claimdeck_overrides_total counter
claimdeck_overrides_total{action="force-release",result="CONFLICT"} 1
claimdeck_overrides_total{action="takeover",result="applied"} 1
# HELP claimdeck_lease_age_seconds Age of the claims held now, from claim to scrape.
# TYPE claimdeck_lease_age_seconds histogram
claimdeck_lease_age_seconds_bucket{source="local",le="60"} 0
claimdeck_lease_age_seconds_bucket{source="local",le="300"} 1
claimdeck_lease_age_seconds_bucket{source="local",le="600"} 1
claimdeck_lease_age_seconds_bucket{source="local",le="1200"} 1
claimdeck_lease_age_seconds_bucket{source="local",le="1800"} 1
claimdeck_lease_age_seconds_bucket{source="local",le="3600"} 1
claimdeck_lease_age_seconds_bucket{source="local",le="7200"} 1
claimdeck_lease_age_seconds_bucket{source="local",le="14400"} 2
claimdeck_lease_age_seconds_bucket{source="local",le="+Inf"} 2
claimdeck_lease_age_seconds_sum{source="local"} 10890
claimdeck_lease_age_seconds_count{source="local"} 2
# HELP claimdeck_tasks Tasks by source and lifecycle state.
# TYPE claimdeck_tasks gauge
claimdeck_tasks{source="local",state="blocked"} 0
claimdeck_tasks{source="local",state="canceled"} 0
claimdeck_tasks{source="local",state="claimed"} 2
claimdeck_tasks{source="local",state="done"} 0
claimdeck_tasks{source="local",state="failed"} 0
claimdeck_tasks{source="local",state="queued"} 2
claimdeck_tasks{source="local",state="review"} 0
# HELP claimdeck_source_up 1 when the source's last poll succeeded.
# TYPE claimdeck_source_up gauge
claimdeck_source_up{source="local"} 1
# HELP claimdeck_polls_total Polls of the source since the process started.
# TYPE claimdeck_polls_total counter
claimdeck_polls_total{source="local"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"claimdeck_claims_stuck", "claimdeck_node_up", "claimdeck_node_ping_latency_seconds", "claimdeck_overrides_total",
		"claimdeck_lease_age_seconds", "claimdeck_tasks", "claimdeck_source_up", "claimdeck_polls_total"); err != nil {
		t.Error(err)
	}
}

// scrape serves the collector over real HTTP on 127.0.0.1 and GETs /metrics.
func scrape(t *testing.T, c *Collector) string {
	t.Helper()
	h, err := Handler(c)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", h)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics: %s, %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	return string(body)
}

func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool is not installed; .ci/run installs it (Debian: apt-get install prometheus)")
		}
		t.Skip("promtool is not installed (Debian: apt-get install prometheus)")
	}
	return p
}

func TestPromtoolAcceptsTheScrapedExposition(t *testing.T) {
	body := scrape(t, fleet(t, true, true))
	cmd := exec.Command(promtool(t), "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

func TestTheAlertRulesAreValid(t *testing.T) {
	if out, err := exec.Command(promtool(t), "check", "rules", "alerts.yml").CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
}

// TestTheAlertRulesFireOnAnEscalatedClaimAndADownNode feeds what a scrape
// returned to promtool's rule tests as ten minutes of unchanging series:
// the escalated claim and the DOWN node page, a healthy fleet does not.
func TestTheAlertRulesFireOnAnEscalatedClaimAndADownNode(t *testing.T) {
	tool := promtool(t)
	rules, err := filepath.Abs("alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name             string
		escalated, down  bool
		wantEsc, wantNod string
	}{
		{"trouble", true, true,
			`[{exp_labels: {severity: page, source: local, level: escalated}, exp_annotations: {` + escAnnotations + `}}]`,
			`[{exp_labels: {severity: page, node: lab}, exp_annotations: {` + nodeAnnotations + `}}]`},
		{"healthy", false, false, `[]`, `[]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var series strings.Builder
			for _, line := range strings.Split(scrape(t, fleet(t, c.escalated, c.down)), "\n") {
				i := strings.LastIndexByte(line, ' ')
				if line == "" || line[0] == '#' || i < 0 || strings.ContainsAny(line[i+1:], "eE") {
					continue // comments, and values promtool's series notation would misread
				}
				fmt.Fprintf(&series, "      - series: '%s'\n        values: '%sx10'\n", line[:i], line[i+1:])
			}
			test := fmt.Sprintf(`rule_files: [%q]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
%s    alert_rule_test:
      - {eval_time: 5m, alertname: ClaimdeckClaimEscalated, exp_alerts: %s}
      - {eval_time: 5m, alertname: ClaimdeckNodeDown, exp_alerts: %s}
      - {eval_time: 5m, alertname: ClaimdeckSourceDegraded, exp_alerts: []}
`, rules, series.String(), c.wantEsc, c.wantNod)
			path := filepath.Join(t.TempDir(), "test.yml")
			if err := os.WriteFile(path, []byte(test), 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(tool, "test", "rules", path).CombinedOutput()
			if err != nil || !bytes.Contains(out, []byte("SUCCESS")) {
				t.Fatalf("promtool test rules: %v\n%s", err, out)
			}
		})
	}
}

const (
	escAnnotations = `summary: "1 claim(s) on local escalated", description: "Agent claims on source local have gone without a heartbeat past the last rung of the escalation ladder. Open the dashboard's Stale view to take them over, force-release or hand them off."`

	nodeAnnotations = `summary: "mesh node lab is DOWN", description: "Node lab failed its health pings (claimdeck_node_ping_failures shows how many). Its agents' claims are stale and claimable by other nodes."`
)
