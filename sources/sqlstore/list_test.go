package sqlstore

import (
	"context"
	"slices"
	"testing"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// list --status READY --limit 20 through sources.List reads the first
// screen from the pull-order index, and answers what reading every task
// answers: the same 20 tasks in the same order, and that more follow.
func TestListFirstQueuedIsTheFullListsHead(t *testing.T) {
	for _, open := range []func(testing.TB, Config) *Store{openSQLite, openPG} {
		s := open(t, Config{Create: true})
		defer s.Close()
		fillQueue(t, s, 1000)
		ctx := context.Background()
		all, more, err := sources.List(ctx, s, model.StateQueued, 0)
		if err != nil || more != 0 || len(all) < 100 {
			t.Fatalf("%s: the whole list: %d tasks, %d more, %v", s.d.name, len(all), more, err)
		}
		first, more, err := sources.List(ctx, s, model.StateQueued, 20)
		if err != nil {
			t.Fatal(err)
		}
		ids := func(ts []*model.Task) []string {
			var out []string
			for _, t := range ts {
				out = append(out, t.ID)
			}
			return out
		}
		if !slices.Equal(ids(first), ids(all[:20])) || more != sources.MoreUncounted {
			t.Errorf("%s: the first 20 queued: %v, %d more; reading every task: %v", s.d.name, ids(first), more, ids(all[:20]))
		}
		for _, task := range first {
			if task.State != model.StateQueued {
				t.Errorf("%s: %s is %s", s.d.name, task.ID, task.State)
			}
		}
	}
}
