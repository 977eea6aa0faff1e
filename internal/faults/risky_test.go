//go:build faults

package faults

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/sources/sourcetest/lincheck"
)

// The risky workload reaches, in order rather than by luck, the
// interleavings where lease bugs live: holders that keep writing after a
// takeover, a force-release or the end of their lease; claims timed just
// inside and just outside the grace; claim --task against a live lease;
// several claims racing for the one eligible task; and, on lock
// directories, claims and reads while another process is stopped in the
// middle of its change (strace holds it at a chosen system call); a
// holder's complete at the moment a person takes its task over or
// force-releases it. Every
// command goes into the history the checker proves linearizable, and each
// situation is counted from the recorded call and return times: a run
// fails when one falls below its floor.

// Situations the risky workload counts.
const (
	covStale    = "stale-token write attempted"
	covLate     = "heartbeat after the lease ended"
	covInside   = "claim inside grace"
	covOutside  = "claim just outside grace"
	covLive     = "claim --task on a live lease"
	covRace     = "claim racing for the one eligible task"
	covMixed    = "claim --task beside claim-next on one id"
	covMidClaim = "cancel while a claim was held at its publication"
	covTornRead = "read while a claim's lock file was being written"
	covZombie   = "complete beside a takeover or force-release"
)

// shortRounds is how many rounds of each scenario a short run makes.
const shortRounds = 6

// floors are the short run's (six rounds of each scenario); a long run
// scales them by its rounds. They are half to five sixths of what the
// workload plans (claims inside the grace: 6 of 18, the timed ones), so
// that a machine at load 30 passes and a workload that stopped reaching
// a situation does not.
var floors = map[string]int{
	covStale: 40, covLate: 5, covInside: 6, covOutside: 5, covLive: 18, covRace: 20, covMixed: 5,
}

// zombieFloors are the atomic backends' round of a holder's complete
// beside a person's override (one a round).
var zombieFloors = map[string]int{covZombie: 3}

// lockdirFloors are the lock directory's scenarios with a stopped writer.
var lockdirFloors = map[string]int{covMidClaim: 4, covTornRead: 4}

// riskRounds is how many rounds of each scenario a run makes.
func riskRounds() int {
	if os.Getenv("FAULTS_LONG") != "" {
		return 5 * shortRounds
	}
	return shortRounds
}

// shortLease is the lease of the rounds that wait for a lease to end, and
// riskGrace the risky worlds' grace: long enough that a claim timed inside
// it lands inside it on a busy machine, where a command can take a second.
const (
	shortLease = time.Second
	riskGrace  = 4 * time.Second
)

// riskLease is every other claim's lease: long enough that a holder on a
// machine at load 30 completes before it ends, so that each task is done.
const riskLease = 10 * time.Second

// risky gives w the risky workload's grace, in its configuration and in
// the rules its history is checked by.
func risky(w *world) *world { return riskyGrace(w, riskGrace) }

// riskyGrace gives w the risky workload with a grace of g.
func riskyGrace(w *world, g time.Duration) *world {
	if graceLine() == "" {
		return w // a build that knows no grace: its rescues never come
	}
	b, err := os.ReadFile(w.conf)
	if err == nil {
		err = os.WriteFile(w.conf, []byte(strings.Replace(string(b), graceLine(), "grace: "+g.String()+"\n", 1)), 0o600)
	}
	if err != nil {
		w.t.Fatal(err)
	}
	w.grace, w.lease = g, riskLease
	return w
}

// risk is one backend's risky workload.
type risk struct {
	w      *world
	rounds int
	// residual is how many tasks may end not linearizable: none where
	// claims are atomic; Notion's stated residual there.
	residual int

	mu    sync.Mutex
	count map[string]int
	wrong []string // answers the protocol forbids whatever the interleaving
}

func newRisk(w *world) *risk {
	return &risk{w: w, rounds: riskRounds(), count: map[string]int{}}
}

func (r *risk) add(what string) {
	r.mu.Lock()
	r.count[what]++
	r.mu.Unlock()
}

func (r *risk) forbid(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.mu.Lock()
	r.wrong = append(r.wrong, msg)
	r.mu.Unlock()
	r.w.t.Log("forbidden answer: " + msg)
}

// create adds a task; the suite's creates are never killed.
func (r *risk) create(title string) string {
	a := r.w.must(context.Background(), "create", "--title", title)
	return a.Task.PageID
}

// claim is claim --task by agent; token is "" unless it was answered ok.
func (r *risk) claim(lane int, agent, id string, lease time.Duration, wrap ...string) (lincheck.Op, string) {
	o, a, _ := r.w.record(context.Background(), lane, lincheck.Op{Kind: lincheck.Claim, Task: id, Agent: agent, Lease: lease}, wrap,
		"claim", "--task", id, "--agent-name", agent, "--lease", lease.String())
	if a.OK && a.Task != nil {
		return o, a.Task.LockToken
	}
	return o, ""
}

// claimNext is claim without --task: the task it took, and the token.
func (r *risk) claimNext(lane int, agent string, wrap ...string) (lincheck.Op, string, string) {
	o, a, _ := r.w.record(context.Background(), lane, lincheck.Op{Kind: lincheck.ClaimNext, Agent: agent, Lease: r.w.lease}, wrap,
		"claim", "--agent-name", agent, "--lease", r.w.lease.String())
	if a.OK && a.Task != nil {
		return o, a.Task.PageID, a.Task.LockToken
	}
	return o, "", ""
}

// write is a holder's write naming token: heartbeat, complete or block.
func (r *risk) write(lane int, kind, id, token string) (lincheck.Op, answer) {
	o := lincheck.Op{Kind: lincheck.Finish, Task: id, Token: token}
	args := []string{kind, "--task", id, "--lock-token", token}
	switch kind {
	case "heartbeat":
		o.Kind, o.Lease = lincheck.Heartbeat, r.w.lease
		args = append(args, "--lease", r.w.lease.String())
	case "complete":
		o.Outcome = "done"
	case "block":
		o.Outcome = "blocked"
		args = append(args, "--reason", "fault suite")
	}
	op, a, _ := r.w.record(context.Background(), lane, o, nil, args...)
	return op, a
}

// stale is a write with a token that surely stopped being current at
// since (the return of the answered command that ended it): it must be
// refused.
func (r *risk) stale(lane int, kind, id, token string, since time.Time) {
	o, a := r.write(lane, kind, id, token)
	if !o.Call.After(since) {
		return
	}
	r.add(covStale)
	if a.OK {
		r.forbid("%s of %s with a token that stopped being current at %s was answered ok at %s", kind, id,
			since.Format(time.StampMilli), o.Return.Format(time.StampMilli))
	}
}

// takeover is the operator's; token is the HUMAN claim's, "" if refused.
func (r *risk) takeover(lane int, id string) (lincheck.Op, string) {
	o, a, _ := r.w.record(context.Background(), lane, lincheck.Op{Kind: lincheck.Takeover, Task: id}, nil,
		"takeover", "--task", id, "--yes", "--reason", "fault suite")
	if a.OK && a.Task != nil {
		return o, a.Task.LockToken
	}
	return o, ""
}

func (r *risk) forceRelease(lane int, id, token string) (lincheck.Op, bool) {
	o, a, _ := r.w.record(context.Background(), lane, lincheck.Op{Kind: lincheck.ForceRelease, Task: id}, nil,
		"release", "--force", "--task", id, "--expect-token", token, "--yes", "--reason", "fault suite")
	return o, a.OK
}

// finish completes every task a token of tokens holds (more than one
// only where the build under test handed a task out twice).
func (r *risk) finish(lane int, held map[string]string) {
	for token, id := range held {
		r.write(lane, "complete", id, token)
	}
}

func sleepUntil(at time.Time) { time.Sleep(time.Until(at)) }

// single: claim-next by three agents and claim --task by two, all at once,
// on a queue whose one eligible task is new. One claim wins; the winner
// completes it before the next round.
func (r *risk) single() {
	const nexts, byID = 3, 2
	for i := range r.rounds {
		id := r.create(fmt.Sprintf("race-%03d", i))
		ops := make([]lincheck.Op, nexts+byID)
		got := make([]string, nexts+byID) // task taken
		tokens := make([]string, nexts+byID)
		var wg sync.WaitGroup
		for j := range ops {
			wg.Go(func() {
				agent := fmt.Sprintf("race-%02d-%d", i, j)
				if j < nexts {
					ops[j], got[j], tokens[j] = r.claimNext(90+j, agent)
				} else {
					ops[j], tokens[j] = r.claim(90+j, agent, id, r.w.lease)
					if tokens[j] != "" {
						got[j] = id
					}
				}
			})
		}
		wg.Wait()
		held := map[string]string{}
		for j := range ops {
			if tokens[j] != "" {
				held[tokens[j]] = got[j]
			}
			for k := range ops {
				if k != j && overlap(ops[j], ops[k]) {
					r.add(covRace)
					break
				}
			}
		}
		for j := nexts; j < len(ops); j++ {
			if slices.ContainsFunc(ops[:nexts], func(o lincheck.Op) bool { return overlap(o, ops[j]) }) {
				r.add(covMixed)
				break
			}
		}
		if len(held) > 1 {
			r.forbid("%d claims of the one eligible task %s were answered ok", len(held), id)
		}
		r.finish(89, held)
		if len(held) == 0 {
			// every claim failed outside the protocol (a storage error):
			// take it alone, so that the next round's task is the one
			// eligible
			if _, tok := r.claim(89, "race-cleaner", id, r.w.lease); tok != "" {
				r.write(89, "complete", id, tok)
			}
		}
	}
}

func overlap(a, b lincheck.Op) bool { return a.Call.Before(b.Return) && b.Call.Before(a.Return) }

// round is one task each of three scenarios, by agents a, b, c and an
// operator on lanes base to base+3.
func (r *risk) round(g int, x1, x2, x3 string) {
	base := 100 + 10*g
	a, b, c := fmt.Sprintf("risk-%02d-a", g), fmt.Sprintf("risk-%02d-b", g), fmt.Sprintf("risk-%02d-c", g)
	lease := r.w.lease

	// A holder that keeps writing after an operator took its task over,
	// after the operator released it, and after another agent claimed it.
	if _, t1 := r.claim(base, a, x1, lease); t1 != "" {
		if to, th := r.takeover(base+3, x1); th != "" {
			for _, k := range []string{"heartbeat", "complete", "block"} {
				r.stale(base, k, x1, t1, to.Return)
			}
			if ro, ok := r.forceRelease(base+3, x1, th); ok {
				r.stale(base, "heartbeat", x1, t1, ro.Return)
				r.stale(base, "complete", x1, t1, ro.Return)
				if bo, t3 := r.claim(base+1, b, x1, lease); t3 != "" {
					r.stale(base, "complete", x1, t1, bo.Return)
					r.write(base+1, "complete", x1, t3)
				}
			}
		}
	}

	// A lease that ends unheard: a heartbeat after its end, claims halfway
	// through the grace and just before its end, the holder's late
	// complete, a rescue just after the grace, the holder once more.
	if co, t1 := r.claim(base, a, x2, shortLease); t1 != "" {
		endLo, endHi := co.Call.Add(shortLease), co.Return.Add(shortLease)
		sleepUntil(endHi.Add(300 * time.Millisecond))
		if o, _ := r.write(base, "heartbeat", x2, t1); o.Call.After(endHi) {
			r.add(covLate)
		}
		held := map[string]string{}
		for _, at := range []time.Duration{r.w.grace / 4, r.w.grace / 2, r.w.grace * 5 / 8} {
			sleepUntil(endHi.Add(at))
			o, tok := r.claim(base+1, b, x2, lease)
			if o.Call.After(endHi) && o.Return.Before(endLo.Add(r.w.grace)) {
				r.add(covInside)
				if tok != "" {
					r.forbid("claim of %s answered ok %s after its lease ended, inside the grace of %s", x2, o.Return.Sub(endLo).Round(time.Millisecond), r.w.grace)
				}
			}
			if tok != "" {
				held[tok] = x2
			}
		}
		r.stale(base, "complete", x2, t1, endHi)
		sleepUntil(endHi.Add(r.w.grace + 250*time.Millisecond))
		o, t3 := r.claim(base+2, c, x2, lease)
		if o.Call.After(endHi.Add(r.w.grace)) && o.Call.Before(endHi.Add(r.w.grace+time.Second)) {
			r.add(covOutside)
		}
		if t3 != "" {
			r.stale(base, "heartbeat", x2, t1, o.Return)
			held[t3] = x2
		}
		r.finish(base+1, held)
	}

	// claim --task by two agents, twice each, while the holder's lease runs.
	if co, t1 := r.claim(base, a, x3, lease); t1 != "" {
		var mu sync.Mutex
		held := map[string]string{}
		var wg sync.WaitGroup
		for j, who := range []string{b, c} {
			wg.Go(func() {
				for range 2 {
					o, tok := r.claim(base+1+j, who, x3, lease)
					if o.Call.After(co.Return) && o.Return.Before(co.Call.Add(lease)) {
						r.add(covLive)
						if tok != "" {
							r.forbid("claim of %s by %s answered ok while %s's lease ran", x3, who, a)
						}
					}
					if tok != "" {
						mu.Lock()
						held[tok] = x3
						mu.Unlock()
					}
				}
			})
		}
		wg.Wait()
		held[t1] = x3
		r.finish(base, held)
	}
}

// rounds runs the three scenarios on their own tasks, parallel at a time.
func (r *risk) roundsOf(parallel int) {
	ids := make([][3]string, r.rounds)
	for g := range ids {
		for k := range ids[g] {
			ids[g][k] = r.create(fmt.Sprintf("risk-%03d-%d", g, k))
		}
	}
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for g := range ids {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			r.round(g, ids[g][0], ids[g][1], ids[g][2])
		})
	}
	wg.Wait()
}

// zombie: a holder completes its task at the moment a person takes it
// over (even rounds) or force-releases it naming the holder's token (odd
// rounds), the complete sent 0, 3 or 6 ms after the person's command so
// that each reaches the backend first in some rounds, and the two
// processes still overlap on an idle machine (a command there takes 5-10
// ms; 15 and 30 ms left them apart). Exactly one of them
// may win: the person's action refused after the complete, or the complete
// refused (LOST_LOCK) after the person's action; the checker judges every
// answer. On PostgreSQL the first write holds the row half a second (a
// trigger), so the other meets its lock: the finish must lock the row
// before it checks the token, as the person's action locks it before it
// checks the version.
func (r *risk) zombie() {
	won := map[string]int{}
	for i := range r.rounds {
		id := r.create(fmt.Sprintf("zombie-%03d", i))
		agent := fmt.Sprintf("zombie-%02d", i)
		_, t1 := r.claim(60, agent, id, r.w.lease)
		if t1 == "" {
			r.w.t.Errorf("the claim of the new task %s was refused", id)
			continue
		}
		what := "takeover"
		if i%2 == 1 {
			what = "force-release"
		}
		var fin, over lincheck.Op
		var done answer
		var overOK bool
		var human string // the person's token after a takeover
		var wg sync.WaitGroup
		wg.Go(func() {
			time.Sleep(time.Duration(i/2%3) * 3 * time.Millisecond)
			fin, done = r.write(60, "complete", id, t1)
		})
		wg.Go(func() {
			if what == "takeover" {
				over, human = r.takeover(61, id)
				overOK = human != ""
			} else {
				over, overOK = r.forceRelease(61, id, t1)
			}
		})
		wg.Wait()
		if overlap(fin, over) {
			r.add(covZombie)
		}
		switch {
		case done.OK && overOK:
			r.forbid("the holder's complete of %s and a person's %s of it were both answered ok", id, what)
		case done.OK:
			won["the holder"]++
		case overOK:
			won["the person"]++
		}
		// the task ends done whoever won
		switch {
		case done.OK:
		case human != "":
			if _, ok := r.forceRelease(61, id, human); !ok {
				continue
			}
			fallthrough
		case overOK:
			if _, tok := r.claim(62, agent+"-next", id, r.w.lease); tok != "" {
				r.write(62, "complete", id, tok)
			}
		default: // neither answered ok (an error outside the protocol): the holder tries again
			r.write(60, "complete", id, t1)
		}
	}
	r.w.t.Logf("a holder's complete beside a person's override: %d won by the holder, %d by the person", won["the holder"], won["the person"])
}

// straceAt holds a command at its link system calls: before each link
// (enter) or after it (exit), for hold; path, if given, limits the
// tracing to system calls on that file.
func straceAt(hold time.Duration, path string, injects ...string) []string {
	wrap := []string{"strace", "-f", "-qq", "-o", "/dev/null"}
	if path != "" {
		wrap = append(wrap, "-P", path)
	}
	var traced []string
	for _, in := range injects {
		name, when, _ := strings.Cut(in, ":")
		traced = append(traced, name)
		wrap = append(wrap, "-e", fmt.Sprintf("inject=%s:delay_%s=%d", name, when, hold.Microseconds()))
	}
	return append(wrap, "-e", "trace="+strings.Join(traced, ","), "--")
}

// waitForFile waits until a file whose name starts with prefix exists in
// dir, or the command (done) returned first.
func waitForFile(dir, prefix string, done <-chan struct{}) bool {
	for {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), prefix) {
				return true
			}
		}
		select {
		case <-done:
			return false
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// held is how long strace holds a process at its system call.
const held = 600 * time.Millisecond

// midClaim: a claim (claim --task, or claim-next on a queue whose one
// eligible task is this) is held just before it links its lock into
// place, and an operator cancels the task meanwhile. The write lock
// orders the two; the claimant then heartbeats and completes, which must
// be refused if the cancel came last.
func (r *risk) midClaim(dir string) {
	for i := range r.rounds {
		id := r.create(fmt.Sprintf("midclaim-%03d", i))
		agent := fmt.Sprintf("midclaim-%02d", i)
		done := make(chan struct{})
		var co lincheck.Op
		var token string
		go func() {
			defer close(done)
			wrap := straceAt(held, "", "linkat:enter")
			if i%2 == 0 {
				co, _, token = r.claimNext(80, agent, wrap...)
			} else {
				co, token = r.claim(80, agent, id, r.w.lease, wrap...)
			}
		}()
		// the claim's lock is written to its temporary file and about to be linked
		if !waitForFile(dir, ".cd-tmp-", done) {
			<-done
			r.w.t.Errorf("the claim of %s returned without writing a temporary file first: its lock was not published whole, by link (or strace is not holding it)", id)
			continue
		}
		cancel, _, _ := r.w.record(context.Background(), 81, lincheck.Op{Kind: lincheck.CancelTask, Task: id}, nil,
			"cancel", "--force", "--task", id, "--yes", "--reason", "fault suite")
		<-done
		if cancel.Call.Before(co.Return) {
			r.add(covMidClaim)
		}
		if token != "" {
			r.write(80, "heartbeat", id, token)
			r.write(80, "complete", id, token)
		}
	}
}

// tornRead: a claim --task is held as it writes its lock file (and after
// it links it), and another agent reads the task and tries to claim it
// meanwhile: what they see must be the whole claim or none of it.
func (r *risk) tornRead(dir string) {
	for i := range r.rounds {
		id := r.create(fmt.Sprintf("torn-%03d", i))
		lock := filepath.Join(dir, id+".lock")
		done := make(chan struct{})
		var co lincheck.Op
		var token string
		go func() {
			defer close(done)
			co, token = r.claim(82, fmt.Sprintf("torn-%02d-a", i), id, r.w.lease, straceAt(held, lock, "write:enter", "linkat:exit")...)
		}()
		if !waitForFile(dir, id+".lock", done) {
			<-done
			r.w.t.Errorf("the claim of %s returned before its lock file appeared", id)
			continue
		}
		read, _, _ := r.w.record(context.Background(), 83, lincheck.Op{Kind: lincheck.Read}, nil, "get", "--task", id)
		other, tok := r.claim(84, fmt.Sprintf("torn-%02d-b", i), id, r.w.lease)
		<-done
		if read.Call.Before(co.Return) {
			r.add(covTornRead)
		}
		held := map[string]string{}
		for _, t := range []string{token, tok} {
			if t != "" {
				held[t] = id
			}
		}
		if tok != "" && other.Return.Before(co.Call.Add(r.w.lease)) && token != "" {
			r.forbid("two claims of %s answered ok while the first one's lease ran", id)
		}
		r.finish(82, held)
	}
}

// judgeRisk proves the history linearizable, requires every task final
// and each situation at its floor, and prints the counts.
func (r *risk) judge(name string, floor map[string]int) {
	w := r.w
	w.readTrails()
	rep, took := w.checkHistory(name, time.Second)
	var left []string
	for _, t := range w.list(context.Background()) {
		if t.State != "done" && t.State != "canceled" {
			left = append(left, t.PageID+"("+t.State+")")
		}
	}
	names := make([]string, 0, len(floor))
	for k := range floor {
		names = append(names, k)
	}
	sort.Strings(names)
	var counts, below []string
	scale := r.rounds / shortRounds
	for _, k := range names {
		counts = append(counts, fmt.Sprintf("%s: %d (floor %d)", k, r.count[k], floor[k]*scale))
		if r.count[k] < floor[k]*scale {
			below = append(below, fmt.Sprintf("%s %d < %d", k, r.count[k], floor[k]*scale))
		}
	}
	w.t.Logf("%s coverage: %s", name, strings.Join(counts, "; "))
	if f := os.Getenv("FAULTS_REPORT"); f != "" {
		if out, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintf(out, "| %s (risky) | %d operations, %d not linearizable (checked in %s) | %s |\n",
				name, rep.Ops, len(rep.Illegal)+len(rep.Unknown), took.Round(time.Millisecond), strings.Join(counts, "; "))
			out.Close()
		}
	}
	bad := len(rep.Illegal) + len(rep.Unknown)
	switch {
	case bad > r.residual:
		w.t.Errorf("%s: the risky history is not proven linearizable: %s (%d allowed)", name, rep, r.residual)
	case bad > 0:
		w.t.Logf("%s residual: %d of %d tasks not linearizable, within the %d allowed", name, bad, rep.Tasks, r.residual)
	}
	if len(r.wrong) > 0 && r.residual == 0 {
		w.t.Errorf("%s: %d answers the protocol forbids: %s", name, len(r.wrong), strings.Join(first(r.wrong, 5), "; "))
	}
	if len(left) > 0 {
		w.t.Errorf("%s: %d tasks not done after the risky workload: %s", name, len(left), strings.Join(first(left, 10), ", "))
	}
	if len(below) > 0 {
		w.t.Errorf("%s: the workload did not reach what it is for: %s", name, strings.Join(below, "; "))
	}
}

// riskyRun runs the workload on a fresh queue.
func riskyRun(w *world, name string, extra func(r *risk), extraFloors map[string]int) {
	w.must(context.Background(), "--create", "list")
	r := newRisk(w)
	r.single()
	var wg sync.WaitGroup
	wg.Go(r.zombie)
	r.roundsOf(3)
	wg.Wait()
	floor := merged(floors, zombieFloors, extraFloors)
	if extra != nil {
		extra(r)
	}
	r.judge(name, floor)
}

// notionRaceResidual is Notion's stated residual in the race for one
// eligible task: claim-then-verify with a settle longer than the spread
// of the racers' writes leaves at most this share of the rounds not
// linearizable (FAULTS.md, "Notion's residual").
const notionRaceResidual = 6 // one round in six

// notionRace: the race for one eligible task on the Notion emulator, each
// page write held 300 ms on its way (as a slow Notion holds it), so that
// every racer reads the task before any write lands; claims settle 1 s
// before they verify.
func notionRace(t *testing.T) {
	w := notionWorld(t, 300*time.Millisecond, time.Second, "--rate", "0")
	w.must(context.Background(), "--create", "list")
	r := newRisk(w)
	r.residual = r.rounds / notionRaceResidual
	r.single()
	r.judge("notion", map[string]int{covRace: floors[covRace], covMixed: floors[covMixed]})
}

// notionGrace is the Notion rounds' grace: a claim there reads, writes,
// settles and reads again, and the claims inside the grace and the
// holder's late complete all come before the claim just after it.
const notionGrace = 6 * time.Second

// notionRounds: the rounds the other lanes run (stale holders writing
// after a takeover, a force-release and another claim; a lease that ends
// unheard, claims inside and just outside the grace; claim --task on a
// live lease) on the Notion emulator, whose claims settle 200 ms; each
// process sends up to 20 requests a second (the emulator has no rate). None
// of them races two claims of a free task, so no residual is allowed.
func notionRounds(t *testing.T) {
	w := riskyGrace(notionWorld(t, 0, 200*time.Millisecond, "--rate", "0"), notionGrace)
	b, err := os.ReadFile(w.conf)
	if err == nil {
		err = os.WriteFile(w.conf, []byte(strings.Replace(string(b), "    schema: ntask\n", "    schema: ntask\n    rate: 20\n", 1)), 0o600)
	}
	if err != nil || !strings.Contains(string(b), "    schema: ntask\n") {
		t.Fatalf("giving the Notion source a rate of 20: %v", err)
	}
	w.must(context.Background(), "--create", "list")
	r := newRisk(w)
	r.roundsOf(3)
	floor := maps.Clone(floors)
	delete(floor, covRace)
	delete(floor, covMixed)
	r.judge("notion rounds", floor)
}

func merged(all ...map[string]int) map[string]int {
	out := map[string]int{}
	for _, m := range all {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// TestRisky runs the risky workload on SQLite, lock directories and
// PostgreSQL, side by side and before the runs with kills and restarts
// (which would disturb its timing): its subtests are the lanes the
// mutation suite (.ci/mutants) picks from.
func TestRisky(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		riskyRun(risky(newWorld(t, writeConfig(t, "  - name: q\n    kind: sqlite\n    path: DIR/queue.db\n"), lease)), "sqlite", nil, nil)
	})
	t.Run("lockdir", func(t *testing.T) {
		t.Parallel()
		if _, err := exec.LookPath("strace"); err != nil {
			t.Fatal("the lock directory's risky workload holds processes with strace: install it (apt-get install strace)")
		}
		conf := writeConfig(t, "  - name: q\n    kind: lockdir\n    path: DIR/.locks\n")
		dir := filepath.Join(filepath.Dir(conf), ".locks")
		riskyRun(risky(newWorld(t, conf, lease)), "lockdir", func(r *risk) {
			r.midClaim(dir)
			r.tornRead(dir)
		}, lockdirFloors)
	})
	t.Run("notion", func(t *testing.T) {
		t.Parallel()
		t.Run("race", func(t *testing.T) {
			t.Parallel()
			notionRace(t)
		})
		t.Run("rounds", func(t *testing.T) {
			t.Parallel()
			notionRounds(t)
		})
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		dsn := os.Getenv("CLAIMDECK_TEST_PG_DSN")
		if dsn == "" {
			t.Skip("set CLAIMDECK_TEST_PG_DSN (.ci/faults does)")
		}
		w, table := postgresWorld(t, dsn)
		// The race tasks' claim holds its row for half a second, as a slow
		// disk would: every claim that starts meanwhile meets it.
		psql(t, dsn, `CREATE FUNCTION `+table+`_slow_claim() RETURNS trigger AS $$
			BEGIN PERFORM pg_sleep(0.5); RETURN NEW; END $$ LANGUAGE plpgsql;
			CREATE TRIGGER slow_claim BEFORE UPDATE ON `+table+` FOR EACH ROW
			WHEN (OLD.title LIKE 'race-%' AND OLD.status = 'pending' AND NEW.status = 'in_progress')
			EXECUTE FUNCTION `+table+`_slow_claim()`)
		// The first write to a zombie round's claim — the holder's
		// complete, or the person's takeover or release — holds the row
		// as long: the other one meets its lock.
		psql(t, dsn, `CREATE TRIGGER slow_zombie BEFORE UPDATE ON `+table+` FOR EACH ROW
			WHEN (OLD.title LIKE 'zombie-%' AND OLD.status = 'in_progress' AND OLD.holder_kind = 'AGENT')
			EXECUTE FUNCTION `+table+`_slow_claim()`)
		riskyRun(risky(w), "postgres", nil, nil)
	})
}
