// Package demo runs simulated agents against any Source through the real
// protocol — claim in pull order, heartbeat, complete, block, review, fail,
// and sometimes die mid-lease — on a clock sped up so that leases expire and
// the whole escalation ladder shows within a couple of minutes.
//
// It is for `claimdeck demo` and for tests; it knows nothing of backends or
// of the terminal.
package demo

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"sync"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// Options configure a simulation.
type Options struct {
	Agents int     // simulated agents (default 6)
	Tasks  int     // tasks to seed the queue with (default 40)
	Speed  float64 // how much faster than real time (default 60: 2 h in 2 min)
	Seed   int64   // random seed, for reproducible runs
	// Nodes are the mesh node names agents are spread over (optional).
	Nodes []string
	// NodeUp says whether a node still runs (optional): the agents of a
	// node that went down stop claiming and heartbeating.
	NodeUp func(node string) bool
}

// Check refuses values a run cannot make sense of, naming the flag to fix.
func (o Options) Check() error {
	switch {
	case o.Agents < 1 || o.Agents > 1000:
		return fmt.Errorf("--agents %d: want 1 to 1000 simulated agents", o.Agents)
	case o.Tasks < 1 || o.Tasks > 100000:
		return fmt.Errorf("--tasks %d: want 1 to 100000 tasks", o.Tasks)
	case !(o.Speed >= 1 && o.Speed <= 3600):
		return fmt.Errorf("--speed %v: want 1 (real time) to 3600 (an hour a second)", o.Speed)
	}
	return nil
}

func (o *Options) defaults() {
	if o.Agents <= 0 {
		o.Agents = 6
	}
	if o.Tasks <= 0 {
		o.Tasks = 40
	}
	if o.Speed <= 0 {
		o.Speed = 60
	}
}

// Policy is the model policy scaled by the simulation's speed, so the
// dashboard judges leases and the ladder on the demo's clock.
func Policy(speed float64) model.Policy {
	p := model.DefaultPolicy()
	scale := func(d time.Duration) time.Duration { return time.Duration(float64(d) / speed) }
	p.Lease, p.HeartbeatEvery = scale(p.Lease), scale(p.HeartbeatEvery)
	p.Ladder = model.Ladder{Stale: scale(p.Ladder.Stale), Urgent: scale(p.Ladder.Urgent), Notify: scale(p.Ladder.Notify), Escalate: scale(p.Ladder.Escalate)}
	return p
}

var titles = []string{
	"Design VPC module", "Rotate API keys", "Summarize board minutes", "Review vendor contracts",
	"Draft data retention policy", "Fix flaky login test", "Upgrade PostgreSQL to 16", "Write incident runbook",
	"Triage support backlog", "Benchmark the claim path", "Audit IAM roles", "Migrate CI to new runners",
	"Research task for Oracle", "Translate onboarding guide", "Tune autoscaler", "Archive Q3 reports",
}

var agentNames = []string{"SANDMAN", "ORACLE", "ORACLE_LOCAL", "CASSIAN", "terraform-engineer", "claude-chat-7K9X", "claude-chat-AB3C", "Sandman-2"}

// Seed fills the queue with a realistic mix of classes and priorities.
func Seed(ctx context.Context, src sources.Source, n int, rng *rand.Rand) error {
	classes := []model.Class{model.ClassStandard, model.ClassStandard, model.ClassStandard, model.ClassExpedite, model.ClassFixedDate, model.ClassIntangible}
	for i := 0; i < n; i++ {
		title := titles[i%len(titles)]
		if i >= len(titles) {
			title = fmt.Sprintf("%s #%d", title, i/len(titles)+1)
		}
		_, err := src.Create(ctx, sources.NewTask{
			// A key a person can say out loud; backends that choose their
			// own ids (Notion pages) ignore it.
			ID:       fmt.Sprintf("TASK-%d", i+1),
			Title:    title,
			Priority: rng.Intn(5),
			Class:    classes[rng.Intn(len(classes))],
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Run seeds the queue and runs the agents until ctx ends. Errors of single
// agent steps are expected (a human took the task over) and only counted.
func Run(ctx context.Context, src sources.Source, o Options) error {
	o.defaults()
	if err := o.Check(); err != nil {
		return err
	}
	rng := rand.New(rand.NewSource(o.Seed))
	if err := Seed(ctx, src, o.Tasks, rng); err != nil {
		return fmt.Errorf("seeding the demo queue: %w", err)
	}
	p := Policy(o.Speed)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); feed(ctx, src, o, p, rng) }()
	for i := 0; i < o.Agents; i++ {
		a := &agent{
			name: agentNames[i%len(agentNames)], src: src, policy: p, nodeUp: o.NodeUp,
			rng: rand.New(rand.NewSource(o.Seed + int64(i) + 1)),
		}
		if i >= len(agentNames) {
			a.name = fmt.Sprintf("%s-%d", a.name, i/len(agentNames)+1)
		}
		if i < len(openings) {
			a.opening = &openings[i]
		}
		if len(o.Nodes) > 0 {
			a.node = o.Nodes[i%len(o.Nodes)]
		}
		wg.Add(1)
		go func() { defer wg.Done(); a.loop(ctx) }()
	}
	wg.Wait()
	return nil
}

// feed keeps work arriving, so the demo never drains: about one task per
// agent per lease, as many as the agents finish, while fewer than the
// seeded number wait in the queue.
func feed(ctx context.Context, src sources.Source, o Options, p model.Policy, rng *rand.Rand) {
	every := max(p.Lease/time.Duration(o.Agents), 100*time.Millisecond)
	tick := time.NewTicker(every)
	defer tick.Stop()
	classes := []model.Class{model.ClassStandard, model.ClassStandard, model.ClassExpedite, model.ClassFixedDate}
	for n := o.Tasks + 1; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if waiting(ctx, src) >= o.Tasks {
			n--
			continue
		}
		_, _ = src.Create(ctx, sources.NewTask{ID: fmt.Sprintf("TASK-%d", n),
			Title:    fmt.Sprintf("%s #%d", titles[rng.Intn(len(titles))], n),
			Priority: rng.Intn(5), Class: classes[rng.Intn(len(classes))]})
	}
}

// waiting is how many tasks wait in the queue, or a large number when the
// source cannot say (nothing is added then).
func waiting(ctx context.Context, src sources.Source) int {
	d, err := src.Poll(ctx, "")
	if err != nil {
		return math.MaxInt
	}
	n := 0
	for _, t := range d.Tasks {
		if t.State == model.StateQueued {
			n++
		}
	}
	return n
}

// opening is an agent's first task, scripted so that a blocked task with
// its reason, a review, a failed task and a stuck claim climbing the
// ladder all show within the demo's first minute.
type opening struct {
	out  sources.Outcome
	dies bool
}

var openings = []opening{
	{out: sources.Outcome{State: model.StateBlocked, Reason: "waiting on the vendor's sandbox key", UnblockAction: "ask finance for the key"}},
	{dies: true},
	{out: sources.Outcome{State: model.StateReview, Artifacts: "pr/412"}},
	{out: sources.Outcome{State: model.StateFailed, Reason: "migration check failed: 3 rows violate the new constraint"}},
}

type agent struct {
	opening    *opening
	name, node string
	src        sources.Source
	policy     model.Policy
	nodeUp     func(string) bool
	rng        *rand.Rand
	run        int
}

// alive is false once the agent's node has gone down.
func (a *agent) alive() bool { return a.nodeUp == nil || a.node == "" || a.nodeUp(a.node) }

func (a *agent) sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// loop is one agent's life: claim, work while heartbeating, finish — or die
// and come back later as a new run.
func (a *agent) loop(ctx context.Context) {
	for ctx.Err() == nil {
		if !a.alive() {
			return // its machine is gone, and with it the agent
		}
		a.run++
		t, err := a.src.ClaimNext(ctx, sources.ClaimRequest{Agent: a.name, RunID: fmt.Sprintf("run-%d", a.run), Node: a.node, Lease: a.policy.Lease})
		if err != nil || t == nil {
			if !a.sleep(ctx, a.policy.HeartbeatEvery) {
				return
			}
			continue
		}
		work := time.Duration(float64(a.policy.Lease) * (0.2 + 1.5*a.rng.Float64()))
		dies := a.rng.Float64() < 0.12
		out := a.outcome()
		if a.run == 1 && a.opening != nil {
			// The first minute shows every state an on-call person meets.
			work, dies, out = a.policy.HeartbeatEvery, a.opening.dies, a.opening.out
		}
		if !a.work(ctx, t, work, dies, out) {
			if ctx.Err() != nil {
				return
			}
			// A dead agent stays away for a while before a new run starts.
			if !a.sleep(ctx, a.policy.Ladder.Escalate/2) {
				return
			}
			continue
		}
		if !a.sleep(ctx, time.Duration(a.rng.Int63n(int64(a.policy.HeartbeatEvery)))) {
			return
		}
	}
}

// work heartbeats until the work is done, then finishes; false when the
// agent died or lost its lock.
func (a *agent) work(ctx context.Context, t *model.Task, work time.Duration, dies bool, out sources.Outcome) bool {
	deadline := time.Now().Add(work)
	dieAt := time.Now().Add(time.Duration(a.rng.Int63n(int64(work) + 1)))
	if out.State == model.StateBlocked && out.NextCheckAt.IsZero() {
		out.NextCheckAt = time.Now().Add(a.policy.Ladder.Urgent)
	}
	for time.Now().Before(deadline) {
		if dies && time.Now().After(dieAt) || !a.alive() {
			return false // stops heartbeating: the lease runs out and the ladder climbs
		}
		step := min(a.policy.HeartbeatEvery, time.Until(deadline))
		if !a.sleep(ctx, step) {
			return false
		}
		if _, err := a.src.Heartbeat(ctx, t.ID, t.Claim().Token, a.policy.Lease); err != nil {
			return false // LOST_LOCK: a human stepped in
		}
	}
	_, err := a.src.Finish(ctx, t.ID, t.Claim().Token, out)
	return err == nil
}

func (a *agent) outcome() sources.Outcome {
	switch r := a.rng.Float64(); {
	case r < 0.68:
		return sources.Outcome{State: model.StateDone, Artifacts: "pr/" + fmt.Sprint(a.rng.Intn(900)+100)}
	case r < 0.80:
		return sources.Outcome{State: model.StateBlocked, Reason: "waiting on credentials", UnblockAction: "ask ops for the key"}
	case r < 0.92:
		return sources.Outcome{State: model.StateReview, Artifacts: "draft ready"}
	default:
		return sources.Outcome{State: model.StateFailed, Reason: "validation failed with 3 errors"}
	}
}
