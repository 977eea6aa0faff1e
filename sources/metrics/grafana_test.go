package metrics

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/claimdeck/claimdeck/model"
)

// exportedNames are the metric families the endpoint serves: the fleet
// collector's descriptions (present even before the series have values),
// and everything the endpoint's registry gathers (build info, go_*,
// process_*).
func exportedNames(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	ch := make(chan *prometheus.Desc, 64)
	fleet(t, true, true).Describe(ch)
	close(ch)
	fq := regexp.MustCompile(`fqName: "([^"]+)"`)
	for d := range ch {
		m := fq.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("cannot read the name of %s", d)
		}
		names[m[1]] = true
	}
	for _, line := range strings.Split(scrape(t, fleet(t, true, true)), "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == "#" && f[1] == "TYPE" {
			names[f[2]] = true
		}
	}
	return names
}

var (
	promString   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	promBraces   = regexp.MustCompile(`\{[^}]*\}`)
	promRange    = regexp.MustCompile(`\[[^\]]*\]`)
	promGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promIdent    = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*(\s*\()?`)
	labelValues  = regexp.MustCompile(`^label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)`)
)

// metricsIn returns the metric names a PromQL expression reads: every
// identifier left once strings, label matchers, ranges and grouping
// clauses are removed, that is not a function call or an operator word.
func metricsIn(expr string) []string {
	if m := labelValues.FindStringSubmatch(expr); m != nil {
		return []string{m[1]}
	}
	e := promString.ReplaceAllString(expr, "")
	e = promBraces.ReplaceAllString(e, "")
	e = promRange.ReplaceAllString(e, "")
	e = promGrouping.ReplaceAllString(e, "")
	var out []string
	for _, m := range promIdent.FindAllStringSubmatch(e, -1) {
		word := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(m[0]), "("))
		if m[1] != "" {
			continue // a function
		}
		switch word {
		case "and", "or", "unless", "on", "ignoring", "group_left", "group_right", "offset", "bool", "e", "Inf", "NaN":
			continue
		}
		out = append(out, word)
	}
	return out
}

func TestMetricsInReadsPromQL(t *testing.T) {
	got := metricsIn(`histogram_quantile(0.95, sum by (le) (claimdeck_lease_age_seconds_bucket{source=~"$source"})) / on (x) rate(go_goroutines[5m])`)
	if strings.Join(got, " ") != "claimdeck_lease_age_seconds_bucket go_goroutines" {
		t.Errorf("metricsIn = %q", got)
	}
}

// TestGrafanaDashboardQueriesNameExportedMetrics: every panel query and
// template variable of grafana-dashboard.json reads at least one metric,
// and every metric it reads is one the endpoint serves (a histogram's
// _bucket, _sum and _count counted as its family).
func TestGrafanaDashboardQueriesNameExportedMetrics(t *testing.T) {
	raw, err := os.ReadFile("grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatal(err)
	}
	names := exportedNames(t)
	for _, want := range []string{"claimdeck_build_info", "go_goroutines", "process_resident_memory_bytes", "claimdeck_tasks"} {
		if !names[want] {
			t.Errorf("the endpoint does not serve %s", want)
		}
	}
	known := func(m string) bool {
		if names[m] {
			return true
		}
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(m, suffix); ok && names[base] {
				return true
			}
		}
		return false
	}
	check := func(where, expr string) {
		ms := metricsIn(expr)
		if len(ms) == 0 {
			t.Errorf("%s: %q reads no metric", where, expr)
		}
		for _, m := range ms {
			if !known(m) {
				t.Errorf("%s: %q reads %s, which claimdeck does not export", where, expr, m)
			}
		}
	}
	queries := 0
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			check("panel "+p.Title, tg.Expr)
			queries++
		}
	}
	for _, v := range dash.Templating.List {
		if q, ok := v.Query.(string); ok && v.Type == "query" {
			check("variable "+v.Name, q)
			queries++
		}
	}
	if queries < 10 {
		t.Errorf("only %d queries: the dashboard did not load", queries)
	}
}

// The endpoint serves the build's version as claimdeck_build_info.
func TestBuildInfoIsServed(t *testing.T) {
	body := scrape(t, fleet(t, false, false))
	want := `claimdeck_build_info{goversion="` + model.Build().Go + `",revision="` + model.Build().Revision + `",version="` + model.Build().String() + `"} 1`
	if !strings.Contains(body, want) {
		t.Errorf("scrape lacks %s", want)
	}
	for _, family := range []string{"go_goroutines ", "process_start_time_seconds "} {
		if !strings.Contains(body, "\n"+family) {
			t.Errorf("scrape lacks %s", family)
		}
	}
}
