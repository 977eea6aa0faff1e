package sourcetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// atomicOrMeasure fails the test for a backend that promises atomic claims,
// and reports the figure for one that does not.
func (k *kit) atomicOrMeasure(t *testing.T, what string, n int) {
	t.Helper()
	k.report(t, what, float64(n))
	if n != 0 && k.src.Caps().AtomicClaim {
		t.Errorf("%d %s", n, what)
	}
}

func testOneTaskManyClaimers(t *testing.T, k *kit) {
	ctx := k.ctx(t)
	task := k.create(t, sources.NewTask{Title: "everyone wants this"})
	var wins, conflicts, other atomic.Int64
	var mu sync.Mutex
	won := map[string]string{} // token -> agent, of every claim answered as won
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < k.h.Claimers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			agent := fmt.Sprintf("agent-%02d", i)
			got, err := k.src.Claim(ctx, task.ID, sources.ClaimRequest{Agent: agent})
			switch model.CodeOf(err) {
			case "":
				wins.Add(1)
				mu.Lock()
				won[got.Claim().Token] = agent
				mu.Unlock()
			case model.CodeConflict:
				conflicts.Add(1)
			default:
				other.Add(1)
				t.Errorf("claimer %d: %v", i, err)
			}
		}(i)
	}
	close(start)
	wg.Wait()
	if wins.Load() == 0 {
		t.Fatalf("nobody won the task (%d conflicts)", conflicts.Load())
	}
	k.atomicOrMeasure(t, "extra winners on one task", int(wins.Load()-1))
	// The task as stored is held by a claimer that was told it won, under
	// the token it was given: no answer of "won" for a claim that lost,
	// and no stored claim nobody was told of.
	now := k.get(t, task.ID)
	if agent, ok := won[now.Claim().Token]; !ok || now.State != model.StateClaimed || now.Claim().Name != agent {
		t.Fatalf("after %d claims answered won, the task is %s with a token no winner was given", wins.Load(), describe(now))
	}
}

// testContention lets every claimer drain the queue with ClaimNext and
// complete what it got, then checks every task was claimed and completed
// exactly once.
func testContention(t *testing.T, k *kit) {
	ctx := k.ctx(t)
	ids := make(map[string]bool, k.h.Tasks)
	for i := 0; i < k.h.Tasks; i++ {
		task := k.create(t, sources.NewTask{Title: fmt.Sprintf("bulk %04d", i), Priority: i % 5})
		ids[task.ID] = true
	}
	var (
		mu        sync.Mutex
		claims    = map[string]int{}
		completes = map[string]int{}
		lost      atomic.Int64
	)
	var wg sync.WaitGroup
	start := make(chan struct{})
	begin := time.Now()
	for i := 0; i < k.h.Claimers; i++ {
		wg.Add(1)
		go func(agent string) {
			defer wg.Done()
			<-start
			busy := 0
			for idle := 0; idle < 3; {
				task, err := k.src.ClaimNext(ctx, sources.ClaimRequest{Agent: agent})
				if err != nil {
					switch code := model.CodeOf(err); {
					case code == model.CodeConflict:
						continue // a non-atomic backend lost the verify race: try again
					case code == model.CodeAPIError && busy < 4:
						// A busy database: the contract's agent tries again. A
						// claim that took effect unanswered would be left behind
						// and fail the count below.
						busy++
						continue
					}
					t.Errorf("%s: claim-next: %v", agent, err)
					return
				}
				busy = 0
				if task == nil {
					idle++ // nothing eligible; look again in case a racer released one
					continue
				}
				mu.Lock()
				claims[task.ID]++
				mu.Unlock()
				// An agent retries API_ERROR, as the contract tells it to; the
				// lock token keeps a retry from finishing anyone else's claim.
				for try := 0; ; try++ {
					_, err = k.src.Finish(ctx, task.ID, task.Claim().Token, sources.Outcome{State: model.StateDone, Artifacts: agent})
					if model.CodeOf(err) != model.CodeAPIError || try == 4 {
						break
					}
				}
				switch model.CodeOf(err) {
				case "":
					mu.Lock()
					completes[task.ID]++
					mu.Unlock()
				case model.CodeLostLock:
					lost.Add(1)
				default:
					t.Errorf("%s: complete %s: %v", agent, task.ID, err)
					return
				}
			}
		}(fmt.Sprintf("agent-%02d", i))
	}
	close(start)
	wg.Wait()
	elapsed := time.Since(begin)

	doubleClaims, doubleCompletes := 0, 0
	for id, n := range claims {
		if !ids[id] {
			t.Errorf("claimed a task that was never created: %s", id)
		}
		doubleClaims += n - 1
	}
	for _, n := range completes {
		doubleCompletes += n - 1
	}
	k.report(t, "claim-complete cycles/s", float64(len(completes))/elapsed.Seconds())
	k.atomicOrMeasure(t, "double claims", doubleClaims)
	k.atomicOrMeasure(t, "double completions", doubleCompletes)
	k.atomicOrMeasure(t, "completions refused as LOST_LOCK", int(lost.Load()))
	if len(completes) != len(ids) {
		t.Errorf("%d of %d tasks completed; the rest were left behind", len(completes), len(ids))
	}
	d, err := k.src.Poll(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range d.Tasks {
		if ids[task.ID] && task.State != model.StateDone {
			t.Errorf("task %s ended %s, want done", task.ID, task.State)
		}
	}
}

// testZombieRace races a human force-release against the holder's own
// completion on many tasks. Under the protocol exactly one of them wins on
// each task, and the task ends in the winner's state.
func testZombieRace(t *testing.T, k *kit) {
	ctx := k.ctx(t)
	n := k.h.Tasks / 5
	if n < 20 {
		n = 20
	}
	type pair struct{ seen, held *model.Task }
	pairs := make([]pair, n)
	for i := range pairs {
		task := k.create(t, sources.NewTask{Title: fmt.Sprintf("race %03d", i)})
		held := k.claim(t, task.ID, "SANDMAN")
		pairs[i] = pair{seen: k.get(t, task.ID), held: held}
	}
	var bothWon, noneWon, wrongEnd atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, k.h.Claimers/2+1)
	for _, p := range pairs {
		wg.Add(1)
		sem <- struct{}{}
		go func(p pair) {
			defer func() { <-sem; wg.Done() }()
			var relErr, doneErr error
			var inner sync.WaitGroup
			inner.Add(2)
			go func() {
				defer inner.Done()
				_, relErr = k.src.ForceRelease(ctx, p.seen.ID, sources.Human{Actor: "alice", Reason: "race", Expect: p.seen.Version})
			}()
			go func() {
				defer inner.Done()
				_, doneErr = k.src.Finish(ctx, p.held.ID, p.held.Claim().Token, sources.Outcome{State: model.StateDone})
			}()
			inner.Wait()
			for _, err := range []error{relErr, doneErr} {
				if c := model.CodeOf(err); c != "" && c != model.CodeConflict && c != model.CodeLostLock {
					t.Errorf("race on %s: %v", p.seen.ID, err)
				}
			}
			end, err := k.src.Get(context.WithoutCancel(ctx), p.seen.ID)
			if err != nil {
				t.Errorf("get %s: %v", p.seen.ID, err)
				return
			}
			switch {
			case relErr == nil && doneErr == nil:
				bothWon.Add(1)
			case relErr != nil && doneErr != nil:
				noneWon.Add(1)
			case relErr == nil && (end.State != model.StateQueued || end.Held()):
				wrongEnd.Add(1)
			case doneErr == nil && end.State != model.StateDone:
				wrongEnd.Add(1)
			}
		}(p)
	}
	wg.Wait()
	k.atomicOrMeasure(t, "zombie writes accepted after a force-release", int(bothWon.Load()))
	k.atomicOrMeasure(t, "races with an inconsistent end state", int(wrongEnd.Load()))
	if noneWon.Load() != 0 {
		t.Errorf("%d races where neither the release nor the completion was applied", noneWon.Load())
	}
}
