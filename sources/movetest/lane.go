// Package movetest runs agents through a move and judges what they did:
// the fault suite's move lane, kept beside the sources so that it runs on
// every backend pair without the binary. Agents claim, heartbeat and
// complete through sources.Follow — some holding one source for the whole
// run as the MCP server and the dashboard do, some opening it for every
// call as the command line does — while the queue moves under them; some
// agents are killed holding a claim, and another rescues the task once
// the lease and the grace are over. One agent holds a claim from before
// the move to after it, heartbeating throughout.
//
// Every call is written down as a lincheck history; at the end the
// origin's and the target's trails are read as one (lincheck.Join) and
// the history is checked for linearizability. Run also counts what the
// checker would only imply: completions answered twice, completions the
// target does not show, writes the origin took after the move, and any
// MISCONFIGURED answer (an agent would drop its claim).
package movetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/sourcetest/lincheck"
)

// Open opens a configured source by name, as it is in its store (not
// followed); prepare makes its store where there is none.
type Open func(ctx context.Context, name string, prepare bool) (sources.Source, error)

// Config says what a lane runs.
type Config struct {
	From, To string
	Open     Open
	// Agents work the queue (default 8): even ones hold their source for
	// the run, odd ones open it for every call.
	Agents int
	// Tasks are made in the origin before the agents start (default 40).
	Tasks int
	// Kills is how many times an agent is killed holding a claim (default
	// 2): it never heartbeats or completes that claim.
	Kills int
	// Lease is the lease agents ask for; Grace the sources' grace (the
	// rescue of a killed agent's task waits for both).
	Lease, Grace time.Duration
	// MoveAfter is how many completions the move waits for (default a
	// quarter of the tasks).
	MoveAfter int
	// Timeout bounds the whole run (default 2 minutes).
	Timeout time.Duration
}

// Result is what a lane saw.
type Result struct {
	Move    sources.MoveReport
	DryRun  sources.MoveReport
	Ops     []lincheck.Op
	Lin     lincheck.Report
	Elapsed time.Duration
	// Frozen counts the retryable answers agents got while the origin was
	// frozen; CarriedBeats the carried claim's heartbeats answered ok
	// after the move was marked.
	Frozen, CarriedBeats int
	// Problems are the violations found, in words; none means the lane
	// passed.
	Problems []string
}

const (
	carrierClient = 1000
	moverClient   = 1001
)

type lane struct {
	cfg   Config
	start time.Time

	mu       sync.Mutex
	ops      []lincheck.Op
	problems []string
	finished map[string]int // complete answered ok, per task
	kills    int

	completed atomic.Int64
	frozen    atomic.Int64
	movedAt   atomic.Int64 // unix ns when the move returned; 0 before
	beats     atomic.Int64
	stop      atomic.Bool
}

func (l *lane) problem(format string, args ...any) {
	l.mu.Lock()
	l.problems = append(l.problems, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

// follow opens name as every door does: followed through moves.
func (l *lane) follow(ctx context.Context, name string) (sources.Source, error) {
	s, err := l.cfg.Open(ctx, name, false)
	if err != nil {
		return nil, err
	}
	return sources.Follow(s, l.follow), nil
}

func seenOf(t *model.Task) lincheck.Seen {
	s := lincheck.Seen{Task: t.ID, State: t.State.String(), Holder: t.Claim().Holder.String(), Token: t.Claim().Token, Expires: t.Claim().Expires.Time()}
	for _, e := range t.More().History {
		s.Trail = append(s.Trail, lincheck.Event{At: e.At, Actor: e.Actor, Action: e.Action})
	}
	return s
}

// do makes one call and writes it down. API_ERROR leaves the outcome
// unknown to the checker (a write may land before a failure), the
// freeze's answer included: the checker is weaker for it, never wrong.
func (l *lane) do(o lincheck.Op, f func() (*model.Task, error)) (*model.Task, error) {
	o.Call = time.Now()
	t, err := f()
	o.Return = time.Now()
	switch code := model.CodeOf(err); {
	case err == nil && t == nil:
		o.Result = lincheck.None
	case err == nil:
		o.Result = lincheck.OK
		o.Seen = []lincheck.Seen{seenOf(t)}
		if o.Task == "" {
			o.Task = t.ID
		}
	case code == model.CodeAPIError:
		o.Result = lincheck.Unknown
		if errors.Is(err, sources.ErrFrozen) {
			l.frozen.Add(1)
		}
	default:
		o.Result = string(code)
		if code == model.CodeMisconfigured {
			l.problem("client %d: %s %s answered MISCONFIGURED: %v", o.Client, o.Kind, o.Task, err)
		}
	}
	l.mu.Lock()
	l.ops = append(l.ops, o)
	l.mu.Unlock()
	return t, err
}

// Run runs the lane: it makes the tasks, starts the agents and the
// carried claim, runs the dry run and then the move once MoveAfter tasks
// are complete, waits for every task to be done, and judges the run.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.Agents <= 0 {
		cfg.Agents = 8
	}
	if cfg.Tasks <= 0 {
		cfg.Tasks = 40
	}
	if cfg.Kills < 0 {
		cfg.Kills = 0
	} else if cfg.Kills == 0 {
		cfg.Kills = 2
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 2 * time.Second
	}
	if cfg.Grace <= 0 {
		cfg.Grace = time.Second
	}
	if cfg.MoveAfter <= 0 {
		cfg.MoveAfter = cfg.Tasks / 4
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	l := &lane{cfg: cfg, start: time.Now(), finished: map[string]int{}}
	var res Result

	origin, err := cfg.Open(ctx, cfg.From, true)
	if err != nil {
		return res, err
	}
	defer origin.Close()
	ids := make([]string, cfg.Tasks)
	for i := range ids {
		n := sources.NewTask{ID: fmt.Sprintf("move-%03d", i), Title: fmt.Sprintf("task %d", i), Priority: i % 3}
		ids[i] = n.ID
		if _, err := l.do(lincheck.Op{Client: moverClient, Kind: lincheck.Create, Task: n.ID}, func() (*model.Task, error) { return origin.Create(ctx, n) }); err != nil {
			return res, fmt.Errorf("making task %s: %w", n.ID, err)
		}
	}

	var wg sync.WaitGroup
	carried := make(chan struct{})
	wg.Go(func() { l.carrier(ctx, carried) })
	<-carried // the carried claim is held before anyone else claims
	for i := range cfg.Agents {
		wg.Go(func() { l.agent(ctx, i) })
	}
	var moveErr error
	wg.Go(func() { res.DryRun, res.Move, moveErr = l.mover(ctx, origin) })
	wg.Wait()
	res.Elapsed = time.Since(l.start)
	if moveErr != nil {
		return res, moveErr
	}
	if ctx.Err() != nil {
		l.problem("the run did not end within %s: %d of %d tasks completed", cfg.Timeout, l.completed.Load(), cfg.Tasks)
	}
	l.judge(context.WithoutCancel(ctx), origin, ids)
	res.Ops, res.Problems = l.ops, l.problems
	res.Frozen, res.CarriedBeats = int(l.frozen.Load()), int(l.beats.Load())
	res.Lin = lincheck.Check(res.Ops, lincheck.Rules{Grace: cfg.Grace, Rescue: true, Lease: cfg.Lease, Resolution: time.Millisecond, Timeout: time.Minute})
	if !res.Lin.Linearizable() {
		res.Problems = append(res.Problems, "history: "+res.Lin.String())
	}
	return res, nil
}

// retry makes a call again while it answers API_ERROR (the freeze, a
// target that did not answer), as agents do on ntask's exit 30.
func (l *lane) retry(ctx context.Context, o lincheck.Op, f func() (*model.Task, error)) (*model.Task, error) {
	for {
		t, err := l.do(o, f)
		if model.CodeOf(err) != model.CodeAPIError || ctx.Err() != nil {
			return t, err
		}
		time.Sleep(time.Duration(2+rand.IntN(5)) * time.Millisecond)
	}
}

// with runs f on the source as agent i holds it: for the whole run (even
// i), or opened for this call alone (odd i, as the command line does).
func (l *lane) with(ctx context.Context, i int, held *sources.Source, f func(s sources.Source) (*model.Task, error)) (*model.Task, error) {
	if i%2 == 0 {
		if *held == nil {
			s, err := l.follow(ctx, l.cfg.From)
			if err != nil {
				return nil, err
			}
			*held = s
		}
		return f(*held)
	}
	s, err := l.follow(ctx, l.cfg.From)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return f(s)
}

func (l *lane) agent(ctx context.Context, i int) {
	name := fmt.Sprintf("agent-%d", i)
	var held sources.Source
	defer func() {
		if held != nil {
			held.Close()
		}
	}()
	req := sources.ClaimRequest{Agent: name, Lease: l.cfg.Lease}
	for ctx.Err() == nil && !l.stop.Load() {
		t, err := l.retry(ctx, lincheck.Op{Client: i, Kind: lincheck.ClaimNext, Agent: name, Lease: l.cfg.Lease}, func() (*model.Task, error) {
			return l.with(ctx, i, &held, func(s sources.Source) (*model.Task, error) { return s.ClaimNext(ctx, req) })
		})
		if err != nil || t == nil {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		id, token := t.ID, t.Claim().Token
		if l.kill() {
			// killed holding the claim: a new process of the same agent
			// starts, knowing nothing of it
			if held != nil {
				held.Close()
				held = nil
			}
			continue
		}
		lost := false
		for range 2 {
			time.Sleep(time.Duration(1+rand.IntN(8)) * time.Millisecond)
			_, err := l.retry(ctx, lincheck.Op{Client: i, Kind: lincheck.Heartbeat, Task: id, Token: token, Lease: l.cfg.Lease}, func() (*model.Task, error) {
				return l.with(ctx, i, &held, func(s sources.Source) (*model.Task, error) { return s.Heartbeat(ctx, id, token, l.cfg.Lease) })
			})
			if err != nil {
				lost = true
				break
			}
		}
		if lost {
			continue
		}
		l.complete(ctx, i, &held, id, token)
	}
}

// kill says whether the agent dies holding the claim it just got.
func (l *lane) kill() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.kills >= l.cfg.Kills || rand.IntN(4) != 0 {
		return false
	}
	l.kills++
	return true
}

func (l *lane) complete(ctx context.Context, i int, held *sources.Source, id, token string) {
	o := sources.Outcome{State: model.StateDone, Reason: "done by the move lane"}
	_, err := l.retry(ctx, lincheck.Op{Client: i, Kind: lincheck.Finish, Task: id, Token: token, Outcome: "done"}, func() (*model.Task, error) {
		return l.with(ctx, i, held, func(s sources.Source) (*model.Task, error) { return s.Finish(ctx, id, token, o) })
	})
	if err != nil {
		return
	}
	l.mu.Lock()
	l.finished[id]++
	l.mu.Unlock()
	if int(l.completed.Add(1)) == l.cfg.Tasks {
		l.stop.Store(true)
	}
}

// carrier holds one claim from before the move to after it: it
// heartbeats until three heartbeats after the move was marked have been
// answered, then completes.
func (l *lane) carrier(ctx context.Context, ready chan<- struct{}) {
	const name = "carrier"
	var held sources.Source
	defer func() {
		if held != nil {
			held.Close()
		}
	}()
	// Its lease outlasts a freeze on a loaded machine: what is proved is
	// that the token works across the move, not how long a move takes.
	lease := 5 * l.cfg.Lease
	req := sources.ClaimRequest{Agent: name, Lease: lease}
	t, err := l.retry(ctx, lincheck.Op{Client: carrierClient, Kind: lincheck.ClaimNext, Agent: name, Lease: lease}, func() (*model.Task, error) {
		return l.with(ctx, carrierClient, &held, func(s sources.Source) (*model.Task, error) { return s.ClaimNext(ctx, req) })
	})
	close(ready)
	if err != nil || t == nil {
		l.problem("the carried claim was not made: %v", err)
		return
	}
	id, token := t.ID, t.Claim().Token
	for ctx.Err() == nil {
		time.Sleep(l.cfg.Lease / 8)
		// odd client: opened for every call, as an agent's command line
		_, err := l.retry(ctx, lincheck.Op{Client: carrierClient, Kind: lincheck.Heartbeat, Task: id, Token: token, Lease: lease}, func() (*model.Task, error) {
			return l.with(ctx, carrierClient+1, &held, func(s sources.Source) (*model.Task, error) { return s.Heartbeat(ctx, id, token, lease) })
		})
		if err != nil {
			l.problem("the carried claim's heartbeat failed: %v", err)
			return
		}
		if at := l.movedAt.Load(); at != 0 && time.Now().UnixNano() > at {
			if l.beats.Add(1) == 3 {
				break
			}
		}
	}
	l.complete(ctx, carrierClient+1, &held, id, token)
}

// mover waits for MoveAfter completions, runs the dry run (which must
// write nothing) and the move.
func (l *lane) mover(ctx context.Context, origin sources.Source) (dry, moved sources.MoveReport, err error) {
	for int(l.completed.Load()) < l.cfg.MoveAfter {
		if ctx.Err() != nil {
			return dry, moved, fmt.Errorf("the agents did not complete %d tasks before the move: %w", l.cfg.MoveAfter, ctx.Err())
		}
		time.Sleep(5 * time.Millisecond)
	}
	target := sources.Target{Name: l.cfg.To, Open: func(ctx context.Context, prepare bool) (sources.Source, error) {
		s, err := l.cfg.Open(ctx, l.cfg.To, prepare)
		if err != nil {
			return nil, err
		}
		return sources.Follow(s, l.follow), nil
	}}
	dry, err = sources.Move(ctx, origin, target, sources.MoveOptions{DryRun: true})
	if err != nil {
		return dry, moved, fmt.Errorf("dry run: %w", err)
	}
	if m, err := origin.(sources.Movable).MoveMark(ctx); err != nil || m.State != sources.MoveNone {
		l.problem("the dry run left a mark on the origin: %+v %v", m, err)
	}
	moved, err = sources.Move(ctx, origin, target, sources.MoveOptions{})
	if err != nil {
		return dry, moved, fmt.Errorf("move: %w", err)
	}
	l.movedAt.Store(time.Now().UnixNano())
	return dry, moved, nil
}

// judge reads both queues once the agents stopped: every task done on the
// target, no completion answered twice or missing, the origin unchanged
// since the move, and the joined trails for the checker.
func (l *lane) judge(ctx context.Context, origin sources.Source, ids []string) {
	call := time.Now()
	was := readAll(ctx, origin, true)
	target, err := l.cfg.Open(ctx, l.cfg.To, false)
	if err != nil {
		l.problem("opening the target after the run: %v", err)
		return
	}
	defer target.Close()
	now := readAll(ctx, target, false)
	l.ops = append(l.ops, lincheck.JoinedRead(moverClient, call, time.Now(), seen(was), seen(now)))

	byID := map[string]*model.Task{}
	for _, t := range now {
		byID[t.ID] = t
	}
	for _, id := range ids {
		t := byID[id]
		switch {
		case t == nil:
			l.problem("task %s is not in the target", id)
		case t.State != model.StateDone:
			l.problem("task %s is %s in the target, not done", id, t.State)
		case l.finished[id] == 0:
			l.problem("task %s is done but no completion was answered", id)
		}
		if n := l.finished[id]; n > 1 {
			l.problem("task %s: complete answered ok %d times (done twice)", id, n)
		}
	}
	for _, t := range was {
		last := time.Time{}
		for _, e := range t.More().History {
			if e.At.After(last) {
				last = e.At
			}
		}
		if at := l.movedAt.Load(); at != 0 && last.UnixNano() > at {
			l.problem("task %s was written in the origin after the move (%s %s at %s)", t.ID, t.More().History[len(t.More().History)-1].Actor, t.More().History[len(t.More().History)-1].Action, last.Format(time.RFC3339Nano))
		}
	}
	sort.Strings(l.problems)
}

func readAll(ctx context.Context, s sources.Source, pastMark bool) []*model.Task {
	if pastMark {
		ctx = sources.PastMark(ctx)
	}
	d, err := s.Poll(ctx, "")
	if err != nil {
		return nil
	}
	out := make([]*model.Task, 0, len(d.Tasks))
	for _, t := range d.Tasks {
		if full, err := s.Get(ctx, t.ID); err == nil {
			out = append(out, full)
		}
	}
	return out
}

func seen(ts []*model.Task) []lincheck.Seen {
	out := make([]lincheck.Seen, len(ts))
	for i, t := range ts {
		out[i] = seenOf(t)
	}
	return out
}
