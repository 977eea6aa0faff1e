package mesh

import (
	"context"
	"net/http"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

// NodeHandler is one node of the mesh as `claimdeck node serve` and the
// demo run it: `POST /hooks/health` answered by status, `POST /hooks/agent`
// recorded in inbox, both behind the node's bearer token.
func NodeHandler(name string, token Token, status func(ctx context.Context) (HealthReport, error), inbox *Inbox) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/hooks/health", Handler(name, token.Reveal(), status))
	mux.Handle("/hooks/agent", inbox)
	return mux
}

// StatusFrom builds the health of the node called node, whose agents are
// listed, from a full poll of every source (see ReportFor). A source that
// cannot be read makes the node "degraded" rather than unanswering: the
// poller then shows the trouble without counting it towards DOWN, which
// would hand the node's live claims to others.
func StatusFrom(node string, agents []string, srcs []TaskSource, now func() time.Time) func(ctx context.Context) (HealthReport, error) {
	return func(ctx context.Context) (HealthReport, error) {
		var tasks []*model.Task
		failed := false
		for _, src := range srcs {
			d, err := src.Poll(ctx, "")
			if err != nil {
				failed = true
				continue
			}
			tasks = append(tasks, d.Tasks...)
		}
		rep := ReportFor(node, agents, tasks, now())
		if failed {
			rep.Status = "degraded"
		}
		return rep, nil
	}
}
