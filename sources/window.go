package sources

import (
	"slices"
	"strings"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

// PollOption narrows a full poll so that its cost follows live work, not
// history. With none, Poll returns every task.
type PollOption struct {
	// FinishedAfter leaves out the tasks model.Archived calls history at
	// this horizon; a full poll counts them in Delta.Archived. Zero keeps
	// every task.
	FinishedAfter time.Time
	// Uncounted lets a backend skip counting what it left out, when that
	// costs more than reading the live tasks (SQL: a year of history); the
	// caller then ignores Delta.Archived. The dashboard's first poll sets it.
	Uncounted bool
	// First asks a full poll for a first screen: at most this many queued
	// tasks in pull order, from an index, as a Delta with Partial set. A
	// backend that cannot answer it cheaply returns everything instead.
	First int
}

// FirstPage is the First of opts, 0 when none asks for a first screen.
func FirstPage(opts []PollOption) int {
	n := 0
	for _, o := range opts {
		n = max(n, o.First)
	}
	return n
}

// Horizon is the latest FinishedAfter of opts, zero when none sets one.
func Horizon(opts []PollOption) time.Time {
	var h time.Time
	for _, o := range opts {
		if o.FinishedAfter.After(h) {
			h = o.FinishedAfter
		}
	}
	return h
}

// Uncounted reports whether any of opts lets the count be skipped.
func Uncounted(opts []PollOption) bool {
	for _, o := range opts {
		if o.Uncounted {
			return true
		}
	}
	return false
}

// DefaultArchiveLimit bounds an ArchiveQuery that names no Limit.
const DefaultArchiveLimit = 1000

// ArchiveQuery asks for the final tasks a windowed poll left out.
type ArchiveQuery struct {
	// Before is the horizon: tasks that became final before it.
	Before time.Time
	// State is one final state, or StateUnknown for any of them.
	State model.State
	// Text matches the id or the title, case-insensitively; empty matches all.
	Text string
	// Limit is the most tasks to return, newest first (0: DefaultArchiveLimit).
	Limit int
}

// Check refuses a query no backend can answer, naming what to fix.
func (q ArchiveQuery) Check() error {
	switch {
	case q.Before.IsZero():
		return model.Errorf(model.CodeMisconfigured, "archive", "", "no horizon: give the time before which tasks finished")
	case q.State != model.StateUnknown && !q.State.Final():
		return model.Errorf(model.CodeMisconfigured, "archive", "", "state %s is not final: the archive holds done, failed and canceled tasks", q.State)
	case q.Limit < 0:
		return model.Errorf(model.CodeMisconfigured, "archive", "", "limit %d: want a positive number, or 0 for %d", q.Limit, DefaultArchiveLimit)
	}
	return nil
}

// Matches is the query as a predicate on one task; backends that filter in
// SQL mirror it.
func (q ArchiveQuery) Matches(t *model.Task) bool {
	if !model.Archived(t, q.Before) || (q.State != model.StateUnknown && t.State != q.State) {
		return false
	}
	text := strings.ToLower(q.Text)
	return text == "" || strings.Contains(strings.ToLower(t.ID), text) || strings.Contains(strings.ToLower(t.Title), text)
}

// ArchiveOf answers q from a full list of tasks, for backends that read
// everything anyway (a lock directory, a Notion database, memory).
func ArchiveOf(tasks []*model.Task, q ArchiveQuery) ([]*model.Task, error) {
	if err := q.Check(); err != nil {
		return nil, err
	}
	var out []*model.Task
	for _, t := range tasks {
		if q.Matches(t) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b *model.Task) int {
		if c := b.EditedAt.Time().Compare(a.EditedAt.Time()); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out[:min(len(out), q.limit())], nil
}

func (q ArchiveQuery) limit() int {
	if q.Limit == 0 {
		return DefaultArchiveLimit
	}
	return q.Limit
}

// Window applies opts to a full list of tasks: the live ones and the count
// of those left out, for backends that read everything anyway.
func Window(tasks []*model.Task, opts []PollOption) ([]*model.Task, int) {
	h := Horizon(opts)
	if h.IsZero() {
		return tasks, 0
	}
	live := tasks[:0:0]
	for _, t := range tasks {
		if !model.Archived(t, h) {
			live = append(live, t)
		}
	}
	return live, len(tasks) - len(live)
}
