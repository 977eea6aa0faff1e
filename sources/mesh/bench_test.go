package mesh

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

// BenchmarkPollRound200Nodes10Hanging is one poll round over 200 nodes on
// one loopback server, 10 of which never answer. With 16 workers the hanging
// nodes occupy 10 of them for one timeout while the rest drain the others,
// so a round takes about one timeout, not ten. The baseline is the seed's
// own loop, one awaited request after another.
func BenchmarkPollRound200Nodes10Hanging(b *testing.B) {
	b.Run("workers=16", func(b *testing.B) { benchmarkPollRound(b, 16) })
	b.Run("sequential", func(b *testing.B) { benchmarkPollRound(b, 1) })
}

func benchmarkPollRound(b *testing.B, workers int) {
	const nodes, hanging, timeout = 200, 10, 200 * time.Millisecond
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Paths are /n/<i>/hooks/health.
		i, _ := strconv.Atoi(strings.Split(r.URL.Path, "/")[2])
		if i < hanging {
			<-r.Context().Done()
			return
		}
		fmt.Fprintf(w, `{"node":"N%d","status":"healthy","queue_depth":1,"claimed_tasks":["t-%d"]}`, i, i)
	}))
	defer srv.Close()
	reg := &Registry{}
	for i := range nodes {
		reg.Nodes = append(reg.Nodes, NodeConfig{Name: fmt.Sprintf("N%d", i), Health: fmt.Sprintf("%s/n/%d/hooks/health", srv.URL, i), Token: "t"})
	}
	// 200 real nodes would be 200 hosts with a connection pool each; on one
	// loopback server the pool must be as wide as the workers, or every
	// round re-dials 190 nodes.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = workers
	client := &http.Client{Transport: transport}
	p := NewPoller(reg, PollerConfig{Timeout: timeout, Concurrency: workers, DownAfter: 1 << 30, Client: client})
	var rounds []time.Duration
	fewest := nodes
	for b.Loop() {
		start := time.Now()
		snap := p.PollOnce(b.Context())
		rounds = append(rounds, time.Since(start))
		healthy := 0
		for _, n := range snap {
			if n.Status == model.NodeHealthy {
				healthy++
			}
		}
		if healthy == 0 {
			b.Fatalf("no node answered: %s", snap[nodes-1].LastErr)
		}
		// On a loaded machine a scheduling stall can push a live node past
		// the short timeout; count that rather than hide it.
		fewest = min(fewest, healthy)
	}
	slices.Sort(rounds)
	b.ReportMetric(float64(rounds[len(rounds)/2].Microseconds())/1000, "median-round-ms")
	b.ReportMetric(float64(rounds[len(rounds)-1].Microseconds())/1000, "slowest-round-ms")
	b.ReportMetric(float64(fewest), "fewest-healthy")
}
