package notion

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jomei/notionapi"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// Live work and history in Notion's own terms. model.Archived calls a task
// history when it is final and last edited before the horizon; the filters
// below say the same to Notion with its compound filter — "and"/"or" over
// status conditions and a last_edited_time timestamp condition, one level
// of nesting inside the two Notion allows
// (https://developers.notion.com/reference/filter-data-source-entries).
//
// Notion rounds last_edited_time down to the minute and compares a date
// with a time to the millisecond, so the horizon is sent rounded to the
// minute in the direction that can only let more pages through; the
// source then trims with the same rule as every backend (sources.Window,
// ArchiveQuery.Matches).

// finalStatuses lists, sorted, the raw statuses that read as st, or as
// any final state when st is StateUnknown: the options of the status
// property and, for a select, the vocabulary's words too, since writing a
// word creates its option. A status property holds only its options.
func (m *Mapping) finalStatuses(st model.State) []string {
	var out []string
	add := func(raw string) {
		s := m.stateOf(raw)
		shared := st == model.StateFailed && m.FailedMark != "" && strings.EqualFold(raw, m.States[st]) // told apart by reason
		if raw != "" && s.Final() && (st == model.StateUnknown || s == st || shared) && !slices.Contains(out, raw) {
			out = append(out, raw)
		}
	}
	for _, o := range m.statusOptions {
		add(o)
	}
	if m.kinds[m.Status] != notionapi.PropertyConfigStatus {
		for _, w := range m.States {
			add(w)
		}
		for w := range m.Also {
			add(w)
		}
	}
	slices.Sort(out)
	return out
}

// liveFilter selects what a full poll keeps at a horizon: pages whose
// status is none of the final ones, or empty (Notion does not say whether
// does_not_equal matches an empty value), or that were edited on or after
// from.
func (m *Mapping) liveFilter(final []string, from time.Time) notionapi.Filter {
	return notionapi.OrCompoundFilter{
		m.optionsCondition(m.Status, "does_not_equal", final),
		m.optionCondition(m.Status, notionapi.SelectFilterCondition{IsEmpty: true}),
		edited(notionapi.DateFilterCondition{OnOrAfter: notionDate(from)}),
	}
}

// historyFilter selects the pages with one of the final statuses last
// edited before the time, narrowed further by more.
func (m *Mapping) historyFilter(final []string, before time.Time, more ...notionapi.Filter) notionapi.Filter {
	oneOf := m.optionsCondition(m.Status, "equals", final)
	return append(notionapi.AndCompoundFilter{oneOf, edited(notionapi.DateFilterCondition{Before: notionDate(before)})}, more...)
}

// titleFilter narrows an archive query's text to the title on Notion's
// side when the text cannot be part of a page id (ArchiveQuery.Text also
// matches ids, which Notion cannot filter on) and is ASCII, where
// Notion's "contains" — case-insensitive, as the database filter in
// Notion's UI it mimics — and strings.ToLower agree.
func (m *Mapping) titleFilter(text string) []notionapi.Filter {
	if text == "" || !titleOnly(text) {
		return nil
	}
	return []notionapi.Filter{&notionapi.PropertyFilter{Property: m.Title, RichText: &notionapi.TextFilterCondition{Contains: text}}}
}

func titleOnly(text string) bool {
	hexOnly := true
	for _, r := range text {
		if r >= utf8.RuneSelf {
			return false
		}
		hexOnly = hexOnly && strings.ContainsRune("0123456789abcdefABCDEF-", r)
	}
	return !hexOnly
}

func edited(c notionapi.DateFilterCondition) notionapi.Filter {
	return &notionapi.TimestampFilter{Timestamp: notionapi.TimestampLastEdited, LastEditedTime: &c}
}

func notionDate(t time.Time) *notionapi.Date {
	d := notionapi.Date(t.UTC())
	return &d
}

func floorMinute(t time.Time) time.Time { return t.Truncate(time.Minute) }

func ceilMinute(t time.Time) time.Time {
	if f := t.Truncate(time.Minute); f.Before(t) {
		return f.Add(time.Minute)
	}
	return t
}

// fullPoll reads the whole queue, or with a horizon only the pages the
// window keeps. The pages it leaves out are history: gone from a Full
// delta, which the hub already reads as aged out (model.Archived at its
// horizon). Notion has no count endpoint, so when the caller wants
// Delta.Archived a second query reads the history to count it, asking
// for the title alone and decoding nothing but its pages' trash flags.
func (s *Source) fullPoll(ctx context.Context, now time.Time, server *atomic.Int64, opt []sources.PollOption) (sources.Delta, error) {
	const op = "poll"
	horizon := sources.Horizon(opt)
	final := s.m.finalStatuses(model.StateUnknown)
	var filter notionapi.Filter
	if !horizon.IsZero() && len(final) > 0 {
		filter = s.m.liveFilter(final, floorMinute(horizon))
	}
	tasks, err := s.query(ctx, op, filter)
	if err != nil {
		return sources.Delta{}, err
	}
	// The watermark is Notion's time of the live query, not of the
	// count, which may take a while longer.
	next := pollState{Full: now.Unix()}
	next.remember(tasks, nil, s.overlap, server.Load())
	live, archived := sources.Window(tasks, opt)
	if filter != nil && !sources.Uncounted(opt) {
		n, err := s.api.countPages(ctx, s.ds, s.m.ids[s.m.Title], s.m.historyFilter(final, floorMinute(horizon)))
		if err != nil {
			return sources.Delta{}, s.fail(op, "", err)
		}
		archived += n
	}
	return sources.Delta{Full: true, Tasks: live, Archived: archived, Cursor: next.cursor()}, nil
}

// newestFirst is the archive's order on Notion's side
// (https://developers.notion.com/reference/sort-data-source-entries).
var newestFirst = []notionapi.SortObject{{Timestamp: notionapi.TimestampLastEdited, Direction: notionapi.SortOrderDESC}}

// Archive asks Notion for the final pages last edited before the horizon,
// in the state and with the title text the query names, newest first, and
// stops once it holds the query's limit and every page edited in the same
// minute as the last of them (ArchiveOf breaks those ties by id).
func (s *Source) Archive(ctx context.Context, q sources.ArchiveQuery) ([]*model.Task, error) {
	if err := q.Check(); err != nil {
		return nil, err
	}
	final := s.m.finalStatuses(q.State)
	if len(final) == 0 {
		return nil, nil // no status reads as that state
	}
	limit := cmp.Or(q.Limit, sources.DefaultArchiveLimit)
	var found []*model.Task
	var edge time.Time
	query := pageQuery{Filter: s.m.historyFilter(final, ceilMinute(q.Before), s.m.titleFilter(q.Text)...), Sorts: newestFirst}
	err := s.api.queryPages(ctx, s.ds, query, func(p *page) bool {
		if p.trashed {
			return true
		}
		t := decodeTask(&s.m, s.name, &p.Page)
		if len(found) >= limit && t.EditedAt.Time().Before(edge) {
			return false
		}
		if q.Matches(t) {
			if found = append(found, t); len(found) == limit {
				edge = t.EditedAt.Time()
			}
		}
		return true
	})
	if err != nil {
		return nil, s.fail("archive", "", err)
	}
	return sources.ArchiveOf(found, q)
}
