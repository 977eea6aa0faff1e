package tui

import (
	"slices"
	"strconv"
	"time"

	"github.com/claimdeck/claimdeck/sources/stats"
)

// statsRow is one line of the Stats view: everything, a source, an agent
// or a node, with its numbers from the stats tracker.
type statsRow struct {
	kind string
	g    stats.Group
}

// statsMsg carries a report computed off the UI loop.
type statsMsg stats.Report

// throughputWidth is the cells of a per-minute sparkline: the hour in
// five-minute steps.
const throughputWidth = 12

func statsColumns() []column {
	return []column{
		{title: "OF", width: 6}, {title: "NAME"},
		{title: "CLAIMS/H", width: throughputWidth + 5, drop: 2}, {title: "DONE/H", width: throughputWidth + 5, drop: 1},
		{title: "FAIL", width: 4, right: true, drop: 3}, {title: "BLOCK", width: 5, right: true, drop: 4},
		{title: "WAIT 50/95", width: 10, right: true, drop: 5}, {title: "WORK 50/95", width: 10, right: true, drop: 6},
		{title: "LEASE", width: 5, right: true, drop: 7}, {title: "GAP95", width: 5, right: true, drop: 8},
		{title: "HUMAN", width: 5, right: true, drop: 9},
	}
}

// setStats lays a report out as the view's rows: everything first, then
// sources, agents and nodes by name.
func (b *board) setStats(r stats.Report) {
	rows := []statsRow{{kind: "all", g: r.Overall}}
	for _, part := range []struct {
		kind   string
		groups []stats.Group
	}{{"source", r.Sources}, {"agent", r.Agents}, {"node", r.Nodes}} {
		for _, g := range part.groups {
			rows = append(rows, statsRow{kind: part.kind, g: g})
		}
	}
	p := b.panes[statsView]
	p.stats = rows
	p.grid.SetLen(len(rows))
}

func (pn rowPen) statsCells(r statsRow, cells []cell) {
	ps := pn.paints
	g := r.g
	cells[0] = cell{text: r.kind, paint: &ps.muted}
	cells[1] = cell{text: orDash(g.Name)}
	if r.kind == "source" {
		cells[1].paint = ps.source(g.Name)
	}
	if r.kind == "all" {
		cells[1].text = "every source"
	}
	cells[2] = cell{text: throughput(g.Claims), paint: &ps.info}
	cells[3] = cell{text: throughput(g.Completions), paint: &ps.ok}
	cells[4] = cell{text: count(g.Failures.Total)}
	if g.Failures.Total > 0 {
		cells[4].paint = &ps.danger
	}
	cells[5] = cell{text: count(g.Blocks.Total)}
	if g.Blocks.Total > 0 {
		cells[5].paint = &ps.warn
	}
	cells[6] = cell{text: pn.pace.pairOf(g.QueueWait)}
	cells[7] = cell{text: pn.pace.pairOf(g.WorkTime)}
	cells[8] = cell{text: pn.pace.secondsOr(g.LeaseAge.N, g.LeaseAge.P50)}
	cells[9] = cell{text: pn.pace.secondsOr(g.HeartbeatGap.N, g.HeartbeatGap.P95)}
	n := 0
	for _, v := range g.Overrides {
		n += v
	}
	cells[10] = cell{text: count(n)}
	if n > 0 {
		cells[10].paint = &ps.accent
	}
}

// throughput is the hour as a sparkline, one cell per five minutes, then
// the hour's total.
func throughput(s stats.Series) string {
	return spark(s.PerMinute, throughputWidth) + " " + fitRight(strconv.Itoa(s.Total), 4)
}

// spark sums counts into width cells and draws them from zero up to the
// busiest; any event at all shows above the floor.
func spark(counts []int, width int) string {
	if len(counts) == 0 {
		return ""
	}
	per := max(len(counts)/width, 1)
	sums := make([]int, 0, width)
	for i := 0; i+per <= len(counts); i += per {
		n := 0
		for _, c := range counts[i : i+per] {
			n += c
		}
		sums = append(sums, n)
	}
	hi := max(slices.Max(sums), 1)
	out := make([]rune, len(sums))
	for i, n := range sums {
		level := 0
		if n > 0 {
			level = max(1, (n*(len(sparks)-1)+hi-1)/hi)
		}
		out[i] = sparks[level]
	}
	return string(out)
}

func count(n int) string {
	if n == 0 {
		return "·"
	}
	return strconv.Itoa(n)
}

// pairOf is p50/p95 in the dashboard's time (the demo's when it runs faster).
func (p pace) pairOf(q stats.Quantiles) string {
	if q.N == 0 {
		return "—"
	}
	return p.secs(q.P50) + "/" + p.secs(q.P95)
}

func (p pace) secondsOr(n int, s float64) string {
	if n == 0 {
		return "—"
	}
	return p.secs(s)
}

func (p pace) secs(s float64) string { return p.span(time.Duration(s * float64(time.Second))) }
