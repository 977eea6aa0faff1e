package sqlstore

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

type colKind int

const (
	kText colKind = iota
	kTime
	kInt
)

type column struct {
	name string
	kind colKind
	// seed marks the columns of seed 003's table; the rest are added by
	// Migrate. required seed columns must exist even to read.
	seed, required bool
}

// columns is the order every SELECT and RETURNING lists them in.
var columns = []column{
	{"id", kText, true, true},
	{"title", kText, true, true},
	{"description", kText, true, false},
	{"priority", kText, true, true},
	{"task_type", kText, true, false},
	{"status", kText, true, true},
	{"assigned_worker", kText, true, true},
	{"created_at", kTime, true, true},
	{"started_at", kTime, true, true},
	{"completed_at", kTime, true, false},
	{"lock_token", kText, false, false},
	{"lease_expires_at", kTime, false, false},
	{"heartbeat_at", kTime, false, false},
	{"holder_kind", kText, false, false},
	{"run_id", kText, false, false},
	{"node", kText, false, false},
	{"reserved_for", kText, false, false},
	{"reserved_until", kTime, false, false},
	{"reserved_by", kText, false, false},
	{"handoff_reason", kText, false, false},
	{"handoff_priority", kText, false, false},
	{"class", kText, false, false},
	{"reason", kText, false, false},
	{"unblock_action", kText, false, false},
	{"next_check_at", kTime, false, false},
	{"artifacts", kText, false, false},
	{"escalation", kText, false, false},
	{"parent_id", kText, false, false},
	{"review_by", kText, false, false},
	{"version", kInt, false, false},
	{"updated_at", kTime, false, false},
}

// selectList renders the column list, standing in NULL for columns an
// unmigrated table does not have yet.
func selectList(d dialect, have map[string]bool) string {
	parts := make([]string, len(columns))
	for i, c := range columns {
		switch {
		case !have[c.name]:
			parts[i] = "NULL"
		case c.kind == kText:
			parts[i] = d.text(c.name)
		default:
			parts[i] = c.name
		}
	}
	return strings.Join(parts, ", ")
}

// row receives one SELECT/RETURNING row in columns order.
type row struct {
	id, title, description, priority, taskType, status, worker               nullText
	created, started, completed                                              nullTime
	token                                                                    nullText
	leaseExpires, heartbeat                                                  nullTime
	holderKind, runID, node, reservedFor                                     nullText
	reservedUntil                                                            nullTime
	reservedBy, handoffReason, handoffPriority, class, reason, unblockAction nullText
	nextCheck                                                                nullTime
	artifacts, escalation, parent, reviewBy                                  nullText
	version                                                                  nullInt64
	updated                                                                  nullTime
}

func (r *row) dest() []any {
	return []any{
		&r.id, &r.title, &r.description, &r.priority, &r.taskType, &r.status, &r.worker,
		&r.created, &r.started, &r.completed,
		&r.token, &r.leaseExpires, &r.heartbeat, &r.holderKind, &r.runID, &r.node,
		&r.reservedFor, &r.reservedUntil, &r.reservedBy, &r.handoffReason, &r.handoffPriority,
		&r.class, &r.reason, &r.unblockAction, &r.nextCheck, &r.artifacts, &r.escalation, &r.parent, &r.reviewBy,
		&r.version, &r.updated,
	}
}

// The seed 003 vocabulary, and the statuses claimdeck adds for the states
// the seed has no word for.
const (
	statusPending    = "pending"
	statusInProgress = "in_progress"
	statusCompleted  = "completed"
	statusFailed     = "failed"
	statusBlocked    = "blocked"
	statusReview     = "review"
	statusCanceled   = "canceled"
	statusBacklog    = "backlog" // ntask's Backlog: parked until released
)

var stateOfStatus = map[string]model.State{
	statusPending:    model.StateQueued,
	statusInProgress: model.StateClaimed,
	statusCompleted:  model.StateDone,
	statusFailed:     model.StateFailed,
	statusBlocked:    model.StateBlocked,
	statusReview:     model.StateReview,
	statusCanceled:   model.StateCanceled,
	"cancelled":      model.StateCanceled,
	statusBacklog:    model.StateBlocked,
}

// words holds each word of stateOfStatus as its own key, so that a row's
// status is kept as that one string: the rows of a poll share the
// vocabulary's few strings instead of holding one each (100,000 tasks:
// about 1 MB).
var words = func() map[string]string {
	m := make(map[string]string, len(stateOfStatus))
	for w := range stateOfStatus {
		m[w] = w
	}
	return m
}()

// vocabulary is s as the vocabulary's own string when it is one of its
// words.
func vocabulary(s string) string {
	if w, ok := words[s]; ok {
		return w
	}
	return s
}

var statusOfState = map[model.State]string{
	model.StateQueued:   statusPending,
	model.StateClaimed:  statusInProgress,
	model.StateDone:     statusCompleted,
	model.StateFailed:   statusFailed,
	model.StateBlocked:  statusBlocked,
	model.StateReview:   statusReview,
	model.StateCanceled: statusCanceled,
}

// rowPriority reads seed 003's priority text exactly as the SQL ORDER BY
// does (see priorityRank), so that the screen and `next` agree.
func rowPriority(s string) int {
	v := strings.ToLower(strings.TrimSpace(s))
	switch v {
	case "critical":
		return model.PriorityCritical
	case "high", "urgent":
		return model.PriorityHigh
	case "medium", "normal":
		return model.PriorityMedium
	case "low":
		return model.PriorityLow
	}
	if len(v) >= 1 && len(v) <= 9 && strings.Trim(v, "0123456789") == "" {
		n, _ := strconv.Atoi(v)
		return n
	}
	return model.PriorityNone
}

// rowClass reads the class as the SQL ORDER BY does (see classRank).
func rowClass(s string) model.Class {
	c, err := model.ParseClass(s)
	if err != nil {
		return model.ClassStandard
	}
	return c
}

// carried is what the row keeps beyond what t says: seed 003's task_type
// and, on a row not claimed now, its worker, started_at and completed_at.
func (r *row) carried(t *model.Task) *model.Carried {
	c := &model.Carried{TaskType: r.taskType.String, CompletedAt: r.completed.t}
	if t.State != model.StateClaimed {
		c.Worker, c.StartedAt = r.worker.String, r.started.t
	} else {
		c.LeaseUnset = r.leaseExpires.t.IsZero() && !r.holderKind.Valid
	}
	return c
}

// task maps a row onto the model. seedTimeout is the lease of rows claimed
// by the seed's own SQL, which records only started_at.
func (r *row) task(source, pool string, seedTimeout time.Duration) *model.Task {
	t := &model.Task{
		Source:      source,
		ID:          r.id.String,
		Key:         r.id.String,
		Title:       r.title.String,
		Description: r.description.String,
		RawStatus:   vocabulary(r.status.String),
		Class:       rowClass(r.class.String),
		Priority:    rowPriority(r.priority.String),
		CreatedAt:   model.StampOf(r.created.t),
		EditedAt:    model.StampOf(r.created.t),
	}
	t.SetMore(model.More{Reason: r.reason.String, Artifacts: r.artifacts.String, Unblock: model.UnblockOf(r.unblockAction.String, r.nextCheck.t),
		Parent: r.parent.String})
	if state := stateOfStatus[strings.ToLower(strings.TrimSpace(r.status.String))]; state == model.StateReview && r.reviewBy.String != "" {
		t.EditMore().ReviewBy = r.reviewBy.String
	}
	if r.version.Valid {
		t.Version = strconv.FormatInt(r.version.Int64, 10)
		t.EditedAt = model.StampOf(r.updated.t)
	}
	if lvl, ok := model.ParseLevel(r.escalation.String); ok {
		t.Escalated = lvl
	}
	state, known := stateOfStatus[strings.ToLower(strings.TrimSpace(r.status.String))]
	t.State = state
	if !known {
		t.EditMore().Problem = fmt.Sprintf("status %q is not in the vocabulary (pending, in_progress, completed, failed, blocked, review, canceled, backlog)", r.status.String)
	}
	for _, nt := range []*nullTime{&r.created, &r.started, &r.completed, &r.leaseExpires, &r.heartbeat, &r.reservedUntil, &r.nextCheck, &r.updated} {
		if nt.err != nil && t.More().Problem == "" {
			t.EditMore().Problem = nt.err.Error()
		}
	}
	worker := r.worker.String
	switch t.State {
	case model.StateClaimed:
		c := model.Claim{
			Holder:      model.HolderAgent,
			Name:        worker,
			RunID:       r.runID.String,
			Node:        r.node.String,
			Token:       r.token.String,
			ClaimedAt:   model.StampOf(r.started.t),
			HeartbeatAt: model.StampOf(r.heartbeat.t),
			Expires:     model.StampOf(r.leaseExpires.t),
		}
		if r.holderKind.String == model.HolderHuman.String() {
			c.Holder, c.Expires = model.HolderHuman, 0
		} else if c.Expires.IsZero() && !r.started.t.IsZero() {
			c.Expires = model.StampOf(r.started.t.Add(seedTimeout))
		}
		t.SetClaim(c)
	case model.StateQueued:
		switch {
		case r.reservedFor.Valid:
			t.SetReservation(&model.Reservation{
				For: r.reservedFor.String, Until: r.reservedUntil.t, By: r.reservedBy.String,
				Reason: r.handoffReason.String, Priority: r.handoffPriority.String,
			})
		case worker != "" && worker != pool:
			// Seed 003's queue is the rows assigned to the pool; a pending row
			// assigned to anyone else is theirs.
			t.SetReservation(&model.Reservation{For: worker})
		}
	}
	return t
}
