package sqlstore

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// fillTrail writes one audit row per task of a filled table, 26 seconds
// apart back from now: a trail of n rows of which the last hour holds
// about 138, whatever n.
func fillTrail(tb testing.TB, s *Store) {
	tb.Helper()
	q := fmt.Sprintf(`INSERT INTO claimdeck_audit (tbl, task_id, at, actor, action)
		SELECT %s, id, strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ', 'now', '-' || (CAST(substr(id, 7) AS INTEGER) * 26) || ' seconds'), 'agent', 'claim' FROM %s`,
		pgString(s.tag), s.table)
	if s.d.name == postgres.name {
		q = fmt.Sprintf(`INSERT INTO claimdeck_audit (tbl, task_id, at, actor, action)
			SELECT %s, id, now() - CAST(substr(id, 7) AS integer) * interval '26 seconds', 'agent', 'claim' FROM %s`, pgString(s.tag), s.table)
	}
	if _, err := s.db.exec(context.Background(), q); err != nil {
		tb.Fatalf("%v\n%s", err, q)
	}
}

// BenchmarkTrailSince reads the last hour of the trail (what `stats`
// reads per SQL source) from trails of 10,000 and 100,000 rows: one range
// of claimdeck_audit_at_idx, so the two cost alike. floor is a round trip
// that reads no table (SELECT now), in the same run.
func BenchmarkTrailSince(b *testing.B) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		for _, n := range []int{10_000, 100_000} {
			b.Run(fmt.Sprintf("%s/rows=%d", dialect, n), func(b *testing.B) {
				var s *Store
				if dialect == "sqlite" {
					s = openSQLite(b, Config{Create: true})
				} else {
					s = openPG(b, Config{Create: true})
				}
				defer s.Close()
				fill(b, s, n)
				fillTrail(b, s)
				ctx := context.Background()
				st, _ := s.stmts()
				b.Run("floor", func(b *testing.B) {
					for b.Loop() {
						var now any
						if err := s.db.queryRow(ctx, st.now).Scan(&now); err != nil {
							b.Fatal(err)
						}
					}
				})
				b.Run("last-hour", func(b *testing.B) {
					got := 0
					for b.Loop() {
						es, err := s.TrailSince(ctx, time.Now().Add(-time.Hour), 0)
						if err != nil {
							b.Fatal(err)
						}
						got = len(es)
					}
					b.ReportMetric(float64(got), "events")
				})
			})
		}
	}
}
