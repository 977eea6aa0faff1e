package notion

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"time"

	"github.com/jomei/notionapi"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// pollState is what a Cursor carries between polls.
type pollState struct {
	// Mark is the newest last_edited_time seen (Notion's clock, unix s).
	Mark int64 `json:"w"`
	// Full is when the last full load ran (our clock, unix s).
	Full int64 `json:"f"`
	// Seen holds the version of each page edited inside the overlap window,
	// so that re-fetched pages that did not change are not reported again.
	Seen map[string]seen `json:"s,omitempty"`
}

type seen struct {
	Version string `json:"v"`
	Edited  int64  `json:"t"`
}

func decodeCursor(c sources.Cursor) (pollState, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(string(c))
	if err != nil {
		return pollState{}, false
	}
	var st pollState
	if json.Unmarshal(raw, &st) != nil || st.Mark <= 0 {
		return pollState{}, false
	}
	return st, true
}

func (st pollState) cursor() sources.Cursor {
	b, _ := json.Marshal(st)
	return sources.Cursor(base64.RawURLEncoding.EncodeToString(b))
}

// Poll loads the queue on an empty or unreadable cursor and every
// ReconcileEvery (Delta.Full: pages archived or trashed since are gone) —
// with a horizon, only the pages the window keeps (fullPoll); otherwise it
// asks only for pages edited since the newest edit it saw, less the
// overlap, and drops those it already reported unchanged. An idle poll is
// one request whatever the size of the database.
func (s *Source) Poll(ctx context.Context, since sources.Cursor, opt ...sources.PollOption) (sources.Delta, error) {
	ctx, done := s.begin(ctx)
	defer done()
	const op = "poll"
	now := time.Now()
	st, ok := decodeCursor(since)
	ctx, server := withServerTime(ctx)
	if !ok || now.Sub(time.Unix(st.Full, 0)) >= s.every {
		return s.fullPoll(ctx, now, server, opt)
	}
	from := notionapi.Date(time.Unix(st.Mark, 0).Add(-s.overlap))
	tasks, err := s.query(ctx, op, &notionapi.TimestampFilter{
		Timestamp:      notionapi.TimestampLastEdited,
		LastEditedTime: &notionapi.DateFilterCondition{OnOrAfter: &from},
	})
	if err != nil {
		return sources.Delta{}, err
	}
	var changed []*model.Task
	for _, t := range tasks {
		if st.Seen[t.ID].Version != t.Version {
			changed = append(changed, t)
		}
	}
	next := pollState{Mark: st.Mark, Full: st.Full}
	next.remember(tasks, st.Seen, s.overlap, server.Load())
	return sources.Delta{Tasks: changed, Cursor: next.cursor()}, nil
}

// remember moves the watermark to the newest edit or to Notion's time of
// the query, whichever is later, and keeps the versions of the pages still
// inside the overlap window. Edits after the query's time carry an edit time
// of at least that time less a minute (Notion's rounding), which the
// overlap covers.
func (st *pollState) remember(tasks []*model.Task, old map[string]seen, overlap time.Duration, serverNow int64) {
	st.Mark = max(st.Mark, serverNow)
	for _, t := range tasks {
		st.Mark = max(st.Mark, t.EditedAt.Time().Unix())
	}
	if st.Mark == 0 {
		// Neither a Date header nor a page: start from a minute ago on our
		// clock, which the overlap then widens.
		st.Mark = time.Now().Add(-time.Minute).Unix()
	}
	floor := st.Mark - int64(overlap/time.Second)
	st.Seen = map[string]seen{}
	for id, e := range old {
		if e.Edited >= floor {
			st.Seen[id] = e
		}
	}
	for _, t := range tasks {
		if e := t.EditedAt.Time().Unix(); e >= floor {
			st.Seen[t.ID] = seen{Version: t.Version, Edited: e}
		}
	}
}
