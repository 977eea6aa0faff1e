package notion

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// eligible queries the queued tasks and returns those agent may pull, in
// pull order. The order is computed here: Notion sorts a select by its
// option order and cannot rank a missing class as STANDARD.
func (s *Source) eligible(ctx context.Context, op, agent string) ([]*model.Task, error) {
	tasks, err := s.query(ctx, op, s.m.optionFilter(s.m.Status, s.m.States[model.StateQueued]))
	if err != nil {
		return nil, err
	}
	now := s.now()
	out := tasks[:0]
	for _, t := range tasks {
		if model.EligibleFor(t, agent, now) {
			out = append(out, t)
		}
	}
	model.SortPullOrder(out)
	return out, nil
}

// Next is seed 002's next: the first eligible task in pull order, or nil.
func (s *Source) Next(ctx context.Context, agent string) (*model.Task, error) {
	ctx, done := s.begin(ctx)
	defer done()
	tasks, err := s.eligible(ctx, "next", agent)
	if err != nil || len(tasks) == 0 {
		return nil, err
	}
	return tasks[0], nil
}

// Claim reads the page, writes the claim, waits Settle and reads the page
// again: a different token then means another claimer wrote after us and
// won (CONFLICT). A claimer whose read came before our write and whose
// write lands after our verifying read still wins too: that race remains.
func (s *Source) Claim(ctx context.Context, id string, c sources.ClaimRequest) (*model.Task, error) {
	if err := c.Check("claim", id); err != nil {
		return nil, err
	}
	const op = "claim"
	if strings.TrimSpace(c.Agent) == "" {
		return nil, model.Errorf(model.CodeMisconfigured, op, id, "no agent name")
	}
	id, err := s.resolve(ctx, op, id)
	if err != nil {
		return nil, err
	}
	return s.claim(ctx, id, c)
}

func (s *Source) claim(ctx context.Context, id string, c sources.ClaimRequest) (*model.Task, error) {
	const op = "claim"
	ctx, done := s.begin(ctx)
	defer done()
	if _, busy := s.claiming.LoadOrStore(id, struct{}{}); busy {
		return nil, model.Errorf(model.CodeConflict, op, id, "another claim of this task from this process is in progress")
	}
	defer s.claiming.Delete(id)
	slots := s.limit.reserve(2) // the read and the write go back to back
	t, err := s.page(withSlot(ctx, slots, 0), op, id)
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		now := s.now()
		if !model.Claimable(t, c.Agent, now, s.grace) {
			return nil, s.refuse(op, t, c.Agent, now)
		}
		lease := c.Lease
		if lease <= 0 {
			lease = s.lease
		}
		token := uuid.NewString()
		p := patch{}
		p.option(s.m.Status, s.m.States[model.StateClaimed])
		p.lock(&s.m, model.HolderAgent, c.Agent, c.RunID, token, now, now.Add(lease))
		p.date(s.m.StartedAt, now)
		p.option(s.m.HandoffStatus, "claimed")
		ev := c.Event(t, now)
		if ev.Action != model.ActionRescue {
			ev.Action = "claimed" // seed 001's word in handoff_history
		}
		s.appendHistory(p, t, ev)
		_, werr := s.write(withSlot(ctx, slots, 1), t.ID, p)
		slots = nil
		if werr != nil && !ambiguous(ctx, werr) {
			return nil, s.fail(op, t.ID, werr)
		}
		if werr != nil {
			// Never sent again blindly: the write may have landed, or
			// another claimer may have come in while we waited. Re-read;
			// a claim that is not ours starts the cycle over, and the
			// check above refuses a task someone else now holds.
			if err := s.waitAfter(ctx, attempt, werr); err != nil {
				return nil, s.fail(op, t.ID, err)
			}
			if t, err = s.page(ctx, op, t.ID); err != nil {
				return nil, err
			}
			if t.Claim().Token != token {
				if attempt >= claimAttempts {
					return nil, s.gaveUp(op, t, werr)
				}
				continue
			}
		}
		if err := sleep(ctx, s.settle); err != nil {
			return nil, s.fail(op, t.ID, err)
		}
		got, err := s.page(ctx, op, t.ID)
		if err != nil {
			return nil, err
		}
		if got.Claim().Token != token {
			e := model.Errorf(model.CodeConflict, op, t.ID, "another claimer wrote after us: the task is held by %s", orDash(got.Claim().Name))
			e.Current = got
			return nil, e
		}
		if ev.Action == model.ActionRescue {
			// Seed 002: a claim over a dead lock is noted in the task's comments.
			return s.audited(ctx, op, got, auditNote(model.ActionRescue, c.Agent, "", ev.Detail, t))
		}
		return got, nil
	}
}

// gaveUp ends a claim whose writes kept failing: after 409 conflict_error
// the task is contended, which is CONFLICT (ClaimNext moves on).
func (s *Source) gaveUp(op string, t *model.Task, err error) error {
	var ae *apiError
	if errors.As(err, &ae) && ae.Status == http.StatusConflict {
		e := model.Errorf(model.CodeConflict, op, t.ID, "Notion kept answering 409 conflict_error: the task is contended (request_id %s)", orDash(ae.RequestID))
		e.Current = t
		return e
	}
	return s.fail(op, t.ID, err)
}

// refuse explains why a task cannot be claimed.
func (s *Source) refuse(op string, t *model.Task, agent string, now time.Time) error {
	var e *model.Error
	switch {
	case t.More().Problem != "":
		e = model.Errorf(model.CodeConflict, op, t.ID, "the task cannot be pulled: %s", t.More().Problem)
	case t.Held():
		e = model.Errorf(model.CodeConflict, op, t.ID, "the task is held by %s", orDash(t.Claim().Name))
	case t.State != model.StateQueued:
		e = model.Errorf(model.CodeConflict, op, t.ID, "the task is %s, not queued", t.State)
	case !t.Reserved().Allows(agent, now):
		e = model.Errorf(model.CodeConflict, op, t.ID, "the task is reserved for %s", t.Reserved().For)
	default:
		e = model.Errorf(model.CodeConflict, op, t.ID, "the task is not claimable")
	}
	e.Current = t
	return e
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// claimAttempts bounds how many candidates one ClaimNext tries.
const claimAttempts = 3

// ClaimNext claims the first eligible task. When another claimer wins it,
// the next attempt goes to a random one of the following candidates, so
// that many agents draining one queue spread out instead of all racing for
// the head.
func (s *Source) ClaimNext(ctx context.Context, c sources.ClaimRequest) (*model.Task, error) {
	if err := c.Check("claim", ""); err != nil {
		return nil, err
	}
	ctx, done := s.begin(ctx)
	defer done()
	const op = "claim-next"
	if strings.TrimSpace(c.Agent) == "" {
		return nil, model.Errorf(model.CodeMisconfigured, op, "", "no agent name")
	}
	tasks, err := s.eligible(ctx, op, c.Agent)
	if err != nil || len(tasks) == 0 {
		return nil, err
	}
	var lastErr error
	for attempt := 0; attempt < claimAttempts && len(tasks) > 0; attempt++ {
		// The head first; after a lost race, a random one of the next few.
		i := 0
		if attempt > 0 {
			i = rand.N(min(len(tasks), 32))
		}
		pick := tasks[i]
		tasks = removeTask(tasks, pick.ID)
		if _, busy := s.claiming.Load(pick.ID); busy {
			attempt-- // another agent of this process has it: not a try
			continue
		}
		t, err := s.claim(ctx, pick.ID, c)
		if err == nil || model.CodeOf(err) != model.CodeConflict {
			return t, err
		}
		lastErr = err
	}
	if lastErr == nil {
		lastErr = model.Errorf(model.CodeConflict, op, "", "every eligible task is being claimed by another agent of this process")
	}
	return nil, lastErr
}

func removeTask(tasks []*model.Task, id string) []*model.Task {
	for i, t := range tasks {
		if t.ID == id {
			return append(tasks[:i:i], tasks[i+1:]...)
		}
	}
	return tasks
}

// holder reads the page and checks that token is current
// (model.TokenCurrent): every holder write is fenced on it (LOST_LOCK
// otherwise).
func (s *Source) holder(ctx context.Context, op, id, token string) (*model.Task, error) {
	t, err := s.claimedWith(ctx, op, id, token)
	if err != nil {
		return nil, err
	}
	if !model.TokenCurrent(t, token, s.now()) {
		return nil, s.lost(op, id, t)
	}
	return t, nil
}

// claimedWith reads the page and checks that token names its claim, whether
// or not the lease still runs: the sweep marks claims that are dead.
func (s *Source) claimedWith(ctx context.Context, op, id, token string) (*model.Task, error) {
	t, err := s.page(ctx, op, id)
	if errors.As(err, new(trashed)) && token != "" {
		// A page put in the trash takes its claim with it: the holder's
		// token is dead, not misspelled. A page that never was is
		// MISCONFIGURED, as on every backend.
		return nil, model.Errorf(model.CodeLostLock, op, id, "the task is gone (its page is in the trash): the claim ended")
	}
	if err != nil {
		return nil, err
	}
	if token == "" || !t.Held() || t.Claim().Token != token || t.State != model.StateClaimed {
		return nil, s.lost(op, id, t)
	}
	return t, nil
}

// lost is LOST_LOCK carrying the task as it is now.
func (s *Source) lost(op, id string, now *model.Task) error {
	e := sources.Lost(op, id).(*model.Error)
	e.Current = now
	return e
}

// Heartbeat extends the lease of the holder of token. Without a lease
// expiry property the claim time is moved instead (seed 001's heartbeat
// "updates claimed_at").
func (s *Source) Heartbeat(ctx context.Context, id, token string, lease time.Duration) (*model.Task, error) {
	if err := sources.CheckHeartbeat("heartbeat", id, token, lease); err != nil {
		return nil, err
	}
	const op = "heartbeat"
	ctx, done := s.begin(ctx)
	defer done()
	id, err := s.resolve(ctx, op, id)
	if err != nil {
		return nil, err
	}
	if lease <= 0 {
		lease = s.lease
	}
	for attempt := 1; ; attempt++ {
		// The token is checked before every try: a heartbeat that failed
		// is sent again only while the claim is still ours.
		t, err := s.holder(ctx, op, id, token)
		if err != nil {
			return nil, err
		}
		now := s.now()
		p := patch{}
		p.lease(&s.m, now, now.Add(lease))
		if t.Escalated > model.LevelNone {
			p.option(s.m.HandoffStatus, "claimed") // alive after all: the sweep judges it afresh
		}
		got, err := s.write(ctx, id, p)
		if err == nil || !ambiguous(ctx, err) || attempt >= claimAttempts {
			return got, s.failOrNil(op, id, err)
		}
		if err := s.waitAfter(ctx, attempt, err); err != nil {
			return nil, s.fail(op, id, err)
		}
	}
}

// finals are the outcomes a holder may end with.
var finals = map[model.State]string{
	model.StateDone: "completed", model.StateBlocked: "blocked", model.StateReview: "review",
	model.StateCanceled: "canceled", model.StateFailed: "failed",
}

// Finish ends or parks the holder's claim and clears the lock.
func (s *Source) Finish(ctx context.Context, id, token string, o sources.Outcome) (*model.Task, error) {
	if err := o.Check("finish", id, token); err != nil {
		return nil, err
	}
	ctx, done := s.begin(ctx)
	defer done()
	const op = "finish"
	id, err := s.resolve(ctx, op, id)
	if err != nil {
		return nil, err
	}
	action, ok := finals[o.State]
	if !ok {
		return nil, model.Errorf(model.CodeMisconfigured, op, id, "%s is not an outcome: want done, blocked, review, canceled or failed", o.State)
	}
	if s.m.States[o.State] == "" {
		return nil, model.Errorf(model.CodeMisconfigured, op, id, "the database's %s has no status for %s", s.m.Status, o.State)
	}
	t, err := s.holder(ctx, op, id, token)
	if err != nil {
		return nil, err
	}
	if o.State == model.StateDone {
		if t.OpenSubtasks, err = s.openSubtasks(ctx, id, t.OpenSubtasks); err != nil {
			return nil, s.fail(op, id, err)
		}
	}
	if o.State == model.StateDone && t.OpenSubtasks > 0 {
		// Seed 002: "Sub-task completion is enforced at done time via the
		// Dependencies rollup" — read fresh by holder above.
		e := model.Errorf(model.CodeIncompleteSubtasks, "complete", id, "%d sub-task(s) are still open (%s)", t.OpenSubtasks, s.m.Subtasks)
		e.Current = t
		return nil, e
	}
	now := s.now()
	p := patch{}
	p.option(s.m.Status, s.m.States[o.State])
	p.lock(&s.m, model.HolderNone, "", "", "", time.Time{}, time.Time{})
	p.option(s.m.HandoffStatus, "available")
	switch o.State {
	case model.StateDone, model.StateReview:
		if o.Artifacts != "" {
			p.text(s.m.Artifacts, o.Artifacts)
		}
		switch {
		case o.State == model.StateDone:
			p.date(s.m.DoneAt, now)
		case s.m.ReviewInArtifacts && s.m.Artifacts != "" && o.Reason != "":
			p.text(s.m.Artifacts, strings.TrimSpace(o.Reason+"\n"+o.Artifacts)) // the summary for the reviewer, then the artifacts
		default:
			p.text(s.m.Reason, o.Reason) // the summary for the reviewer
		}
	case model.StateBlocked:
		p.text(s.m.Reason, o.Reason)
		p.text(s.m.UnblockAction, o.UnblockAction)
		p.date(s.m.NextCheckAt, o.NextCheckAt)
	default:
		p.text(s.m.Reason, o.Reason)
	}
	if o.Reason == "" && o.State != model.StateBlocked {
		// keep whatever reason the task had
		delete(p, s.m.Reason)
	}
	if o.State == model.StateFailed && s.m.FailedMark != "" {
		p.text(s.m.Reason, s.m.FailedMark+o.Reason)
	}
	ev := o.Event(t.Claim().Name, now)
	ev.Action = action
	s.appendHistory(p, t, ev)
	got, err := s.settled(ctx, op, t, p, model.CodeLostLock)
	person, own := t.Claim().Person(), model.OwnAction(o.State)
	if err == nil && o.State == model.StateReview {
		// Who sent it to review decides who may approve it
		// (model.CheckSelfApproval): claimdeck's signed note keeps it,
		// for the version the review left (reviewBy). The review has
		// landed; without the note the approval fails closed.
		by := o.By(t.Claim().Name)
		if person != "" {
			by = person
		}
		_, nerr := s.audited(ctx, string(model.ActionReview), got, withDoor(auditNote(model.ActionReview, by, o.Reason, versionPart+reviewMark(got), t), o.Door))
		if nerr == nil {
			got.EditMore().ReviewBy = by
		}
		return got, nil
	}
	if err != nil || person == "" || own == "" {
		return got, err
	}
	// A person's own finish is a human action: audited as takeover and
	// the others are.
	return s.audited(ctx, string(own), got, withDoor(auditNote(own, person, o.Reason, "", t), o.Door))
}

// settled writes a patch over before, waits Settle and reads the page
// again. When a concurrent write replaced what we wrote (another status or
// holder), the write lost: code says how to report it, with the task as it
// is now. So two racing writers agree on who won unless the loser's write
// lands after the winner's verifying read — the race Notion leaves open.
//
// A write that failed is never sent again blindly: the page is re-read,
// after the last attempt too. Unchanged, the write did not land and is tried
// again (at most claimAttempts times); changed by our
// write, it landed; changed otherwise, a holder write goes on only while
// the token is still ours, and a human action, whose human saw the older
// version, stops with code.
func (s *Source) settled(ctx context.Context, op string, before *model.Task, p patch, code model.Code) (*model.Task, error) {
	ctx, done := s.begin(ctx)
	defer done()
	id := before.ID
	var wrote *model.Task
	for attempt := 1; wrote == nil; attempt++ {
		w, err := s.write(ctx, id, p)
		if err == nil {
			wrote = w
			break
		}
		if !ambiguous(ctx, err) {
			return nil, s.fail(op, id, err)
		}
		if err := s.waitAfter(ctx, attempt, err); err != nil {
			return nil, s.fail(op, id, err)
		}
		// The last attempt is read back too: a write that landed and was
		// answered with an error is a write that landed, and reporting it
		// as failed sends the agent to retry into LOST_LOCK.
		now, raw, rerr := s.pageRaw(ctx, op, id)
		switch {
		case rerr != nil:
			return nil, rerr
		case now.Version == before.Version:
			if attempt >= claimAttempts {
				return nil, s.fail(op, id, err)
			}
		case p.shows(raw):
			wrote = now
		case code == model.CodeLostLock && now.Held() && now.Claim().Token == before.Claim().Token && now.State == model.StateClaimed:
			before = now
		default:
			e := model.Errorf(code, op, id, "the task changed while our write was failing: it is now %s, held by %s; nothing was written", now.State, orDash(now.Claim().Name))
			e.Current = now
			return nil, e
		}
	}
	if err := sleep(ctx, s.settle); err != nil {
		return nil, s.fail(op, id, err)
	}
	got, err := s.page(ctx, op, id)
	if err != nil {
		return nil, err
	}
	a, b := wrote.Claim(), got.Claim()
	if got.RawStatus != wrote.RawStatus || a.Holder != b.Holder || a.Name != b.Name || a.Token != b.Token {
		e := model.Errorf(code, op, id, "a concurrent write replaced ours: the task is now %s, held by %s", got.State, orDash(b.Name))
		if code == model.CodeLostLock {
			e.Msg = "the lock was taken while we wrote: " + e.Msg
		}
		e.Current = got
		return nil, e
	}
	return got, nil
}
