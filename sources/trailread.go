package sources

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

// TrailEntry is one event of a source's shared trail, with the task it
// is about.
type TrailEntry struct {
	Task string
	model.Event
}

// TrailReader is implemented by sources whose shared trail can be read
// across tasks: every event claimdeck kept from since on, oldest first, at
// most limit of them (limit <= 0: the source's own cap). `stats` and the
// metrics count the team's overrides from it, so a second HOME sees the
// first's. A source that cannot read it at a bearable cost answers
// ErrNoTrailRead (wrapped, saying why); its overrides are shown as not
// available, never as zero.
type TrailReader interface {
	TrailSince(ctx context.Context, since time.Time, limit int) ([]TrailEntry, error)
}

// ErrNoTrailRead is what a source answers when its shared trail cannot be
// read across tasks.
var ErrNoTrailRead = errors.New("the shared trail cannot be read across tasks")

// TrailLimit is how many events one TrailSince answers at most when the
// caller names no limit.
const TrailLimit = 10000

// humanDetailPrefix begins every trail detail HumanDetail writes: the
// mark of a person's override on another's task, where the same word
// (cancel, handoff) is also a holder's own step.
const humanDetailPrefix = "was "

// OverrideOf says whether a trail event is a human override — takeover,
// force-release (a reap or rescue too), handoff or cancel of someone's
// claim, a reviewer's approve or rework, an unblock — or any attempt the
// desk refused, and under which action it is counted. A holder's own
// cancel or hand-off (an agent ending its claim) is not one: the desk's
// overrides carry HumanDetail's "was …".
func OverrideOf(e model.Event) (model.Action, bool) {
	a := model.Action(strings.TrimSpace(e.Action))
	if !e.Applied() {
		return a, a.Known()
	}
	switch a {
	case model.ActionTakeover, model.ActionForceRelease, model.ActionReap,
		model.ActionApprove, model.ActionRework, model.ActionUnblock:
		return a, true
	case model.ActionCancel, model.ActionHandoff:
		return a, strings.HasPrefix(e.Detail, humanDetailPrefix)
	}
	return a, false
}

// OverrideRecords turns the trail entries of source into the override
// records stats and the metrics count (OverrideOf), leaving the rest out.
func OverrideRecords(source string, entries []TrailEntry) []model.AuditRecord {
	var out []model.AuditRecord
	for _, e := range entries {
		a, ok := OverrideOf(e.Event)
		if !ok {
			continue
		}
		res := e.Result
		if e.Applied() {
			res = model.ResultApplied
		}
		out = append(out, model.AuditRecord{At: e.At, Actor: e.Actor, Door: e.Door, Source: source, Task: e.Task,
			Action: a, Reason: e.Reason, Result: res})
	}
	return out
}

// OverrideFeed reads the overrides of sources' shared trails from Start
// on, each call reading only what is new since the last (less an overlap
// for late commits and Notion's minute), every override kept once. It is
// what `stats` and the metrics count, so every HOME shows the team's
// numbers. Safe for concurrent use.
type OverrideFeed struct {
	Sources []Source
	Start   time.Time
	// Every is how often the trails are read at most; a call sooner
	// answers the last read (a scrape every few seconds costs a Notion
	// database a read per page edited, not per scrape). Zero: every call.
	Every time.Duration
	Now   func() time.Time
	// Baseline leaves out what the trails hold at the first read: a
	// counter from a process's start counts what happened since, whatever
	// a backend's clock or rounding (Notion's minute) says of its time.
	// The first read should then be made at the start (Read, once).
	Baseline bool

	mu      sync.Mutex
	read    time.Time            // when the trails were last read
	from    map[string]time.Time // source → the newest event read
	seen    map[string]bool
	recs    []model.AuditRecord
	missing map[string]string
}

// trailOverlap is how far back each read reaches before the newest event
// the last one saw: a transaction's time is its start, Notion's is
// rounded to the minute.
const trailOverlap = 2 * time.Minute

// Read is the overrides from Start on, and the sources whose trail could
// not be read, with why ("not available: …"): no TrailReader, or a read
// that failed (the last good read's overrides are kept).
func (f *OverrideFeed) Read(ctx context.Context) ([]model.AuditRecord, map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	if f.Now != nil {
		now = f.Now()
	}
	first := f.from == nil
	if first {
		f.from, f.seen = map[string]time.Time{}, map[string]bool{}
	} else if f.Every > 0 && now.Sub(f.read) < f.Every {
		return slices.Clone(f.recs), maps.Clone(f.missing)
	}
	f.read, f.missing = now, map[string]string{}
	for _, src := range f.Sources {
		name := src.Name()
		tr, ok := src.(TrailReader)
		if !ok {
			f.missing[name] = "not available: " + ErrNoTrailRead.Error() + " on this kind of source"
			continue
		}
		since := f.Start
		if last, ok := f.from[name]; ok && last.After(since) {
			since = last
		}
		since = since.Add(-trailOverlap) // what a late commit or a rounded time put before it
		entries, err := tr.TrailSince(ctx, since, 0)
		if err != nil {
			f.missing[name] = "not available: " + model.Redact(err.Error())
			continue
		}
		for _, e := range entries {
			if e.At.After(f.from[name]) {
				f.from[name] = e.At
			}
		}
		for _, r := range OverrideRecords(name, entries) {
			k := fmt.Sprintf("%s\x00%s\x00%d\x00%s\x00%s\x00%s\x00%s", r.Source, r.Task, r.At.UnixNano(), r.Actor, r.Action, r.Result, r.Reason)
			if f.seen[k] || !f.Baseline && r.At.Before(f.Start) {
				continue
			}
			f.seen[k] = true
			if !(first && f.Baseline) {
				f.recs = append(f.recs, r)
			}
		}
	}
	return slices.Clone(f.recs), maps.Clone(f.missing)
}

// SortTrail orders entries oldest first (ties by task) and keeps the
// first limit of them (TrailLimit when limit <= 0): every TrailReader's
// answer has this order.
func SortTrail(entries []TrailEntry, limit int) []TrailEntry {
	if limit <= 0 {
		limit = TrailLimit
	}
	slices.SortStableFunc(entries, func(a, b TrailEntry) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		return strings.Compare(a.Task, b.Task)
	})
	if len(entries) > limit {
		entries = entries[:limit]
	}
	return entries
}

// NoTrailRead is the error of a source that cannot read its trail across
// tasks, saying why.
func NoTrailRead(source, why string) error {
	return model.Errorf(model.CodeMisconfigured, "trail", "", "%s: %w: %s", source, ErrNoTrailRead, why)
}
