package tui

import (
	"cmp"
	"slices"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/hub"
)

// maxActivity is how many Activity lines are kept (up to twice as many
// between trims).
const maxActivity = 5000

// activity is one line of the Activity view.
type activity struct {
	At     time.Time
	Source string
	Task   string
	Actor  string
	What   string
	Human  bool // a human action, not an observed transition
	Failed bool
}

func (b *board) addActivity(a activity) {
	b.acts = append(b.acts, a)
	if len(b.acts) >= 2*maxActivity {
		// Trim in bulk, so a burst of transitions costs a copy now and
		// then, not one per line.
		b.acts = slices.Delete(b.acts, 0, len(b.acts)-maxActivity)
	}
	b.panes[activityView].unsorted = true
}

func recordActivity(r model.AuditRecord) activity {
	what := string(r.Action)
	if r.Target != "" {
		what += " → " + r.Target
	}
	if r.Reason != "" {
		what += " (" + r.Reason + ")"
	}
	failed := r.Result != "applied"
	if failed {
		what += " refused: " + r.Error
	}
	return activity{At: r.At, Source: r.Source, Task: cmp.Or(r.Key, r.Task), Actor: r.Actor, What: r.Actor + " " + what, Human: true, Failed: failed}
}

func transitionActivity(tr hub.Transition) activity {
	t := tr.After
	if t == nil {
		t = tr.Before
	}
	a := activity{At: tr.At, Source: t.Source, Task: t.DisplayKey(), Actor: t.Claim().Name}
	switch {
	case tr.Before == nil:
		a.What = "appeared as " + t.State.String()
	case tr.After == nil:
		a.What = "removed"
	case model.Reaped(tr.Before, tr.After, tr.At):
		// Put back once its lease had ended: the queue working, not an alarm.
		a.What = "reaped: " + tr.Before.State.String() + " → " + tr.After.State.String()
	case model.Rescued(tr.Before, tr.After, tr.At):
		// Claimed by another agent once its holder's lease ended.
		a.What = "rescued from " + tr.Before.Claim().Name + ": lease ended, now " + t.Claim().Name
		return a
	case tr.Before.State != tr.After.State:
		a.What = tr.Before.State.String() + " → " + tr.After.State.String()
	default:
		a.What = "changed"
	}
	if t.Held() {
		a.What += " by " + t.Claim().Holder.String() + " " + t.Claim().Name
	} else if tr.Before != nil && tr.Before.Held() {
		a.What += " (was " + tr.Before.Claim().Name + ")"
	}
	if r := t.ReservedFor(); r != "" && (tr.Before == nil || tr.Before.ReservedFor() != r) {
		a.What += ", reserved for " + r
	}
	return a
}
