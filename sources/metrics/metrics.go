// Package metrics exposes the fleet to Prometheus: tasks by state, lease
// ages, stuck claims by escalation level, mesh nodes, the hub's polls, lease
// events and human overrides. Every figure is read at scrape time from the
// stats tracker's last snapshot and counts, so a scrape adds no load on the
// backends and agrees with the Stats view and `claimdeck stats`.
package metrics

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/stats"
)

// LeaseAgeBuckets are the lease age histogram's upper bounds in seconds:
// heartbeat interval, stale, lease, urgent, notify, escalated and beyond.
var LeaseAgeBuckets = []float64{60, 300, 600, 1200, 1800, 3600, 7200, 14400}

// Config wires a collector. The policy and the mesh come with the hub's
// snapshot, so stuck claims are classified as the dashboard and the sweep
// classify them.
type Config struct {
	Tracker *stats.Tracker
	// Journal reads the audit journal's records for the override counters;
	// nil: none. It is called once per scrape.
	Journal func() ([]model.AuditRecord, error)
	// Trails reads the overrides from the sources' shared trails
	// (sources.OverrideFeed) and names the sources whose trail could not
	// be read; when set, it is counted instead of Journal, so every
	// process — a read-only metrics unit too — counts the team's
	// overrides. It is called once per scrape; what it answers is
	// counted whatever its time (a feed with a Baseline read at the start
	// counts from the start).
	Trails func() ([]model.AuditRecord, map[string]string)
	Now    func() time.Time
}

// Collector is a prometheus.Collector over the tracker.
//
// Its counters count from zero what happened since the process started,
// as Prometheus expects of a counter (rate() reads a restart as a reset):
// lease events the hub saw (not the last hour a first load shows), polls,
// and the journal's overrides from the collector's start. Each carries
// that start as its created timestamp, which a scrape in the protobuf
// format hands to Prometheus; the text formats leave it out (no
// OpenMetrics _created series, which would double the counters' series).
type Collector struct {
	cfg   Config
	start time.Time // when the counters began
}

// New returns a collector; register it with a prometheus.Registry. Its
// counters start now.
func New(cfg Config) *Collector {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Collector{cfg: cfg, start: cfg.Now()}
}

// descs are the collector's metric descriptions, made at the first
// Describe or Collect: only a dashboard or server that serves metrics pays
// for them, not every command of the binary.
var descs = sync.OnceValue(func() *descSet {
	return &descSet{
		tasks: prometheus.NewDesc("claimdeck_tasks",
			"Tasks by source and lifecycle state.", []string{"source", "state"}, nil),
		leaseAge: prometheus.NewDesc("claimdeck_lease_age_seconds",
			"Age of the claims held now, from claim to scrape.", []string{"source"}, nil),
		stuck: prometheus.NewDesc("claimdeck_claims_stuck",
			"Tasks on the escalation ladder (seed 001) by level: stuck claims, claims of a DOWN node, expired hand-offs.", []string{"source", "level"}, nil),
		sourceUp: prometheus.NewDesc("claimdeck_source_up",
			"1 when the source's last poll succeeded.", []string{"source"}, nil),
		pollSeconds: prometheus.NewDesc("claimdeck_poll_duration_seconds",
			"How long the source's last poll took.", []string{"source"}, nil),
		polls: prometheus.NewDesc("claimdeck_polls_total",
			"Polls of the source since the process started.", []string{"source"}, nil),
		pollErrors: prometheus.NewDesc("claimdeck_poll_errors_total",
			"Failed polls of the source since the process started.", []string{"source"}, nil),
		events: prometheus.NewDesc("claimdeck_lease_events_total",
			"Lease events the hub observed since the process started: claim, complete, fail, block.", []string{"source", "event"}, nil),
		nodeUp: prometheus.NewDesc("claimdeck_node_up",
			"0 when the mesh node is DOWN, else 1.", []string{"node"}, nil),
		nodeLatency: prometheus.NewDesc("claimdeck_node_ping_latency_seconds",
			"Latency of the node's last successful health ping.", []string{"node"}, nil),
		nodeFailures: prometheus.NewDesc("claimdeck_node_ping_failures",
			"Consecutive failed health pings of the node.", []string{"node"}, nil),
		overrides: prometheus.NewDesc("claimdeck_overrides_total",
			"Human overrides the sources' shared trails recorded since the process started, by action and result (applied or the error code).", []string{"action", "result"}, nil),
		trailUp: prometheus.NewDesc("claimdeck_overrides_trail_up",
			"1 when the source's shared trail was read for the override counters; 0 when it cannot be (its overrides are not counted).", []string{"source"}, nil),
		journalUp: prometheus.NewDesc("claimdeck_audit_journal_up",
			"1 when the audit journal could be read for the override counters.", nil, nil),
	}
})

type descSet struct {
	tasks        *prometheus.Desc
	leaseAge     *prometheus.Desc
	stuck        *prometheus.Desc
	sourceUp     *prometheus.Desc
	pollSeconds  *prometheus.Desc
	polls        *prometheus.Desc
	pollErrors   *prometheus.Desc
	events       *prometheus.Desc
	nodeUp       *prometheus.Desc
	nodeLatency  *prometheus.Desc
	nodeFailures *prometheus.Desc
	overrides    *prometheus.Desc
	trailUp      *prometheus.Desc
	journalUp    *prometheus.Desc
}

// all lists every description, for Describe.
func (d *descSet) all() []*prometheus.Desc {
	return []*prometheus.Desc{d.tasks, d.leaseAge, d.stuck, d.sourceUp, d.pollSeconds, d.polls, d.pollErrors, d.events, d.nodeUp, d.nodeLatency, d.nodeFailures, d.overrides, d.trailUp, d.journalUp}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range descs().all() {
		ch <- d
	}
}

// stuckLevels are the ladder's rungs, each reported even at zero so that
// alert rules see the series.
var stuckLevels = []model.Level{model.LevelStale, model.LevelUrgent, model.LevelNotify, model.LevelEscalated}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	d := descs()
	now := c.cfg.Now()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetricWithCreatedTimestamp(d, prometheus.CounterValue, v, c.start, labels...)
	}
	snap := c.cfg.Tracker.Snapshot()
	for _, st := range snap.Sources {
		byState := map[model.State]int{}
		stuck := map[model.Level]int{}
		buckets := make(map[float64]uint64, len(LeaseAgeBuckets))
		for _, b := range LeaseAgeBuckets {
			buckets[b] = 0 // an empty bucket is still a bucket
		}
		var n uint64
		var sum float64
		for t := range st.Tasks.All() {
			byState[t.State]++
			if l := snap.Classify(t, now).Level; l != model.LevelNone {
				stuck[l]++
			}
			if t.State != model.StateClaimed || t.Claim().ClaimedAt.IsZero() {
				continue
			}
			age := max(now.Sub(t.Claim().ClaimedAt.Time()), 0).Seconds()
			n++
			sum += age
			for _, b := range LeaseAgeBuckets {
				if age <= b {
					buckets[b]++
				}
			}
		}
		for s := model.StateQueued; s <= model.StateCanceled; s++ {
			gauge(d.tasks, float64(byState[s]), st.Name, s.String())
		}
		if byState[model.StateUnknown] > 0 {
			gauge(d.tasks, float64(byState[model.StateUnknown]), st.Name, model.StateUnknown.String())
		}
		ch <- prometheus.MustNewConstHistogram(d.leaseAge, n, sum, buckets, st.Name)
		for _, l := range stuckLevels {
			gauge(d.stuck, float64(stuck[l]), st.Name, l.String())
		}
		up := 0.0
		if st.Status == hub.StatusOK {
			up = 1
		}
		gauge(d.sourceUp, up, st.Name)
		gauge(d.pollSeconds, st.PollTook.Seconds(), st.Name)
		counter(d.polls, float64(st.Polls), st.Name)
		counter(d.pollErrors, float64(st.PollErrs), st.Name)
	}
	for _, tot := range c.cfg.Tracker.Totals() {
		counter(d.events, float64(tot.Count), tot.Source, tot.Kind.String())
	}
	if snap.Mesh != nil {
		for _, nd := range snap.Mesh.Nodes() {
			up := 1.0
			if nd.Status == model.NodeDown {
				up = 0
			}
			gauge(d.nodeUp, up, nd.Name)
			gauge(d.nodeFailures, float64(nd.Failures), nd.Name)
			if k := len(nd.Latency); k > 0 {
				gauge(d.nodeLatency, nd.Latency[k-1].Seconds(), nd.Name)
			}
		}
	}
	if c.cfg.Trails != nil {
		recs, unread := c.cfg.Trails()
		c.cfg.Tracker.Overrides(recs)
		c.cfg.Tracker.OverridesUnread(unread)
		for _, st := range snap.Sources {
			up := 1.0
			if _, no := unread[st.Name]; no {
				up = 0
			}
			gauge(d.trailUp, up, st.Name)
		}
	} else if c.cfg.Journal != nil {
		recs, err := c.cfg.Journal()
		ok := 1.0
		if err != nil {
			ok = 0
		} else {
			c.cfg.Tracker.Overrides(recs)
		}
		gauge(d.journalUp, ok)
	}
	since := c.start
	if c.cfg.Trails != nil {
		since = time.Time{} // the feed counts from its baseline, read at the start
	}
	for _, o := range c.cfg.Tracker.OverrideTotals(since) {
		counter(d.overrides, float64(o.Count), string(o.Action), o.Result)
	}
}

// BuildInfo is claimdeck_build_info: 1, labelled with the binary's
// version, commit and Go version (model.Build), the usual way to join a
// version onto other series.
func BuildInfo(b model.BuildInfo) prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "claimdeck_build_info",
		Help: "1, labelled with the running binary's version, commit and Go version.",
		ConstLabels: prometheus.Labels{
			"version": b.String(), "revision": b.Revision, "goversion": b.Go,
		},
	})
	g.Set(1)
	return g
}

// Handler serves the collector's registry in the Prometheus text format,
// with errors reported in the response rather than logged: the fleet, the
// build, and the Go runtime's and the process's own collectors (go_*,
// process_*).
func Handler(c *Collector) (http.Handler, error) {
	reg := prometheus.NewRegistry()
	for _, col := range []prometheus.Collector{c, BuildInfo(model.Build()),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		if err := reg.Register(col); err != nil {
			return nil, err
		}
	}
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}), nil
}
