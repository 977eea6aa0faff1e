package sourcetest

import (
	"context"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// returned wraps the source under test so that every write that answers
// with a task is held to it: the task returned is the task a fresh Get
// reads. Only single-writer cases use it; a concurrent writer could change
// the task between the two reads.
type returned struct {
	sources.Source
	t *testing.T
}

// raw is the source under test itself, for what the wrapper does not
// forward (Watch).
func (k *kit) raw() sources.Source {
	if r, ok := k.src.(returned); ok {
		return r.Source
	}
	return k.src
}

func (r returned) check(op string, got *model.Task, err error) (*model.Task, error) {
	if err != nil || got == nil {
		return got, err
	}
	r.t.Helper()
	fresh, gerr := r.Source.Get(context.Background(), got.ID)
	if gerr != nil {
		r.t.Fatalf("%s returned %s, but Get fails: %v", op, describe(got), gerr)
	}
	if diff := taskDiff(got, fresh); diff != "" {
		r.t.Fatalf("%s returned a task that differs from a fresh Get: %s", op, diff)
	}
	return got, err
}

// taskDiff names the first protocol field on which two reads differ.
func taskDiff(a, b *model.Task) string {
	fields := []struct {
		name string
		same bool
	}{
		{"id", a.ID == b.ID},
		{"state", a.State == b.State},
		{"holder", a.Claim().Holder == b.Claim().Holder && a.Claim().Name == b.Claim().Name},
		{"lock token", a.Claim().Token == b.Claim().Token},
		{"lock expiry", a.Claim().Expires.Time().Truncate(time.Second).Equal(b.Claim().Expires.Time().Truncate(time.Second))},
		{"reservation", a.ReservedFor() == b.ReservedFor()},
		{"escalation", a.Escalated == b.Escalated},
		{"title", a.Title == b.Title && a.Priority == b.Priority && a.Class == b.Class},
		{"reason", a.More().Reason == b.More().Reason},
		{"version", a.Version == b.Version},
	}
	for _, f := range fields {
		if !f.same {
			return f.name + ": returned " + describe(a) + " v" + a.Version + ", read " + describe(b) + " v" + b.Version
		}
	}
	return ""
}

func (r returned) Claim(ctx context.Context, id string, c sources.ClaimRequest) (*model.Task, error) {
	got, err := r.Source.Claim(ctx, id, c)
	return r.check("Claim", got, err)
}
func (r returned) ClaimNext(ctx context.Context, c sources.ClaimRequest) (*model.Task, error) {
	got, err := r.Source.ClaimNext(ctx, c)
	return r.check("ClaimNext", got, err)
}
func (r returned) Heartbeat(ctx context.Context, id, token string, lease time.Duration) (*model.Task, error) {
	got, err := r.Source.Heartbeat(ctx, id, token, lease)
	return r.check("Heartbeat", got, err)
}
func (r returned) Finish(ctx context.Context, id, token string, o sources.Outcome) (*model.Task, error) {
	got, err := r.Source.Finish(ctx, id, token, o)
	return r.check("Finish", got, err)
}
func (r returned) Takeover(ctx context.Context, id string, h sources.Human) (*model.Task, error) {
	got, err := r.Source.Takeover(ctx, id, h)
	return r.check("Takeover", got, err)
}
func (r returned) ForceRelease(ctx context.Context, id string, h sources.Human) (*model.Task, error) {
	got, err := r.Source.ForceRelease(ctx, id, h)
	return r.check("ForceRelease", got, err)
}
func (r returned) Cancel(ctx context.Context, id string, h sources.Human) (*model.Task, error) {
	got, err := r.Source.Cancel(ctx, id, h)
	return r.check("Cancel", got, err)
}
func (r returned) Handoff(ctx context.Context, id string, h sources.Handoff) (*model.Task, error) {
	got, err := r.Source.Handoff(ctx, id, h)
	return r.check("Handoff", got, err)
}
func (r returned) Update(ctx context.Context, id string, e sources.Edit) (*model.Task, error) {
	got, err := r.Source.Update(ctx, id, e)
	return r.check("Update", got, err)
}
func (r returned) Create(ctx context.Context, n sources.NewTask) (*model.Task, error) {
	got, err := r.Source.Create(ctx, n)
	return r.check("Create", got, err)
}

// Record forwards sources.Trail to the source under test when it is one;
// otherwise the kit's trail cases name what it lacks.
func (r returned) Record(ctx context.Context, id string, e model.Event) error {
	tr, ok := r.Source.(sources.Trail)
	if !ok {
		return model.Errorf(model.CodeMisconfigured, "record", id, "%s is no sources.Trail", r.Source.Name())
	}
	return tr.Record(ctx, id, e)
}
