package cmdutil

import (
	"context"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/hub"
)

// dashboardEvery is how often a dashboard polls each source between the
// hints of a source that can watch.
const DashboardEvery = hub.DefaultEvery

// readHub is the hub a dashboard reads its sources with: the policy, the
// history window, every source polled each every. A relay reads with the
// same (relay.HubConfig over it), so what it serves is what a dashboard
// reading the store would see.
func (a *Env) ReadHub(policy model.Policy, every time.Duration, srcs ...sources.Source) hub.Config {
	hc := hub.Config{Policy: policy, Window: a.Cfg.HistoryWindow}
	for _, src := range srcs {
		hc.Feeds = append(hc.Feeds, hub.Feed{Source: src, Every: every})
	}
	return hc
}

// unavailable stands in for a source that failed to open, so the dashboard
// shows it degraded, with its error, beside the sources that work. Every
// call answers that error.
type unavailable struct {
	name string
	err  error
}

func (u unavailable) Name() string { return u.name }

func (u unavailable) Caps() sources.Caps {
	return sources.Caps{Lacks: []string{"everything: " + u.err.Error()}}
}

func (u unavailable) Close() error { return nil }

func (u unavailable) Poll(context.Context, sources.Cursor, ...sources.PollOption) (sources.Delta, error) {
	return sources.Delta{}, u.err
}

func (u unavailable) Archive(context.Context, sources.ArchiveQuery) ([]*model.Task, error) {
	return nil, u.err
}

func (u unavailable) Get(context.Context, string) (*model.Task, error) { return nil, u.err }

func (u unavailable) Create(context.Context, sources.NewTask) (*model.Task, error) {
	return nil, u.err
}

func (u unavailable) Next(context.Context, string) (*model.Task, error) { return nil, u.err }

func (u unavailable) Claim(context.Context, string, sources.ClaimRequest) (*model.Task, error) {
	return nil, u.err
}

func (u unavailable) ClaimNext(context.Context, sources.ClaimRequest) (*model.Task, error) {
	return nil, u.err
}

func (u unavailable) Heartbeat(context.Context, string, string, time.Duration) (*model.Task, error) {
	return nil, u.err
}

func (u unavailable) Finish(context.Context, string, string, sources.Outcome) (*model.Task, error) {
	return nil, u.err
}

func (u unavailable) Takeover(context.Context, string, sources.Human) (*model.Task, error) {
	return nil, u.err
}

func (u unavailable) ForceRelease(context.Context, string, sources.Human) (*model.Task, error) {
	return nil, u.err
}

func (u unavailable) Cancel(context.Context, string, sources.Human) (*model.Task, error) {
	return nil, u.err
}

func (u unavailable) Handoff(context.Context, string, sources.Handoff) (*model.Task, error) {
	return nil, u.err
}

func (u unavailable) Comment(context.Context, string, sources.Note) error { return u.err }

func (u unavailable) Update(context.Context, string, sources.Edit) (*model.Task, error) {
	return nil, u.err
}

func (u unavailable) MarkEscalation(context.Context, string, string, model.Level) error { return u.err }

func (u unavailable) CheckWrite(context.Context) error { return u.err }
