package notion

import (
	"context"

	"github.com/claimdeck/claimdeck/model"
)

// MarkEscalation writes seed 001's escalation onto an agent's stuck claim,
// as its stale-detection cron does: handoff_status "stale" (the claim is
// expired and any node may take it over), priority "urgent" at 30 minutes,
// handoff_status "escalated" at 2 hours. The claim's token is checked on a
// fresh read first (LOST_LOCK otherwise), and the write is one page update,
// so a claim re-taken in between can still be marked: Notion offers no
// conditional write, and a mark only makes a claim look older than it is.
// A database without handoff_status has nowhere to keep the level:
// MISCONFIGURED, and the sweep reports it instead of marking.
func (s *Source) MarkEscalation(ctx context.Context, id, token string, level model.Level) error {
	ctx, done := s.begin(ctx)
	defer done()
	const op = "escalate"
	if level <= model.LevelNone || level > model.LevelEscalated {
		return model.Errorf(model.CodeMisconfigured, op, id, "escalation level %d is not on the ladder", int(level))
	}
	if s.m.HandoffStatus == "" {
		return model.Errorf(model.CodeMisconfigured, op, id, "the database has no hand-off status property (seed 001's handoff_status) to record escalation in")
	}
	t, err := s.claimedWith(ctx, op, id, token)
	if err != nil {
		return err
	}
	if t.Claim().Holder != model.HolderAgent {
		return s.lost(op, id, t)
	}
	if t.Escalated >= level {
		return nil // marked already, by this sweep or another
	}
	p := patch{}
	status := "stale"
	if level == model.LevelEscalated {
		status = "escalated"
	}
	p.option(s.m.HandoffStatus, status)
	if level >= model.LevelUrgent && s.m.PriorityOptions != nil && t.Priority < model.PriorityHigh {
		p.priority(&s.m, model.PriorityHigh)
	}
	s.appendHistory(p, t, model.Event{At: s.now(), Actor: "claimdeck sweep", Action: op, Detail: "level " + level.String()})
	_, err = s.update(ctx, op, id, p)
	return err
}
