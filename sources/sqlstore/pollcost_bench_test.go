package sqlstore

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

const pollCostApp = "claimdeck-pollcost"

// BenchmarkPostgresPollCost is what one dashboard's poll costs the server
// under churn: a table of 10,000 tasks, 30 of them retitled by another
// connection (one transaction each, as agents write) before each poll.
// The server's processor time is the poll connections' backends' own,
// read from /proc/PID/schedstat (nanoseconds on the CPU, not clock
// ticks), so the writer's backend and the rest of the machine are left
// out. With pg_stat_statements loaded it also splits the poll into
// planning and executing, as PostgreSQL counts them (wall time), and
// counts the statements and the round trips a poll makes.
//
// Every poll must return the 30 retitled tasks: a poll that misses a
// change fails the benchmark.
func BenchmarkPostgresPollCost(b *testing.B) {
	const rows, changed = 10000, 30
	ctx := context.Background()
	s := openPG(b, Config{Create: true, DSN: withParam(pgDSN(b), "application_name="+pollCostApp)})
	defer s.Close()
	fill(b, s, rows)
	analyze(b, s)
	w, err := pgx.Connect(ctx, pgDSN(b))
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close(ctx)
	stats := newPGStats(b)
	d, err := s.Poll(ctx, "")
	if err != nil || len(d.Tasks) != rows {
		b.Fatalf("first poll: %d tasks, %v", len(d.Tasks), err)
	}
	cursor := d.Cursor
	retitle := fmt.Sprintf("UPDATE %s SET title = $1 WHERE id = $2", s.table)
	round := func(i int) {
		for k := range changed {
			id := "bench-" + strconv.Itoa(1+(i*changed+k)%rows)
			if _, err := w.Exec(ctx, retitle, fmt.Sprintf("retitled %d", i), id); err != nil {
				b.Fatal(err)
			}
		}
		d, err := s.Poll(ctx, cursor)
		if err != nil {
			b.Fatal(err)
		}
		seen := 0
		for _, t := range d.Tasks {
			if t.Title == fmt.Sprintf("retitled %d", i) {
				seen++
			}
		}
		if seen != changed {
			b.Fatalf("poll %d: %d of the %d retitled tasks (%d tasks in all)", i, seen, changed, len(d.Tasks))
		}
		cursor = d.Cursor
	}
	const warm = 50 // past PostgreSQL's first custom plans
	for i := range warm {
		round(i)
	}
	onCPU := func() (ns int64, backends int) {
		var pids []string
		r, err := w.Query(ctx, "SELECT pid::text FROM pg_stat_activity WHERE application_name = $1", pollCostApp)
		if err != nil {
			b.Fatal(err)
		}
		var pid string
		if _, err := pgx.ForEachRow(r, []any{&pid}, func() error { pids = append(pids, pid); return nil }); err != nil {
			b.Fatal(err)
		}
		for _, pid := range pids {
			data, err := os.ReadFile("/proc/" + pid + "/schedstat")
			if err != nil {
				b.Skipf("the server's processes are not readable here: %v", err)
			}
			n, _ := strconv.ParseInt(strings.Fields(string(data))[0], 10, 64)
			ns += n
		}
		return ns, len(pids)
	}
	wasStats := stats.read()
	was, _ := onCPU()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		round(warm + i)
	}
	b.StopTimer()
	now, backends := onCPU()
	b.ReportMetric(float64(now-was)/1e3/float64(b.N), "server-µs/poll")
	b.ReportMetric(float64(backends), "backends")
	if !stats.statements {
		return
	}
	var plan, exec, calls float64
	for id, c := range stats.read().statements {
		p := wasStats.statements[id]
		if !strings.Contains(c.query, s.table) && !strings.Contains(c.query, "claimdeck_tombstones") && !strings.Contains(c.query, "txid_current_snapshot") && !strings.Contains(c.query, "set_config") {
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(c.query), "UPDATE") {
			continue // the writer's
		}
		plan += c.plan - p.plan
		exec += c.ms - p.ms
		calls += c.calls - p.calls
	}
	n := float64(b.N)
	b.ReportMetric(plan*1e3/n, "plan-µs/poll")
	b.ReportMetric(exec*1e3/n, "exec-µs/poll")
	b.ReportMetric(calls/n, "statements/poll")
}
