package notion

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jomei/notionapi"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// appendHistory adds an event to the hand-off history when the schema
// keeps one (seed 001).
func (s *Source) appendHistory(p patch, t *model.Task, e model.Event) {
	if s.m.History != "" {
		p.text(s.m.History, encodeHistory(append(slices.Clone(t.More().History), e)))
	}
}

// humanAction is one operator override: read fresh, compare the version the
// human saw (CONFLICT, with the task as it is now), write, and leave the
// audit trail — the hand-off history and a comment on the page.
func (s *Source) humanAction(ctx context.Context, action model.Action, id string, h sources.Human, token string,
	build func(t *model.Task, p patch, now time.Time) (detail string, err error)) (*model.Task, error) {
	ctx, done := s.begin(ctx)
	defer done()
	op := string(action)
	id, err := s.resolve(ctx, op, id)
	if err != nil {
		return nil, err
	}
	var t *model.Task
	if token != "" {
		t, err = s.holder(ctx, op, id, token)
	} else {
		t, err = s.page(ctx, op, id)
	}
	if err != nil {
		return nil, err
	}
	if token == "" {
		err = sources.CheckHuman(action, t, h)
	} else if t.State.Final() {
		e := model.Errorf(model.CodeConflict, op, id, "the task is already %s", t.State)
		e.Current = t
		err = e
	}
	if err != nil {
		return nil, err
	}
	now := s.now()
	p := patch{}
	detail, err := build(t, p, now)
	if err != nil {
		return nil, err
	}
	if token == "" {
		detail = strings.TrimSuffix(sources.HumanDetail(h, t)+"; "+detail, "; ")
	}
	s.appendHistory(p, t, model.Event{At: now, Actor: h.Actor, Door: h.Door, Action: op, Reason: h.Reason, Detail: detail})
	code := model.CodeConflict
	if token != "" {
		code = model.CodeLostLock
	}
	got, err := s.settled(ctx, op, t, p, code)
	if err != nil {
		return nil, err
	}
	return s.audited(ctx, op, got, withDoor(auditNote(action, h.Actor, h.Reason, detail, t), h.Door))
}

// withDoor adds to a note the door the request came in through.
func withDoor(note string, door model.Door) string {
	if door == "" {
		return note
	}
	return note + noteSep + doorPart + oneLine(string(door))
}

// The parts of a note naming the door and, for a refused attempt, the
// code it was refused with.
const (
	doorPart   = "door: "
	resultPart = "result: "
)

// Record keeps claimdeck's own entry — a refused attempt — as a signed
// note on the page, the trail every process reads (sources.Trail).
func (s *Source) Record(ctx context.Context, id string, e model.Event) error {
	const op = "record"
	if err := sources.CheckEvent(op, id, e); err != nil {
		return err
	}
	ctx, done := s.begin(ctx)
	defer done()
	id, t, err := s.resolvedPage(ctx, op, id)
	if err != nil {
		return err
	}
	note := withDoor(auditNote(model.Action(e.Action), e.Actor, e.Reason, e.Detail, t), e.Door)
	if e.Result != "" {
		note += noteSep + resultPart + oneLine(e.Result)
	}
	if err := s.postNote(ctx, id, s.sign(id, note)); err != nil {
		return s.fail(op, id, err)
	}
	return nil
}

// audited posts the audit note of op, which was applied and left got,
// signed as claimdeck's. An integration that may not post comments is
// noted in got's history; any other failure is an API_ERROR carrying got.
func (s *Source) audited(ctx context.Context, op string, got *model.Task, note string) (*model.Task, error) {
	if err := s.postNote(ctx, got.ID, s.sign(got.ID, note)); forbidden(err) {
		got.EditMore().History = append(got.More().History, noComments("post", s.fail(op, got.ID, err)))
	} else if err != nil {
		e := model.Errorf(model.CodeAPIError, op, got.ID, "%s was applied, but the audit comment could not be posted: %v", op, s.fail(op, got.ID, err))
		e.Current = got
		return got, e
	}
	return got, nil
}

// The audit comment reads "claimdeck · takeover · by alice · reason: … ·
// sig …" (sign); comments reads it back as history.
const (
	notePrefix = "claimdeck"
	noteSep    = " · "
	noteAction = model.EventComment
)

func auditNote(action model.Action, actor, reason, detail string, before *model.Task) string {
	parts := []string{notePrefix, string(action), "by " + oneLine(actor)}
	if reason != "" {
		parts = append(parts, "reason: "+oneLine(reason))
	}
	if detail != "" {
		parts = append(parts, oneLine(detail))
	}
	was := before.RawStatus
	if before.Held() {
		was += " held by " + before.Claim().Name
	}
	return strings.Join(append(parts, "was: "+oneLine(was)), noteSep)
}

func oneLine(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\n", " "), noteSep, " - ")
}

// parseNote reads the body of a note of claimdeck's (auditNote's text,
// signature off) as its event, and the page version a review note names.
func parseNote(text string, at time.Time) (model.Event, string, bool) {
	parts := strings.Split(text, noteSep)
	if len(parts) < 3 || parts[0] != notePrefix {
		return model.Event{}, "", false
	}
	actor, ok := strings.CutPrefix(parts[2], "by ")
	if !ok {
		return model.Event{}, "", false
	}
	e := model.Event{At: at, Action: parts[1], Actor: actor}
	var rest []string
	version := ""
	for _, p := range parts[3:] {
		if r, ok := strings.CutPrefix(p, "reason: "); ok && e.Reason == "" {
			e.Reason = r
		} else if d, ok := strings.CutPrefix(p, doorPart); ok && e.Door == "" {
			e.Door = model.Door(d)
		} else if r, ok := strings.CutPrefix(p, resultPart); ok && e.Result == "" {
			e.Result = r
		} else if v, ok := strings.CutPrefix(p, versionPart); ok && version == "" {
			version = v
		} else {
			rest = append(rest, p)
		}
	}
	e.Detail = strings.Join(rest, noteSep)
	return e, version, true
}

// comments reads the comments on a page: claimdeck's signed notes as
// their events, every other comment as a comment.
func (s *Source) comments(ctx context.Context, id string) ([]note, error) {
	var out []note
	pg := &notionapi.Pagination{PageSize: 100}
	for {
		res, err := s.api.comments(ctx, id, pg.StartCursor.String())
		if forbidden(err) {
			return nil, err
		}
		if err != nil {
			return nil, s.fail("get", id, err)
		}
		for _, c := range res.Results {
			if n, ok := readNote(s.key, id, values{"c": &notionapi.RichTextProperty{RichText: c.RichText}}.text("c"), c.CreatedTime); ok {
				out = append(out, n)
			}
		}
		if !res.HasMore || res.NextCursor == "" {
			return out, nil
		}
		pg.StartCursor = notionapi.Cursor(res.NextCursor)
	}
}

// Takeover claims the task as HUMAN:<actor> with a new token and no expiry.
func (s *Source) Takeover(ctx context.Context, id string, h sources.Human) (*model.Task, error) {
	return s.humanAction(ctx, model.ActionTakeover, id, h, "", func(t *model.Task, p patch, now time.Time) (string, error) {
		p.option(s.m.Status, s.m.States[model.StateClaimed])
		p.lock(&s.m, model.HolderHuman, model.HumanPrefix+h.Actor, "", uuid.NewString(), now, time.Time{})
		p.option(s.m.HandoffStatus, "claimed")
		return "", nil
	})
}

// ForceRelease puts the task back in the queue; the old token dies.
func (s *Source) ForceRelease(ctx context.Context, id string, h sources.Human) (*model.Task, error) {
	return s.humanAction(ctx, model.ActionForceRelease, id, h, "", func(t *model.Task, p patch, now time.Time) (string, error) {
		s.release(p)
		return "", nil
	})
}

func (s *Source) release(p patch) {
	p.option(s.m.Status, s.m.States[model.StateQueued])
	p.lock(&s.m, model.HolderNone, "", "", "", time.Time{}, time.Time{})
	p.option(s.m.HandoffStatus, "available")
}

// Cancel ends the task as canceled with the human's reason.
func (s *Source) Cancel(ctx context.Context, id string, h sources.Human) (*model.Task, error) {
	return s.humanAction(ctx, model.ActionCancel, id, h, "", func(t *model.Task, p patch, now time.Time) (string, error) {
		p.option(s.m.Status, s.m.States[model.StateCanceled])
		p.lock(&s.m, model.HolderNone, "", "", "", time.Time{}, time.Time{})
		p.option(s.m.HandoffStatus, "available")
		p.text(s.m.Reason, h.Reason)
		return "", nil
	})
}

// Handoff releases the task and keeps it for one agent (or ANY): the
// holder field names the target behind a "handoff:" prefix and the lease
// field holds the reservation's end, so seed agents see the task as taken
// until then. With a Handoff Queue database, a record is added there too.
func (s *Source) Handoff(ctx context.Context, id string, h sources.Handoff) (*model.Task, error) {
	if err := h.Check("handoff", id); err != nil {
		return nil, err
	}
	ctx, done := s.begin(ctx)
	defer done()
	const op = "handoff"
	if err := sources.CheckTarget(id, h.To); err != nil {
		return nil, err
	}
	id, err := s.resolve(ctx, op, id) // the Handoff Queue record names the page
	if err != nil {
		return nil, err
	}
	to := strings.TrimSpace(h.To)
	dur := h.For
	if dur <= 0 {
		dur = sources.DefaultReservation
	}
	var title string
	got, err := s.humanAction(ctx, model.ActionHandoff, id, h.Human, h.Token, func(t *model.Task, p patch, now time.Time) (string, error) {
		title = t.Title
		p.option(s.m.Status, s.m.States[model.StateQueued])
		p.lock(&s.m, model.HolderNone, reservedPrefix+to, "", "", now, now.Add(dur))
		p.option(s.m.HandoffStatus, "available")
		detail := "to: " + to
		if h.Priority != "" {
			detail += ", priority: " + h.Priority
		}
		return detail, nil
	})
	if err != nil || s.queue == nil {
		return got, err
	}
	if qerr := s.queue.record(ctx, s, id, title, h); qerr != nil {
		e := model.Errorf(model.CodeAPIError, op, id, "the hand-off was applied, but the Handoff Queue record failed: %v", qerr)
		e.Current = got
		return got, e
	}
	return got, nil
}

// Comment posts a note on the page.
func (s *Source) Comment(ctx context.Context, id string, n sources.Note) error {
	if err := n.Check("comment", id); err != nil {
		return err
	}
	ctx, done := s.begin(ctx)
	defer done()
	const op = "comment"
	if strings.TrimSpace(n.Text) == "" {
		return model.Errorf(model.CodeMisconfigured, op, id, "the comment is empty")
	}
	id, t, err := s.resolvedPage(ctx, op, id)
	if err != nil {
		return err
	}
	if s.m.History != "" {
		// Under seed 001 the trail is handoff_history: the note goes there too.
		p := patch{}
		s.appendHistory(p, t, model.Event{At: s.now(), Actor: n.Author, Action: "comment", Reason: n.Text})
		if _, err := s.update(ctx, op, id, p); err != nil {
			return err
		}
	}
	text := n.Text
	if n.Author != "" {
		text = n.Author + ": " + text
	}
	if err := s.postNote(ctx, id, text); err != nil {
		return s.fail(op, id, err)
	}
	return nil
}

// Update edits the title, priority, class or status under sources.CheckEdit,
// checked against the page as it reads now.
func (s *Source) Update(ctx context.Context, id string, e sources.Edit) (*model.Task, error) {
	if err := e.Check("update", id); err != nil {
		return nil, err
	}
	ctx, done := s.begin(ctx)
	defer done()
	const op = "update"
	id, err := s.resolve(ctx, op, id)
	if err != nil {
		return nil, err
	}
	// Sent once per attempt: after a 409, 429 or 5xx the page is read again
	// and the edit, checked afresh, is sent again only if it did not land.
	for attempt := 1; ; attempt++ {
		t, err := s.page(ctx, op, id)
		if err != nil {
			return nil, err
		}
		if attempt > 1 && sources.EditApplied(t, e) {
			return s.moved(ctx, t, t, e)
		}
		p, err := s.editPatch(op, t, e)
		if err != nil {
			return nil, err
		}
		w, err := s.write(ctx, id, p)
		if err == nil {
			return s.moved(ctx, w, t, e)
		}
		if !ambiguous(ctx, err) || attempt >= claimAttempts {
			return nil, s.fail(op, id, err)
		}
		if err := s.waitAfter(ctx, attempt, err); err != nil {
			return nil, s.fail(op, id, err)
		}
	}
}

// moved leaves a move's audit comment, as a human action's, on got, which
// was before; any other edit is returned as it is.
func (s *Source) moved(ctx context.Context, got, before *model.Task, e sources.Edit) (*model.Task, error) {
	if e.Move == model.MoveNone {
		return got, nil
	}
	return s.audited(ctx, e.Action(), got, withDoor(auditNote(model.Action(e.Action()), e.Actor, e.Reason, "", before), e.Door))
}

// editPatch checks e against t as just read and builds its patch.
func (s *Source) editPatch(op string, t *model.Task, e sources.Edit) (patch, error) {
	id := t.ID
	if err := sources.CheckEdit(t, e, s.now()); err != nil {
		var me *model.Error
		if model.CodeOf(err) != model.CodeMisconfigured && asError(err, &me) {
			me.Current = t
		}
		return nil, err
	}
	p := patch{}
	if e.Title != nil {
		p.title(s.m.Title, *e.Title)
	}
	if e.Priority != nil {
		if s.m.Priority == "" {
			return nil, model.Errorf(model.CodeMisconfigured, op, id, "the database has no priority property")
		}
		p.priority(&s.m, *e.Priority)
	}
	if e.Class != nil {
		if s.m.Class == "" {
			return nil, model.Errorf(model.CodeMisconfigured, op, id, "the database has no class property")
		}
		p.class(&s.m, *e.Class)
	}
	if e.State != model.StateUnknown {
		raw := s.m.States[e.State]
		if raw == "" {
			return nil, model.Errorf(model.CodeMisconfigured, op, id, "the schema has no status for %s", e.State)
		}
		p.option(s.m.Status, raw)
		if e.Reason != "" {
			p.text(s.m.Reason, e.Reason)
		}
	}
	if e.Move != model.MoveNone && s.m.Assignee != "" {
		// As the skill's binary moves a task (NotionCLI.swift's
		// updateForApprove, updateForRework): the lock fields cleared,
		// Done At stamped on approve; the Assignee stays, its audit trail.
		p.lock(&s.m, model.HolderNone, "", "", "", time.Time{}, time.Time{})
		if e.Move == model.MoveApprove {
			p.date(s.m.DoneAt, s.now())
		}
	}
	return p, nil
}

// handoffQueue is seed 001's Handoff Queue database.
type handoffQueue struct {
	db    string // its data source
	title string
	has   map[string]bool
}

// handoffFields are the Handoff Queue properties claimdeck fills; the
// first seven are required.
var handoffFields = []struct {
	name string
	typ  notionapi.PropertyConfigType
}{
	{"from_agent", notionapi.PropertyConfigTypeRichText},
	{"to_agent", notionapi.PropertyConfigTypeRichText},
	{"reason", notionapi.PropertyConfigTypeRichText},
	{"priority", notionapi.PropertyConfigTypeSelect},
	{"taskId", notionapi.PropertyConfigTypeRichText},
	{"status", notionapi.PropertyConfigTypeSelect},
	{"assignedAgent", notionapi.PropertyConfigTypeRichText},
	{"stagedAt", notionapi.PropertyConfigTypeDate},
}

func (s *Source) openQueue(ctx context.Context, id string) (*handoffQueue, error) {
	const op = "open"
	refs, err := s.api.dataSources(ctx, id)
	if err != nil {
		return nil, s.fail(op, "", fmt.Errorf("handoff queue database: %w", err))
	}
	if len(refs) != 1 {
		return nil, model.Errorf(model.CodeMisconfigured, op, "", "handoff queue database %s has %d data sources, want one", id, len(refs))
	}
	db, err := s.api.schema(ctx, refs[0].ID)
	if err != nil {
		return nil, s.fail(op, "", fmt.Errorf("handoff queue data source: %w", err))
	}
	q := &handoffQueue{db: refs[0].ID, has: map[string]bool{}}
	var problems []string
	for name, cfg := range db.Properties {
		if cfg.GetType() == notionapi.PropertyConfigTypeTitle {
			q.title = name
		}
	}
	for i, f := range handoffFields {
		cfg, ok := db.Properties[f.name]
		switch {
		case !ok && i < 6:
			problems = append(problems, fmt.Sprintf("property %q (%s) is missing", f.name, f.typ))
		case ok && cfg.GetType() != f.typ:
			problems = append(problems, fmt.Sprintf("property %q is %s, want %s", f.name, cfg.GetType(), f.typ))
		case ok:
			q.has[f.name] = true
		}
	}
	if len(problems) > 0 {
		return nil, model.Errorf(model.CodeMisconfigured, op, "", "handoff queue database %s does not fit seed 001: %s", id, strings.Join(problems, "; "))
	}
	return q, nil
}

// record adds a pending hand-off for the target.
func (q *handoffQueue) record(ctx context.Context, s *Source, taskID, title string, h sources.Handoff) error {
	priority := h.Priority
	if priority == "" {
		priority = "normal"
	}
	from := h.Actor
	p := patch{}
	p.title(q.title, "Handoff: "+title+" to "+h.To)
	p.text("from_agent", from)
	p.text("to_agent", h.To)
	p.text("reason", h.Reason)
	p.option("priority", priority)
	p.text("taskId", taskID)
	p.option("status", "pending")
	if q.has["assignedAgent"] {
		p.text("assignedAgent", h.To)
	}
	if q.has["stagedAt"] {
		p.date("stagedAt", s.now())
	}
	if _, err := s.api.createPage(ctx, q.db, notionapi.Properties(p)); err != nil {
		return s.fail("handoff", taskID, err)
	}
	return nil
}

// resolvedPage reads the page id names (a key resolved to its page id).
func (s *Source) resolvedPage(ctx context.Context, op, id string) (string, *model.Task, error) {
	id, err := s.resolve(ctx, op, id)
	if err != nil {
		return id, nil, err
	}
	t, err := s.page(ctx, op, id)
	return id, t, err
}

// TrailSince reads claimdeck's signed notes from since on, oldest first
// (sources.TrailReader): one query for the pages edited since (less a
// minute: Notion rounds edit times to it), then one read of each such
// page's comments, every unsigned comment left out. An override edits
// its page, so it is found; a refused attempt only posts a note, which
// Notion does not count as an edit, so one on a page not edited since is
// not read (reading every page's comments would cost a request per page
// at about 3 a second). Its cost is the pages edited since, not the
// database.
func (s *Source) TrailSince(ctx context.Context, since time.Time, limit int) ([]sources.TrailEntry, error) {
	ctx, done := s.begin(ctx)
	defer done()
	const op = "trail"
	from := notionapi.Date(since.Add(-time.Minute))
	tasks, err := s.query(ctx, op, &notionapi.TimestampFilter{
		Timestamp:      notionapi.TimestampLastEdited,
		LastEditedTime: &notionapi.DateFilterCondition{OnOrAfter: &from},
	})
	if err != nil {
		return nil, err
	}
	floor := since.Truncate(time.Minute) // a comment's time is rounded to the minute
	var out []sources.TrailEntry
	for _, t := range tasks {
		notes, err := s.comments(ctx, t.ID)
		if forbidden(err) {
			return nil, sources.NoTrailRead(s.Name(), "the integration may not read comments")
		}
		if err != nil {
			return nil, err
		}
		for _, n := range notes {
			if n.signed && !n.At.Before(floor) {
				out = append(out, sources.TrailEntry{Task: t.ID, Event: n.Event})
			}
		}
	}
	return sources.SortTrail(out, limit), nil
}
