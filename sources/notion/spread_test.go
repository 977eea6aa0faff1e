package notion

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// spread is one queue seen through several sources, as agents in separate
// processes see it: each call goes to the next source in turn, so no
// in-process guard stands between two contending calls and the kit
// measures the race Notion itself leaves open.
type spread struct {
	all  []*Source
	next atomic.Uint64
}

func (s *spread) pick() *Source { return s.all[s.next.Add(1)%uint64(len(s.all))] }

func (s *spread) Name() string       { return s.all[0].Name() }
func (s *spread) Caps() sources.Caps { return s.all[0].Caps() }
func (s *spread) Close() error {
	var errs []error
	for _, src := range s.all {
		errs = append(errs, src.Close())
	}
	return errors.Join(errs...)
}
func (s *spread) Poll(ctx context.Context, c sources.Cursor, opt ...sources.PollOption) (sources.Delta, error) {
	return s.pick().Poll(ctx, c, opt...)
}
func (s *spread) Archive(ctx context.Context, q sources.ArchiveQuery) ([]*model.Task, error) {
	return s.pick().Archive(ctx, q)
}
func (s *spread) Get(ctx context.Context, id string) (*model.Task, error) {
	return s.pick().Get(ctx, id)
}
func (s *spread) Create(ctx context.Context, n sources.NewTask) (*model.Task, error) {
	return s.pick().Create(ctx, n)
}
func (s *spread) Next(ctx context.Context, agent string) (*model.Task, error) {
	return s.pick().Next(ctx, agent)
}
func (s *spread) Claim(ctx context.Context, id string, c sources.ClaimRequest) (*model.Task, error) {
	return s.pick().Claim(ctx, id, c)
}
func (s *spread) ClaimNext(ctx context.Context, c sources.ClaimRequest) (*model.Task, error) {
	return s.pick().ClaimNext(ctx, c)
}
func (s *spread) Heartbeat(ctx context.Context, id, token string, lease time.Duration) (*model.Task, error) {
	return s.pick().Heartbeat(ctx, id, token, lease)
}
func (s *spread) Finish(ctx context.Context, id, token string, o sources.Outcome) (*model.Task, error) {
	return s.pick().Finish(ctx, id, token, o)
}
func (s *spread) Takeover(ctx context.Context, id string, h sources.Human) (*model.Task, error) {
	return s.pick().Takeover(ctx, id, h)
}
func (s *spread) ForceRelease(ctx context.Context, id string, h sources.Human) (*model.Task, error) {
	return s.pick().ForceRelease(ctx, id, h)
}
func (s *spread) Cancel(ctx context.Context, id string, h sources.Human) (*model.Task, error) {
	return s.pick().Cancel(ctx, id, h)
}
func (s *spread) Handoff(ctx context.Context, id string, h sources.Handoff) (*model.Task, error) {
	return s.pick().Handoff(ctx, id, h)
}
func (s *spread) Comment(ctx context.Context, id string, n sources.Note) error {
	return s.pick().Comment(ctx, id, n)
}
func (s *spread) Update(ctx context.Context, id string, e sources.Edit) (*model.Task, error) {
	return s.pick().Update(ctx, id, e)
}
func (s *spread) MarkEscalation(ctx context.Context, id, token string, level model.Level) error {
	return s.pick().MarkEscalation(ctx, id, token, level)
}
func (s *spread) CheckWrite(ctx context.Context) error { return s.pick().CheckWrite(ctx) }
func (s *spread) Record(ctx context.Context, id string, e model.Event) error {
	return s.pick().Record(ctx, id, e)
}
func (s *spread) TrailSince(ctx context.Context, since time.Time, limit int) ([]sources.TrailEntry, error) {
	return s.pick().TrailSince(ctx, since, limit)
}

var _ sources.Source = (*spread)(nil)
