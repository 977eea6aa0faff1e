package sqlstore

import (
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/sources"
)

// The first screen, claim-next's queued candidate and the dashboard's
// windowed poll read indexes on SQLite: no sort of the whole queue, no scan
// of the history.
// SQLite plans without statistics here, as on a freshly created queue.
func TestSQLitePlansWalkIndexes(t *testing.T) {
	s := openSQLite(t, Config{Create: true})
	defer s.Close()
	fill(t, s, 1000)
	st, _ := s.stmts()
	horizon := s.d.timeArg(time.Now().Add(-24 * time.Hour))
	claimArgs, err := s.claimArgs(sources.ClaimRequest{Agent: "a"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what, sql string
		args      []any
		want      []string
		forbid    []string
	}{
		{"the first screen", st.first, []any{200}, []string{"pull_idx"}, []string{"TEMP B-TREE"}},
		{"claim-next's pick", st.pickNext, claimArgs, []string{"USING INDEX governance_tasks_pull_idx\n"}, nil},
		// (The status IS NULL branch plans a scan that a NOT NULL column
		// never runs; a nullable one searches an index.)
		{"the windowed poll", st.live, []any{horizon}, []string{"live_idx", "finished_idx (status=? AND updated_at>?)"}, []string{"(status=?)\n"}},
		{"the count of history", st.archived, []any{horizon}, []string{"COVERING INDEX governance_tasks_finished_idx (status=? AND updated_at<?)"}, nil},
	} {
		plan := sqlitePlan(t, s, c.sql, c.args...)
		for _, w := range c.want {
			if !strings.Contains(plan, w) {
				t.Errorf("%s: the plan lacks %q:\n%s", c.what, w, plan)
			}
		}
		for _, f := range c.forbid {
			if strings.Contains(plan, f) {
				t.Errorf("%s: the plan has %q:\n%s", c.what, strings.TrimSpace(f), plan)
			}
		}
	}
}
