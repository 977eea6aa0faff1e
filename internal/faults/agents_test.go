//go:build faults

package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/sources/sourcetest/lincheck"
)

// answer is the JSON a claimdeck command prints.
type answer struct {
	OK    bool `json:"ok"`
	Task  *task
	Tasks []task
	Error struct{ Code, Message string }
}

type task struct {
	PageID      string `json:"page_id"`
	State       string `json:"state"`
	ClaimedBy   string `json:"claimed_by"`
	LockToken   string `json:"lock_token"`
	LockExpires string `json:"lock_expires"`
	History     []lincheck.Event
}

// Lanes of the history besides the agents'.
const (
	laneDrain = 50 // the healthy agent left after the faults
	laneSuite = 51 // the suite's own commands: create, list
	laneOps   = 52 // an operator taking tasks over and releasing them
)

// claimSeen is a claim whose answer an agent received: it surely took
// effect between start and end.
type claimSeen struct {
	task, token, agent string
	start, end         time.Time
	finishStart        time.Time // when its holder began to finish it; zero if never
}

type completeSeen struct {
	task, token string
	end         time.Time
}

// world is one run: a configuration every command uses, the processes
// running now (for the killer), and what the agents saw.
type world struct {
	t     *testing.T
	bin   string
	conf  string
	env   []string
	lease time.Duration
	grace time.Duration

	mu        sync.Mutex
	running   map[*os.Process]bool
	claims    []*claimSeen
	completes []completeSeen
	commands  int
	kills     int
	apiErrors int
	lostLocks int

	hist     *histories
	ids      []string        // the tasks seeded, for the operator
	touched  map[string]bool // tasks the operator took over: the history judges them
	noRescue bool            // claim-next never hands out an expired claim (seed 002)
	// rescueByID: claim --task takes a claim whose lease and grace ended,
	// where claim-next does not (Notion)
	rescueByID bool
}

func newWorld(t *testing.T, conf string, lease time.Duration, env ...string) *world {
	g := grace
	if graceLine() == "" {
		g = time.Minute // claimdeck's default, were it to know one
	}
	dir, err := historyDir(strings.ReplaceAll(t.Name(), "/", "-"))
	if err != nil {
		t.Fatal(err)
	}
	return &world{t: t, bin: claimdeck, conf: conf, env: env, lease: lease, grace: g, running: map[*os.Process]bool{}, touched: map[string]bool{},
		hist: &histories{dir: dir, lanes: map[int]*os.File{}}}
}

// rec runs one command of the lease protocol and records it in lane's
// history: when it was called, when it returned (never, if killed), what
// it answered.
func (w *world) rec(ctx context.Context, lane int, o lincheck.Op, args ...string) (answer, bool) {
	_, a, killed := w.record(ctx, lane, o, nil, args...)
	return a, killed
}

// record is rec under a wrapper command (strace, which holds the process
// at a chosen system call), returning the operation as recorded and when
// the process ended.
func (w *world) record(ctx context.Context, lane int, o lincheck.Op, wrap []string, args ...string) (lincheck.Op, answer, bool) {
	o.Client, o.Call = lane, time.Now()
	a, killed := w.runWrapped(ctx, wrap, args...)
	o.Return = time.Now()
	ended := o.Return
	outcome(&o, a, killed)
	if err := w.hist.write(o); err != nil {
		w.t.Errorf("recording %v: %v", args, err)
	}
	o.Return = ended
	return o, a, killed
}

// run runs one claimdeck command; killed says SIGKILL ended it.
func (w *world) run(ctx context.Context, args ...string) (a answer, killed bool) {
	return w.runWrapped(ctx, nil, args...)
}

func (w *world) runWrapped(ctx context.Context, wrap []string, args ...string) (a answer, killed bool) {
	argv := append(append(slices.Clone(wrap), w.bin, "--config", w.conf), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), w.env...)
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		w.t.Errorf("start claimdeck: %v", err)
		return a, false
	}
	w.mu.Lock()
	w.running[cmd.Process] = true
	w.commands++
	w.mu.Unlock()
	err := cmd.Wait()
	w.mu.Lock()
	delete(w.running, cmd.Process)
	w.mu.Unlock()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		return a, true
	}
	if jerr := json.Unmarshal(out.Bytes(), &a); jerr != nil {
		w.t.Errorf("claimdeck %v: not JSON (%v): %s", args, err, out.String())
	}
	w.mu.Lock()
	switch a.Error.Code {
	case "API_ERROR":
		w.apiErrors++
	case "LOST_LOCK":
		w.lostLocks++
	}
	w.mu.Unlock()
	return a, false
}

// must runs a command that has to succeed, retrying what a retry can fix.
func (w *world) must(ctx context.Context, args ...string) answer {
	w.t.Helper()
	for try := 0; ; try++ {
		var a answer
		switch args[0] {
		case "create":
			a, _ = w.rec(ctx, laneSuite, lincheck.Op{Kind: lincheck.Create}, args...)
			if a.OK && a.Task != nil {
				w.ids = append(w.ids, a.Task.PageID)
			}
		case "list":
			a, _ = w.rec(ctx, laneSuite, lincheck.Op{Kind: lincheck.Read}, args...)
		default:
			a, _ = w.run(ctx, args...)
		}
		if a.OK {
			return a
		}
		if a.Error.Code != "API_ERROR" || try == 50 || ctx.Err() != nil {
			w.t.Fatalf("claimdeck %v: %+v", args, a.Error)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// agent claims, works briefly and completes until ctx ends. It keeps no
// state across a killed command: a claim whose answer it never saw is a
// dead holder's, as after a crash.
func (w *world) agent(ctx context.Context, lane int) {
	name := fmt.Sprintf("agent-%02d", lane)
	lease := w.lease.String()
	for ctx.Err() == nil {
		start := time.Now()
		a, killed := w.rec(ctx, lane, lincheck.Op{Kind: lincheck.ClaimNext, Agent: name, Lease: w.lease},
			"claim", "--agent-name", name, "--lease", lease)
		end := time.Now()
		if killed || !a.OK || a.Task == nil {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		c := &claimSeen{task: a.Task.PageID, token: a.Task.LockToken, agent: name, start: start, end: end}
		w.mu.Lock()
		w.claims = append(w.claims, c)
		w.mu.Unlock()
		time.Sleep(time.Duration(rand.IntN(30)) * time.Millisecond)
		if rand.IntN(3) == 0 {
			w.rec(ctx, lane, lincheck.Op{Kind: lincheck.Heartbeat, Task: c.task, Token: c.token, Lease: w.lease},
				"heartbeat", "--task", c.task, "--lock-token", c.token, "--lease", lease)
		}
		w.mu.Lock()
		c.finishStart = time.Now()
		w.mu.Unlock()
		a, killed = w.rec(ctx, lane, lincheck.Op{Kind: lincheck.Finish, Task: c.task, Token: c.token, Outcome: "done"},
			"complete", "--task", c.task, "--lock-token", c.token)
		if !killed && a.OK {
			w.mu.Lock()
			w.completes = append(w.completes, completeSeen{task: c.task, token: c.token, end: time.Now()})
			w.mu.Unlock()
		}
	}
}

// operator takes a random task over as a person would (whatever holds it)
// and force-releases it a moment later, naming the token it took, every
// period. Its commands are killed like the agents'.
func (w *world) operator(ctx context.Context, every time.Duration) {
	defer w.releaseHumans()
	for ctx.Err() == nil {
		time.Sleep(every)
		id := w.ids[rand.IntN(len(w.ids))]
		w.mu.Lock()
		w.touched[id] = true
		w.mu.Unlock()
		a, killed := w.rec(ctx, laneOps, lincheck.Op{Kind: lincheck.Takeover, Task: id}, "takeover", "--task", id, "--yes", "--reason", "fault suite")
		if killed || !a.OK || a.Task == nil {
			continue
		}
		time.Sleep(time.Duration(rand.IntN(50)) * time.Millisecond)
		w.rec(ctx, laneOps, lincheck.Op{Kind: lincheck.ForceRelease, Task: id},
			"release", "--force", "--task", id, "--expect-token", a.Task.LockToken, "--yes", "--reason", "fault suite")
	}
}

// operate is the operator of every run: a takeover every 300 ms.
func (w *world) operate(ctx context.Context) { w.operator(ctx, 300*time.Millisecond) }

// releaseHumans puts back what a killed release left taken over: nothing
// hands a person's claim to an agent.
func (w *world) releaseHumans() {
	ctx := context.Background()
	for _, t := range w.list(ctx) {
		if t.State == "claimed" && t.ClaimedBy == "HUMAN" {
			w.rec(ctx, laneOps, lincheck.Op{Kind: lincheck.ForceRelease, Task: t.PageID},
				"release", "--force", "--task", t.PageID, "--expect-token", t.LockToken, "--yes", "--reason", "fault suite")
		}
	}
}

// readTrails gets every task once more after the run: a get shows the
// task's whole trail (a list only its latest entry), which tells the
// checker where a claim whose answer was lost landed.
func (w *world) readTrails() {
	ctx := context.Background()
	for _, id := range w.ids {
		for try := 0; try < 5; try++ {
			if a, _ := w.rec(ctx, laneSuite, lincheck.Op{Kind: lincheck.Read}, "get", "--task", id); a.OK {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// killer sends SIGKILL to a random running command every period.
func (w *world) killer(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		w.mu.Lock()
		var procs []*os.Process
		for p := range w.running {
			procs = append(procs, p)
		}
		w.mu.Unlock()
		if len(procs) == 0 {
			continue
		}
		if procs[rand.IntN(len(procs))].Signal(syscall.SIGKILL) == nil {
			w.mu.Lock()
			w.kills++
			w.mu.Unlock()
		}
	}
}

// load runs agents (and the given disruptions) for d.
func (w *world) load(agents int, d time.Duration, disrupt ...func(ctx context.Context)) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	for i := range agents {
		wg.Go(func() { w.agent(ctx, i) })
	}
	for _, f := range disrupt {
		wg.Go(func() { f(ctx) })
	}
	wg.Wait()
}

// drain is a healthy agent left after the faults: it takes and completes
// tasks for as long as it gets any, and stops once every task is done or
// it has been refused (no eligible task) a lease and a grace, plus a
// margin, after the faults stopped. What is not done then is stuck.
func (w *world) drain(total int) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	giveUp := time.Now().Add(w.lease + w.grace + 5*time.Second)
	for ctx.Err() == nil {
		start := time.Now()
		a, _ := w.rec(ctx, laneDrain, lincheck.Op{Kind: lincheck.ClaimNext, Agent: "drainer", Lease: w.lease},
			"claim", "--agent-name", "drainer", "--lease", w.lease.String())
		if a.OK && a.Task != nil {
			c := &claimSeen{task: a.Task.PageID, token: a.Task.LockToken, agent: "drainer", start: start, end: time.Now()}
			c.finishStart = time.Now()
			w.mu.Lock()
			w.claims = append(w.claims, c)
			w.mu.Unlock()
			if a, _ := w.rec(ctx, laneDrain, lincheck.Op{Kind: lincheck.Finish, Task: c.task, Token: c.token, Outcome: "done"},
				"complete", "--task", c.task, "--lock-token", c.token); a.OK {
				w.mu.Lock()
				w.completes = append(w.completes, completeSeen{task: c.task, token: c.token, end: time.Now()})
				w.mu.Unlock()
			}
			continue
		}
		if !a.OK && time.Now().Before(giveUp.Add(time.Minute)) {
			time.Sleep(250 * time.Millisecond) // a storm's failure, not a refusal
			continue
		}
		if done, _ := w.doneCount(ctx); done == total || time.Now().After(giveUp) {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func (w *world) list(ctx context.Context) []task {
	return w.must(ctx, "list").Tasks
}

func (w *world) doneCount(ctx context.Context) (int, []task) {
	all := w.list(ctx)
	n := 0
	for _, t := range all {
		if t.State == "done" {
			n++
		}
	}
	return n, all
}

// tally is what a run found.
type tally struct {
	Tasks, Claims, Completes, Commands, Kills, APIErrors, LostLocks int
	DoubleClaims, DoubleCompletions, LostCompletions, Stuck         int
	StuckIDs                                                        []string
}

func (tl tally) String() string {
	return fmt.Sprintf("tasks %d, commands %d, kills %d, claims %d, completions %d, API_ERROR %d, LOST_LOCK %d | double claims %d, double completions %d, lost completions %d, stuck %d",
		tl.Tasks, tl.Commands, tl.Kills, tl.Claims, tl.Completes, tl.APIErrors, tl.LostLocks,
		tl.DoubleClaims, tl.DoubleCompletions, tl.LostCompletions, tl.Stuck)
}

// count judges the run from what the agents saw and the queue's final
// state. A double claim is a claim answered while another agent's claim
// on the task was surely live: answered, not yet being finished, and
// within its lease. A lost completion is a completion answered ok whose
// task is not done at the end, or was claimed again after it.
func (w *world) count(final []task) tally {
	w.mu.Lock()
	defer w.mu.Unlock()
	tl := tally{Tasks: len(final), Claims: len(w.claims), Completes: len(w.completes), Commands: w.commands,
		Kills: w.kills, APIErrors: w.apiErrors, LostLocks: w.lostLocks}
	byTask := map[string][]*claimSeen{}
	for _, c := range w.claims {
		byTask[c.task] = append(byTask[c.task], c)
	}
	for id, cs := range byTask {
		if w.touched[id] {
			continue // taken over and released under its holder: a second claim is the protocol
		}
		sort.Slice(cs, func(i, j int) bool { return cs[i].end.Before(cs[j].end) })
		for i, a := range cs {
			liveUntil := a.start.Add(w.lease)
			if !a.finishStart.IsZero() && a.finishStart.Before(liveUntil) {
				liveUntil = a.finishStart
			}
			for _, b := range cs[i+1:] {
				if b.token != a.token && b.start.After(a.end) && b.end.Before(liveUntil) {
					tl.DoubleClaims++
					w.t.Logf("double claim of %s: %s held it from %s, %s got it at %s", a.task, a.agent,
						a.end.Format(time.StampMilli), b.agent, b.end.Format(time.StampMilli))
				}
			}
		}
	}
	done := map[string]bool{}
	for _, t := range final {
		if t.State == "done" {
			done[t.PageID] = true
		} else {
			tl.Stuck++
			tl.StuckIDs = append(tl.StuckIDs, t.PageID+"("+t.State+")")
		}
	}
	completed := map[string]int{}
	for _, c := range w.completes {
		completed[c.task]++
		if !done[c.task] {
			tl.LostCompletions++
			continue
		}
		for _, cl := range byTask[c.task] {
			if cl.start.After(c.end) {
				tl.LostCompletions++
				w.t.Logf("task %s was claimed again by %s after its completion", c.task, cl.agent)
			}
		}
	}
	for _, n := range completed {
		if n > 1 {
			tl.DoubleCompletions += n - 1
		}
	}
	return tl
}

// stormResidual is Notion's stated residual under the storm (FAULTS.md,
// "Notion's residual"): at most one task, or one in this many answered
// claims, whichever is more, not linearizable.
const stormResidual = 10

// judge reports the tally, appends it to $FAULTS_REPORT, and fails the test
// on any lost completion and, where claims are atomic, on any double claim,
// double completion or stuck task. Notion has no conditional writes: its
// double claims are the race the docs describe, measured, not asserted.
func (w *world) judge(name string, extra string, tl tally, atomic bool) {
	w.t.Logf("%s: %s %s", name, tl, extra)
	w.readTrails()
	rep, took := w.checkHistory(name, time.Second)
	if f := os.Getenv("FAULTS_REPORT"); f != "" {
		if out, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			k := rep.Kinds
			fmt.Fprintf(out, "| %s | %s | %d tasks, %d kills | %d: claim-next %d, heartbeat %d, complete %d, takeover %d, force-release %d, create %d, read %d; %d unknown outcome | %d not linearizable, %d undecided (checked in %s) | %d claims, %d completions, %d double claims, %d lost completions, %d stuck |\n",
				name, extra, tl.Tasks, tl.Kills, rep.Ops, k[lincheck.ClaimNext], k[lincheck.Heartbeat], k[lincheck.Finish],
				k[lincheck.Takeover], k[lincheck.ForceRelease], k[lincheck.Create], k[lincheck.Read],
				rep.Pending, len(rep.Illegal), len(rep.Unknown), took.Round(10*time.Millisecond), tl.Claims, tl.Completes, tl.DoubleClaims, tl.LostCompletions, tl.Stuck)
			out.Close()
		}
	}
	if atomic && !rep.Linearizable() {
		w.t.Errorf("%s: the history is not proven linearizable: %s", name, rep)
	}
	if !atomic && rep.Granted > 0 {
		bad, allowed := len(rep.Illegal)+len(rep.Unknown), max(1, rep.Granted/stormResidual)
		w.t.Logf("%s residual: %d of %d task histories not linearizable, over %d answered claims (%d allowed)", name, bad, rep.Tasks, rep.Granted, allowed)
		if bad > allowed {
			w.t.Errorf("%s: %d tasks not linearizable, over the stated residual of one task or one in %d answered claims, whichever is more: %s", name, bad, stormResidual, rep)
		}
	}
	if !atomic && (rep.Granted == 0 || tl.Completes == 0) {
		w.t.Errorf("%s: no claim granted or no task completed in the storm: the run proves nothing", name)
	}
	if tl.LostCompletions > 0 {
		w.t.Errorf("%s: %d lost completions", name, tl.LostCompletions)
	}
	if !atomic {
		return
	}
	if tl.DoubleClaims > 0 || tl.DoubleCompletions > 0 {
		w.t.Errorf("%s: %d double claims, %d double completions", name, tl.DoubleClaims, tl.DoubleCompletions)
	}
	if tl.Stuck > 0 {
		w.t.Errorf("%s: %d tasks stuck a lease and a grace after the faults stopped: %s", name, tl.Stuck, strings.Join(first(tl.StuckIDs, 10), ", "))
	}
}

func first(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
