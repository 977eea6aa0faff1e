package lincheck_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/sourcetest/lincheck"
	"github.com/claimdeck/claimdeck/sources/sourcetest/memsource"
)

const (
	lease = 3 * time.Second
	grace = 2 * time.Second
)

var rules = lincheck.Rules{Grace: grace, Rescue: true, Lease: lease, Timeout: time.Minute}

// clock is the queue's clock and the history's: every reading moves it on
// a microsecond, so each operation's window holds the instant the queue
// judged it at; Advance lets leases end without waiting for them.
type clock struct{ ns atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ns.Store(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *clock) Now() time.Time          { return time.Unix(0, c.ns.Add(1000)).UTC() }
func (c *clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// recorder calls a source and writes down each call as a history does.
type recorder struct {
	src   sources.Source
	clock *clock
	mu    sync.Mutex
	ops   []lincheck.Op
}

func seenOf(t *model.Task) lincheck.Seen {
	return lincheck.Seen{Task: t.ID, State: t.State.String(), Holder: t.Claim().Holder.String(), Token: t.Claim().Token, Expires: t.Claim().Expires.Time()}
}

func (r *recorder) do(client int, o lincheck.Op, f func() (*model.Task, error)) (*model.Task, error) {
	o.Client, o.Call = client, r.clock.Now()
	t, err := f()
	o.Return = r.clock.Now()
	var me *model.Error
	switch {
	case errors.As(err, &me):
		o.Result = string(me.Code)
	case err != nil:
		o.Result = lincheck.Unknown
	case t == nil:
		o.Result = lincheck.None
	default:
		o.Result = lincheck.OK
		o.Seen = []lincheck.Seen{seenOf(t)}
	}
	r.mu.Lock()
	r.ops = append(r.ops, o)
	r.mu.Unlock()
	return t, err
}

func (r *recorder) read(client int) {
	o := lincheck.Op{Client: client, Kind: lincheck.Read, Call: r.clock.Now(), Result: lincheck.OK}
	d, err := r.src.Poll(context.Background(), "")
	if err != nil {
		panic(err)
	}
	o.Return = r.clock.Now()
	for _, t := range d.Tasks {
		o.Seen = append(o.Seen, seenOf(t))
	}
	r.mu.Lock()
	r.ops = append(r.ops, o)
	r.mu.Unlock()
}

// work runs agents against src in rounds. Each round: new tasks, fewer
// than the agents, so agents meet on them; every agent claims one; the
// holders heartbeat; their leases end; holders heartbeat again and the
// others try claim-next before the grace is over; the grace ends; the
// others rescue the tasks; the first holders, now stale, complete, as do
// the rescuers; an operator takes one task over and releases it, and a
// rescuer hands its task on. All calls of a step run at once.
func work(t *testing.T, src sources.Source, c *clock) []lincheck.Op {
	const agents, rounds = 6, 12
	ctx := context.Background()
	rec := &recorder{src: src, clock: c}
	operator := agents
	all := func(f func(i int)) {
		var wg sync.WaitGroup
		for i := range agents {
			wg.Go(func() { f(i) })
		}
		wg.Wait()
	}
	name := func(i int) string { return fmt.Sprintf("agent-%d", i) }
	for round := range rounds {
		var ids []string
		for k := range agents / 2 {
			n := sources.NewTask{Title: fmt.Sprintf("task %d.%d", round, k)}
			task, err := rec.do(operator, lincheck.Op{Kind: lincheck.Create, Task: "?"}, func() (*model.Task, error) { return src.Create(ctx, n) })
			if err != nil {
				t.Fatal(err)
			}
			rec.ops[len(rec.ops)-1].Task = task.ID
			ids = append(ids, task.ID)
		}
		held := make([]*model.Task, agents)
		all(func(i int) {
			id := ids[i%len(ids)]
			req := sources.ClaimRequest{Agent: name(i), Lease: lease}
			held[i], _ = rec.do(i, lincheck.Op{Kind: lincheck.Claim, Task: id, Agent: name(i), Lease: lease},
				func() (*model.Task, error) { return src.Claim(ctx, id, req) })
		})
		heartbeat := func(i int) {
			if h := held[i]; h != nil {
				_, _ = rec.do(i, lincheck.Op{Kind: lincheck.Heartbeat, Task: h.ID, Token: h.Claim().Token, Lease: lease},
					func() (*model.Task, error) { return src.Heartbeat(ctx, h.ID, h.Claim().Token, lease) })
			}
		}
		all(heartbeat)
		c.Advance(lease + grace/2)
		rescued := make([]*model.Task, agents)
		claimNext := func(i int) {
			if held[i] == nil && rescued[i] == nil {
				req := sources.ClaimRequest{Agent: name(i), Lease: lease}
				rescued[i], _ = rec.do(i, lincheck.Op{Kind: lincheck.ClaimNext, Agent: name(i), Lease: lease},
					func() (*model.Task, error) { return src.ClaimNext(ctx, req) })
			}
		}
		all(func(i int) { heartbeat(i); claimNext(i) })
		c.Advance(grace)
		all(claimNext)
		finish := func(i int, h *model.Task) {
			if h != nil {
				o := sources.Outcome{State: model.StateDone}
				_, _ = rec.do(i, lincheck.Op{Kind: lincheck.Finish, Task: h.ID, Token: h.Claim().Token, Outcome: "done"},
					func() (*model.Task, error) { return src.Finish(ctx, h.ID, h.Claim().Token, o) })
			}
		}
		var first *model.Task
		for _, r := range rescued {
			if r != nil && first == nil {
				first = r
			}
		}
		if first != nil && round%2 == 0 {
			// an operator takes one rescued task over, then puts it back
			took, err := rec.do(operator, lincheck.Op{Kind: lincheck.Takeover, Task: first.ID},
				func() (*model.Task, error) {
					return src.Takeover(ctx, first.ID, sources.Human{Actor: "ops", Expect: first.Version})
				})
			if err == nil {
				_, _ = rec.do(operator, lincheck.Op{Kind: lincheck.ForceRelease, Task: first.ID},
					func() (*model.Task, error) {
						return src.ForceRelease(ctx, first.ID, sources.Human{Actor: "ops", Expect: took.Version})
					})
			}
		}
		all(func(i int) {
			finish(i, held[i])
			if r := rescued[i]; r != nil && r != first && i%3 == 0 {
				h := sources.Handoff{Human: sources.Human{Actor: name(i)}, Token: r.Claim().Token, To: model.AnyAgent}
				_, _ = rec.do(i, lincheck.Op{Kind: lincheck.Handoff, Task: r.ID, Token: r.Claim().Token, Outcome: model.AnyAgent},
					func() (*model.Task, error) { return src.Handoff(ctx, r.ID, h) })
				return
			}
			finish(i, rescued[i])
		})
		rec.read(operator)
	}
	return rec.ops
}

func memory(c *clock, grace time.Duration) *memsource.Memory {
	m := memsource.NewMemory("mem")
	m.Now, m.Grace = c.Now, grace
	return m
}

// check runs the checker and, on a violation, saves Porcupine's view
// beside the test's history.
func check(t *testing.T, ops []lincheck.Op) lincheck.Report {
	t.Helper()
	rep := lincheck.Check(ops, rules)
	t.Log(rep)
	if !rep.Linearizable() {
		html := filepath.Join(t.TempDir(), "history.html")
		if err := rep.Visualize(html); err != nil {
			t.Fatalf("visualize: %v", err)
		}
		if fi, err := os.Stat(html); err != nil || fi.Size() == 0 {
			t.Fatalf("no visualization written: %v", err)
		}
	}
	return rep
}

func TestCorrectQueueIsLinearizable(t *testing.T) {
	c := newClock()
	ops := work(t, memory(c, grace), c)
	rep := check(t, ops)
	if !rep.Linearizable() {
		t.Fatalf("the in-memory queue's history is not linearizable: %s", rep)
	}
	// The CLI's reads show a prefix of each token, the whole token only to
	// its holder: the same history read that way is the same run.
	if shown := check(t, shownReads(ops)); !shown.Linearizable() {
		t.Fatalf("the history with reads showing token prefixes is not linearizable: %s", shown)
	}
	for _, k := range []lincheck.Kind{lincheck.Create, lincheck.Claim, lincheck.ClaimNext, lincheck.Heartbeat,
		lincheck.Finish, lincheck.Takeover, lincheck.ForceRelease, lincheck.Handoff, lincheck.Read} {
		if rep.Kinds[k] == 0 {
			t.Errorf("the workload made no %s: the history checks less than it claims", k)
		}
	}
}

// A broken variant must be caught: its history is not linearizable.
func requireCaught(t *testing.T, src sources.Source, c *clock) {
	t.Helper()
	ops := work(t, src, c)
	if rep := check(t, ops); len(rep.Illegal) == 0 {
		t.Fatalf("the checker passed a broken queue: %s", rep)
	}
	if rep := check(t, shownReads(ops)); len(rep.Illegal) == 0 {
		t.Fatalf("the checker passed a broken queue read through token prefixes: %s", rep)
	}
}

// shownReads is the history as the CLI's reads show it: every read's token
// cut to the prefix `list` and `get` print (model.ShownToken).
func shownReads(ops []lincheck.Op) []lincheck.Op {
	out := slices.Clone(ops)
	for i := range out {
		if out[i].Kind != lincheck.Read {
			continue
		}
		seen := slices.Clone(out[i].Seen)
		for j := range seen {
			seen[j].Token = model.ShownToken(seen[j].Token)
		}
		out[i].Seen = seen
	}
	return out
}

// broken is the in-memory queue with one rule taken out. Its writes go
// through Get and Put under its own lock.
type broken struct {
	*memsource.Memory
	clock  *clock
	mu     sync.Mutex
	issued map[string]map[string]bool // task → every token it was claimed with
}

func newBroken(c *clock) *broken {
	return &broken{Memory: memory(c, grace), clock: c, issued: map[string]map[string]bool{}}
}

func (b *broken) grant(t *model.Task, agent string, held bool) *model.Task {
	now := b.clock.Now()
	t.State, t.RawStatus = model.StateClaimed, "claimed"
	if held {
		t.EditClaim().Expires = model.StampOf(now.Add(lease))
	} else {
		t.SetClaim(model.Claim{Holder: model.HolderAgent, Name: agent, Token: uuid.NewString(), ClaimedAt: model.StampOf(now), HeartbeatAt: model.StampOf(now), Expires: model.StampOf(now.Add(lease))})
	}
	return b.Put(t)
}

// claimAnyway claims a task whoever holds it: a claim without its condition.
type claimAnyway struct{ *broken }

func (b claimAnyway) Claim(ctx context.Context, id string, c sources.ClaimRequest) (*model.Task, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, err := b.Get(ctx, id)
	if err != nil || t.State.Final() {
		return nil, model.Errorf(model.CodeConflict, "claim", id, "final")
	}
	return b.grant(t, c.Agent, false), nil
}

// reviving heartbeats any claim whose token matches, expired or not.
type reviving struct{ *broken }

func (b reviving) Heartbeat(ctx context.Context, id, token string, _ time.Duration) (*model.Task, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, err := b.Get(ctx, id)
	if err != nil || t.State != model.StateClaimed || t.Claim().Token != token {
		return nil, sources.Lost("heartbeat", id)
	}
	return b.grant(t, "", true), nil
}

// staleComplete accepts a complete from any token the task was ever
// claimed with.
type staleComplete struct{ *broken }

func (b staleComplete) remember(t *model.Task, err error) (*model.Task, error) {
	if t != nil {
		b.mu.Lock()
		if b.issued[t.ID] == nil {
			b.issued[t.ID] = map[string]bool{}
		}
		b.issued[t.ID][t.Claim().Token] = true
		b.mu.Unlock()
	}
	return t, err
}

func (b staleComplete) Claim(ctx context.Context, id string, c sources.ClaimRequest) (*model.Task, error) {
	return b.remember(b.Memory.Claim(ctx, id, c))
}

func (b staleComplete) ClaimNext(ctx context.Context, c sources.ClaimRequest) (*model.Task, error) {
	return b.remember(b.Memory.ClaimNext(ctx, c))
}

func (b staleComplete) Finish(ctx context.Context, id, token string, o sources.Outcome) (*model.Task, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, err := b.Get(ctx, id)
	if err != nil || t.State.Final() || !b.issued[id][token] {
		return nil, sources.Lost("finish", id)
	}
	t.State, t.RawStatus = o.State, o.State.String()
	t.SetClaim(model.Claim{})
	return b.Put(t), nil
}

func TestCaughtClaimWithoutItsCondition(t *testing.T) {
	c := newClock()
	requireCaught(t, claimAnyway{newBroken(c)}, c)
}

func TestCaughtHeartbeatThatRevivesAnExpiredToken(t *testing.T) {
	c := newClock()
	requireCaught(t, reviving{newBroken(c)}, c)
}

func TestCaughtCompleteFromAStaleToken(t *testing.T) {
	c := newClock()
	requireCaught(t, staleComplete{newBroken(c)}, c)
}

// The queue rescues the moment a lease ends, while the team's grace says
// to wait.
func TestCaughtRescueBeforeTheGrace(t *testing.T) {
	c := newClock()
	requireCaught(t, memory(c, 0), c)
}
