package notion

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/google/uuid"
	"github.com/jomei/notionapi"

	"github.com/claimdeck/claimdeck/model"
)

// reservedPrefix marks a holder name that is a hand-off, not a claim: the
// task is queued and kept for the named agent until the lease field's time.
const reservedPrefix = "handoff:"

// tokenSep separates the lock token from the holder name in databases
// without a lock-token property (seeds 000 and 001): "SANDMAN#3f9c…".
const tokenSep = "#"

// values reads typed values out of a page's properties. A missing, null or
// differently typed property reads as the zero value: a user's database may
// hold anything, and a task is still shown.
type values notionapi.Properties

func (v values) text(name string) string {
	if name == "" {
		return ""
	}
	var parts []notionapi.RichText
	switch p := v[name].(type) {
	case *notionapi.RichTextProperty:
		parts = p.RichText
	case *notionapi.TitleProperty:
		parts = p.Title
	default:
		return ""
	}
	var b strings.Builder
	for _, r := range parts {
		switch {
		case r.PlainText != "":
			b.WriteString(r.PlainText)
		case r.Text != nil:
			b.WriteString(r.Text.Content)
		}
	}
	return b.String()
}

func (v values) option(name string) string {
	switch p := v[name].(type) {
	case *notionapi.SelectProperty:
		return p.Select.Name
	case *notionapi.StatusProperty:
		return p.Status.Name
	}
	return ""
}

func (v values) number(name string) (float64, bool) {
	var f float64
	switch p := v[name].(type) {
	case *notionapi.NumberProperty:
		f = p.Number
	case *notionapi.RollupProperty:
		f = p.Rollup.Number
	case *notionapi.FormulaProperty:
		f = p.Formula.Number
	default:
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

func (v values) date(name string) time.Time {
	if p, ok := v[name].(*notionapi.DateProperty); ok && p.Date != nil && p.Date.Start != nil {
		return time.Time(*p.Date.Start)
	}
	return time.Time{}
}

func (v values) key(name string) string {
	if p, ok := v[name].(*notionapi.UniqueIDProperty); ok && p.UniqueID.Number > 0 {
		return p.UniqueID.String()
	}
	return ""
}

// decodeTask turns a page into the normalized task. It never fails: what
// it cannot read becomes a zero value or a Problem.
func decodeTask(m *Mapping, source string, p *notionapi.Page) *model.Task {
	v := values(p.Properties)
	t := &model.Task{
		Source: source, ID: string(p.ID), Key: v.key(m.Key),
		Title: v.text(m.Title), Description: v.text(m.Description),
		RawStatus: v.option(m.Status),
		CreatedAt: model.StampOf(p.CreatedTime), EditedAt: model.StampOf(p.LastEditedTime),
	}
	t.SetMore(model.More{Reason: v.text(m.Reason), Unblock: model.UnblockOf(v.text(m.UnblockAction), v.date(m.NextCheckAt)),
		Artifacts: v.text(m.Artifacts), Parent: v.relation(m.ParentPage)})
	t.State = m.stateOf(t.RawStatus)
	if m.ReviewInArtifacts && t.State == model.StateReview && t.More().Artifacts != "" {
		t.EditMore().Reason = t.More().Artifacts // the review's summary (Finish)
	}
	if reason, ok := strings.CutPrefix(t.More().Reason, m.FailedMark); ok && m.FailedMark != "" && t.State == m.stateOf(m.States[model.StateFailed]) {
		t.State, t.EditMore().Reason = model.StateFailed, reason
	}
	if t.State == model.StateUnknown {
		if t.RawStatus == "" {
			t.EditMore().Problem = "the status is empty"
		} else {
			t.EditMore().Problem = fmt.Sprintf("status %q is outside the schema's vocabulary", t.RawStatus)
		}
	}
	t.Class = m.classOf(v.option(m.Class))
	if f, ok := v.number(m.ClassRank); ok && f >= float64(model.ClassExpedite) && f <= float64(model.ClassIntangible) {
		t.Class = model.Class(f) // the skill: "If present, used instead of deriving from Class select"
	}
	if f, ok := v.number(m.Priority); ok {
		t.Priority = clampInt(f)
	} else if n, err := model.ParsePriority(v.option(m.Priority)); err == nil {
		t.Priority = n
	}
	if f, ok := v.number(m.Subtasks); ok {
		done, _ := v.number(m.SubtasksDone)
		t.OpenSubtasks = int32(max(0, clampInt(f)-clampInt(done)))
	}
	claim, reservation := decodeClaim(m, v)
	t.SetClaim(claim)
	t.SetReservation(reservation)
	if h := decodeHistory(v.text(m.History)); h != nil {
		t.EditMore().History = h
	}
	decodeEscalation(m, v, t, p.LastEditedTime)
	t.Version = version(p, t)
	return t
}

// decodeEscalation reads seed 001's handoff_status: "stale" and
// "escalated" are what the stale-detection cron (or claimdeck sweep) wrote,
// and a stale claim is "expired, available for takeover" whatever its
// claim time says — its lease ended when it was marked, at the latest.
func decodeEscalation(m *Mapping, v values, t *model.Task, edited time.Time) {
	if m.HandoffStatus == "" || t.Claim().Holder != model.HolderAgent {
		return
	}
	switch v.option(m.HandoffStatus) {
	case "stale":
		t.Escalated = model.LevelStale
	case "escalated":
		t.Escalated = model.LevelEscalated
	default:
		return
	}
	if t.Escalated == model.LevelStale && t.Priority >= model.PriorityHigh && m.PriorityOptions != nil {
		t.Escalated = model.LevelUrgent // seed 001: at 30 min, escalated to urgent priority
	}
	if !edited.IsZero() && (t.Claim().Expires.IsZero() || t.Claim().Expires.Time().After(edited)) {
		t.EditClaim().Expires = model.StampOf(edited)
	}
}

func clampInt(f float64) int {
	switch {
	case f > math.MaxInt32:
		return math.MaxInt32
	case f < math.MinInt32:
		return math.MinInt32
	}
	return int(f)
}

// relation is the first page a relation property names.
func (v values) relation(name string) string {
	if p, ok := v[name].(*notionapi.RelationProperty); ok && len(p.Relation) > 0 {
		return string(p.Relation[0].ID) // dashed, as page ids come
	}
	return ""
}

// runSep joins holder and run where they share one property.
const runSep = " · "

// assigneeName is the name of the first person of a people property, or
// their user id when Notion gives no name: from Notion-Version 2026-12-01
// a person's name may be null
// (https://developers.notion.com/guides/get-started/upgrade-guide-2026-12-01,
// "Person names"), and the holder is still someone to show.
func (v values) assigneeName(name string) string {
	if p, ok := v[name].(*notionapi.PeopleProperty); ok && len(p.People) > 0 {
		return cmp.Or(strings.TrimSpace(p.People[0].Name), string(p.People[0].ID))
	}
	return ""
}

// decodeClaim reads the lock fields. The holder's kind comes from the
// Claimed By select when the schema has one, else from the name.
func decodeClaim(m *Mapping, v values) (model.Claim, *model.Reservation) {
	if m.Assignee != "" && m.Run == "" {
		return decodeAssigned(m, v)
	}
	name := v.text(m.Holder)
	var c model.Claim
	c.RunID = v.text(m.Run)
	if m.Token != "" {
		c.Token = v.text(m.Token)
	} else if i := strings.LastIndex(name, tokenSep); i >= 0 {
		name, c.Token = name[:i], name[i+len(tokenSep):]
	}
	c.ClaimedAt = model.StampOf(v.date(m.ClaimedAt))
	if c.ClaimedAt.IsZero() {
		c.ClaimedAt = model.StampOf(v.date(m.StartedAt))
	} else {
		c.HeartbeatAt = c.ClaimedAt
	}
	var recordedLease time.Duration // a lease the timeout made up says nothing of the holder
	if m.Expires != "" {
		c.Expires = model.StampOf(v.date(m.Expires))
		recordedLease = leaseOf(c)
	} else if !c.ClaimedAt.IsZero() {
		timeout := m.DefaultTimeout
		if f, ok := v.number(m.Timeout); ok && f > 0 && f < 1e7 {
			timeout = time.Duration(f * float64(time.Minute))
		}
		c.Expires = model.StampOf(c.ClaimedAt.Time().Add(timeout))
	}
	if target, ok := strings.CutPrefix(name, reservedPrefix); ok {
		return model.Claim{}, &model.Reservation{For: target, Until: c.Expires.Time()}
	}
	c.Name = name
	switch kind := strings.ToUpper(v.option(m.ClaimedBy)); {
	case m.ClaimedBy != "" && kind == "HUMAN":
		c.Holder = model.HolderHuman
	case m.ClaimedBy != "" && kind == "AGENT":
		c.Holder = model.HolderAgent
	case m.ClaimedBy != "":
	case model.PersonHeld("", name, c.RunID, recordedLease):
		c.Holder = model.HolderHuman
	case name != "":
		c.Holder = model.HolderAgent
	}
	if !c.Held() {
		return model.Claim{}, nil
	}
	return c, nil
}

// decodeAssigned reads the lock of today's skill: held while Lock Token
// is set. The run property holds HUMAN:<actor> for a person's claim,
// "name · run" for claimdeck's agents, and the run id alone for the
// skill's agents, whose name is the Assignee's.
// A hand-off holds a lock token too, so the skill's agents, which know no
// reservations, leave the task alone until it ends.
func decodeAssigned(m *Mapping, v values) (model.Claim, *model.Reservation) {
	c := model.Claim{Token: v.text(m.Token)}
	raw := v.text(m.Holder)
	if target, ok := strings.CutPrefix(raw, reservedPrefix); ok {
		return model.Claim{}, &model.Reservation{For: target, Until: v.date(m.Expires)}
	}
	if c.Token == "" {
		return model.Claim{}, nil
	}
	c.Name, c.RunID = raw, ""
	if i := strings.LastIndex(raw, runSep); i >= 0 {
		c.Name, c.RunID = raw[:i], raw[i+len(runSep):]
	} else if who := v.assigneeName(m.Assignee); who != "" && !strings.HasPrefix(raw, model.HumanPrefix) {
		c.Name, c.RunID = who, raw
	}
	c.ClaimedAt, c.Expires = model.StampOf(v.date(m.StartedAt)), model.StampOf(v.date(m.Expires))
	c.Holder = model.HolderAgent
	if model.PersonHeld("", c.Name, c.RunID, leaseOf(c)) {
		// A person's lease runs a century only to keep the skill's
		// re-claim away; a human claim has no expiry. An agent that named
		// itself HUMAN:… has a run and a lease: it stays the agent it is.
		c.Holder, c.Expires = model.HolderHuman, 0
	}
	return c, nil
}

// leaseOf is the lease a claim was written with, zero when its start or
// end is not recorded.
func leaseOf(c model.Claim) time.Duration {
	if c.ClaimedAt.IsZero() || c.Expires.IsZero() {
		return 0
	}
	return c.Expires.Time().Sub(c.ClaimedAt.Time())
}

// historyEntry is one element of seed 001's handoff_history JSON array:
// {node, action, at}, with claimdeck's reason and detail beside them.
type historyEntry struct {
	Node   string `json:"node"`
	Action string `json:"action"`
	At     string `json:"at"`
	Reason string `json:"reason,omitempty"`
	Detail string `json:"detail,omitempty"`
	// Door is where claimdeck took the step in (an agent door, a person's);
	// the seed's own entries have none.
	Door string `json:"door,omitempty"`
}

// decodeHistory reads a hand-off history. Anything that is not a JSON
// array of objects reads as no history.
func decodeHistory(raw string) []model.Event {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil
	}
	var entries []historyEntry
	if json.Unmarshal([]byte(raw), &entries) != nil {
		return nil
	}
	out := make([]model.Event, 0, len(entries))
	for _, e := range entries {
		at, _ := time.Parse(time.RFC3339Nano, e.At)
		out = append(out, model.Event{At: at, Actor: e.Node, Action: e.Action, Reason: e.Reason, Detail: e.Detail, Door: model.Door(e.Door)})
	}
	return out
}

// maxHistory bounds the hand-off history kept on a page by entries;
// historyRoom by UTF-16 units, what 100 text objects hold when chunks
// leaves each one a unit short (a character it will not split).
const (
	maxHistory  = 50
	historyRoom = maxChunks * (maxChunk - 1)
)

// actionTrimmed is the history entry that says how many older entries
// were dropped to stay within Notion's limits.
const actionTrimmed = "history-trimmed"

// encodeHistory writes the history as seed 001's JSON array, dropping the
// oldest whole entries until it fits one rich text value and saying so in
// a first entry, so the array is never cut mid-JSON (which would lose it
// all on the next read). A single entry too long by itself has its reason
// and detail shortened.
func encodeHistory(events []model.Event) string {
	dropped := 0
	if len(events) > 0 && events[0].Action == actionTrimmed {
		_, _ = fmt.Sscanf(events[0].Detail, "%d", &dropped)
		events = events[1:]
	}
	comment := func(e model.Event) bool { return e.Action == model.EventComment }
	if len(events) > maxHistory {
		dropped += len(events) - maxHistory
		events = model.TrimTrail(events, len(events)-maxHistory, comment)
	}
	events = slices.Clone(events)
	for {
		out := events
		if dropped > 0 {
			var at time.Time
			if len(events) > 0 {
				at = events[0].At
			}
			note := model.Event{At: at, Actor: "claimdeck", Action: actionTrimmed,
				Detail: fmt.Sprintf("%d older entries dropped to fit Notion's limit of %d text objects", dropped, maxChunks)}
			out = append([]model.Event{note}, events...)
		}
		raw := marshalHistory(out)
		switch {
		case len(utf16Units(raw)) <= historyRoom:
			return raw
		case len(events) > 1:
			events, dropped = model.TrimTrail(events, 1, comment), dropped+1
		default:
			last := &events[0]
			last.Reason, last.Detail = halve(last.Reason), halve(last.Detail)
		}
	}
}

// halve keeps the first half of s, whole characters only.
func halve(s string) string {
	r := []rune(s)
	return string(r[:len(r)/2])
}

func marshalHistory(events []model.Event) string {
	entries := make([]historyEntry, len(events))
	for i, e := range events {
		entries[i] = historyEntry{Node: e.Actor, Action: e.Action, At: e.At.UTC().Format(time.RFC3339), Reason: e.Reason, Detail: e.Detail, Door: string(e.Door)}
	}
	b, _ := json.Marshal(entries)
	return string(b)
}

// version identifies what a person saw: everything the task shows plus the
// page's edit time (which Notion rounds to the minute, so it alone cannot
// tell two edits in one minute apart).
func version(p *notionapi.Page, t *model.Task) string {
	h := fnv.New64a()
	c, r := t.Claim(), model.Reservation{}
	if t.Reserved() != nil {
		r = *t.Reserved()
	}
	fmt.Fprintln(h, p.LastEditedTime.UnixNano(), p.Archived, t.Title, t.Description, t.RawStatus, int(t.Class), t.Priority,
		int(c.Holder), c.Name, c.RunID, c.Token, c.ClaimedAt.Time().UnixNano(), c.Expires.Time().UnixNano(),
		r.For, r.Until.UnixNano(), t.More().Reason, t.UnblockAction(), t.NextCheckAt().UnixNano(), t.More().Artifacts, len(t.More().History))
	return strconv.FormatUint(h.Sum64(), 16)
}

// maxChunk is Notion's limit on one text object, in UTF-16 code units;
// maxChunks its limit on the objects of one rich text value.
const (
	maxChunk  = 2000
	maxChunks = 100
)

// chunks splits s into text objects of at most 2,000 UTF-16 code units,
// never inside a character. Text beyond 100 objects is cut.
func chunks(s string) []notionapi.RichText {
	out := []notionapi.RichText{}
	var b strings.Builder
	units := 0
	flush := func() {
		if b.Len() > 0 {
			out = append(out, notionapi.RichText{Type: notionapi.ObjectTypeText, Text: &notionapi.Text{Content: b.String()}})
			b.Reset()
			units = 0
		}
	}
	for _, r := range s {
		n := len(utf16Units(string(r)))
		if units+n > maxChunk {
			flush()
			if len(out) == maxChunks {
				return out
			}
		}
		b.WriteRune(r)
		units += n
	}
	flush()
	return out
}

// null is a property value that clears: {"<type>": null}. notionapi has no
// way to send it for a select or a number.
type null notionapi.PropertyType

func (n null) GetID() string                   { return "" }
func (n null) GetType() notionapi.PropertyType { return notionapi.PropertyType(n) }
func (n null) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{string(n): nil})
}

// instant is a date value written with milliseconds; notionapi's Date
// drops them, which shortens one-second leases noticeably.
type instant time.Time

func (d instant) GetID() string                   { return "" }
func (d instant) GetType() notionapi.PropertyType { return notionapi.PropertyTypeDate }
func (d instant) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"date": map[string]any{"start": time.Time(d).UTC().Format("2006-01-02T15:04:05.000Z07:00")}})
}

// patch collects property writes for one page update, skipping roles the
// database does not have.
type patch notionapi.Properties

func (p patch) text(name, s string) {
	if name != "" {
		p[name] = notionapi.RichTextProperty{RichText: chunks(s)}
	}
}

func (p patch) title(name, s string) {
	if name != "" {
		p[name] = notionapi.TitleProperty{Title: chunks(s)}
	}
}

func (p patch) option(name, s string) {
	switch {
	case name == "":
	case s == "":
		p[name] = null(notionapi.PropertyTypeSelect)
	default:
		p[name] = notionapi.SelectProperty{Select: notionapi.Option{Name: s}}
	}
}

func (p patch) number(name string, f float64, set bool) {
	switch {
	case name == "":
	case !set:
		p[name] = null(notionapi.PropertyTypeNumber)
	default:
		p[name] = notionapi.NumberProperty{Number: f}
	}
}

func (p patch) date(name string, t time.Time) {
	switch {
	case name == "":
	case t.IsZero():
		p[name] = null(notionapi.PropertyTypeDate)
	default:
		p[name] = instant(t)
	}
}

// class writes a service class; STANDARD is written as such. A ClassRank
// property is kept in step.
func (p patch) class(m *Mapping, c model.Class) {
	if c == 0 {
		c = model.ClassStandard
	}
	name := c.String()
	if m.ClassOptions[c] != "" {
		name = m.ClassOptions[c]
	}
	p.option(m.Class, name)
	p.number(m.ClassRank, float64(c.Rank()), true)
}

// priority writes a numeric priority as a number or as a select option.
func (p patch) priority(m *Mapping, n int) {
	if m.PriorityOptions != nil {
		p.option(m.Priority, m.priorityOption(n))
		return
	}
	p.number(m.Priority, float64(n), n != 0)
}

// lock writes the claim fields: holder kind and name, run, token and
// lease. A zero kind with an empty name clears them.
func (p patch) lock(m *Mapping, kind model.HolderKind, name, run, token string, from, until time.Time) {
	p.option(m.ClaimedBy, kind.String())
	if m.Token == "" && token != "" {
		name += tokenSep + token
	}
	if m.Run == "" && m.Assignee != "" && run != "" {
		name += runSep + run
	}
	if m.Assignee != "" && kind == model.HolderNone && strings.HasPrefix(name, reservedPrefix) {
		token = uuid.NewString()
	}
	p.text(m.Holder, name)
	p.text(m.Run, run)
	p.text(m.Token, token)
	switch {
	case m.Assignee == "" || kind == model.HolderNone:
		// A release leaves the Assignee, as the skill does: its audit trail.
	case kind == model.HolderHuman && m.operator != "":
		p[m.Assignee] = people{m.operator}
	default:
		p[m.Assignee] = people{}
	}
	if kind == model.HolderHuman && m.HumanLease {
		until = from.AddDate(100, 0, 0)
	}
	p.lease(m, from, until)
}

// people is a people value: {"people":[{"object":"user","id":…}]}
// (https://developers.notion.com/reference/page-property-values#people).
type people []string

func (u people) GetID() string                   { return "" }
func (u people) GetType() notionapi.PropertyType { return notionapi.PropertyTypePeople }
func (u people) MarshalJSON() ([]byte, error) {
	refs := make([]map[string]string, len(u))
	for i, id := range u {
		refs[i] = map[string]string{"object": "user", "id": id}
	}
	return json.Marshal(map[string]any{"people": refs})
}

// lease writes only the lease: the expiry, or the claim time and timeout.
// A heartbeat writes nothing else, so a heartbeat that loses a race with a
// release cannot bring the released claim back.
func (p patch) lease(m *Mapping, from, until time.Time) {
	if m.Expires != "" {
		p.date(m.Expires, until)
		return
	}
	p.date(m.ClaimedAt, from)
	if !from.IsZero() && !until.IsZero() {
		p.number(m.Timeout, until.Sub(from).Minutes(), true)
	}
}

func utf16Units(s string) []uint16 { return utf16.Encode([]rune(s)) }

// shows reports whether the page carries every text and option the patch
// writes: after a failed write, whether it landed. Dates and numbers are
// left out: Notion may render them otherwise than we sent them.
func (p patch) shows(pg *page) bool {
	v := values(pg.Properties)
	for name, w := range p {
		switch w.(type) {
		case notionapi.SelectProperty:
			if v.option(name) != p.wrote(name) {
				return false
			}
		case notionapi.RichTextProperty, notionapi.TitleProperty:
			if v.text(name) != p.wrote(name) {
				return false
			}
		}
	}
	return true
}

// wrote is the text or option a patch writes to a property ("" when it
// clears it or leaves it alone).
func (p patch) wrote(name string) string {
	var parts []notionapi.RichText
	switch v := p[name].(type) {
	case notionapi.SelectProperty:
		return v.Select.Name
	case notionapi.RichTextProperty:
		parts = v.RichText
	case notionapi.TitleProperty:
		parts = v.Title
	}
	var b strings.Builder
	for _, r := range parts {
		if r.Text != nil {
			b.WriteString(r.Text.Content)
		}
	}
	return b.String()
}
