package notion

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jomei/notionapi"

	"github.com/claimdeck/claimdeck/model"
)

// Mapping says which database property plays which role. An empty name
// means the database has no such property. Names listed in Optional may be
// absent from the database: the role is then switched off.
type Mapping struct {
	Title       string // title
	Key         string // unique_id shown as the task key
	Description string // rich_text

	Status string // select
	// States is the status vocabulary written for each state.
	States map[model.State]string
	// Also maps further raw statuses to states when reading.
	Also map[string]model.State

	Class string // select: EXPEDITE, FIXED_DATE, STANDARD, INTANGIBLE
	// ClassOptions names the select option of each class where the
	// database spells them otherwise (today's skill: Fixed Date).
	ClassOptions map[model.Class]string
	// ClassRank is a number property that, when set (1-4), ranks the task
	// instead of its Class select (today's skill's optional ClassRank).
	ClassRank string
	Priority  string // number, or a select read with model.ParsePriority
	// PriorityOptions names the select option written for a numeric
	// priority when Priority is a select (seed 001: normal, urgent, critical).
	PriorityOptions map[int]string

	ClaimedBy string // select AGENT / HUMAN; without it the holder name says
	Holder    string // rich_text: agent name or HUMAN:<actor>
	// Run is the agent's run id (rich_text). Without it, and with an
	// Assignee, the run shares the holder's property: "name · run".
	Run string
	// Assignee is a people property naming the holder (today's skill sets
	// the agent's Notion user on claim and keeps it after release). A
	// person's claim sets the operator's Notion user when one is
	// configured; an agent's claim through claimdeck clears it.
	Assignee string
	// Token is the lock token (rich_text). Without it the token travels in
	// the holder name as NAME#token.
	Token string
	// Expires is an explicit lease expiry (date). Without it the lease is
	// ClaimedAt + Timeout minutes (seeds 000, 001).
	Expires        string
	ClaimedAt      string // date
	Timeout        string // number of minutes
	DefaultTimeout time.Duration

	StartedAt     string // date
	DoneAt        string // date
	Artifacts     string // rich_text
	Reason        string // rich_text
	UnblockAction string // rich_text
	NextCheckAt   string // date

	HandoffStatus string // select: available, claimed, stale, escalated (seed 001)
	History       string // rich_text holding a JSON array (seed 001's handoff_history)
	// Subtasks is a rollup counting open sub-tasks, or, with SubtasksDone,
	// all of them (today's skill: Dependencies and Completed Sub-tasks).
	Subtasks     string
	SubtasksDone string
	// SubtaskPages is the relation listing a task's sub-tasks; ParentPage
	// the one naming its parent, read as the task's Parent so the detail
	// lists a parent's sub-tasks.
	SubtaskPages string
	ParentPage   string
	// HumanLease makes a person's claim write a lease a century ahead:
	// today's skill re-claims an In Progress task whose lock is empty or
	// expired, and must not take a person's.
	HumanLease bool
	// ReviewInArtifacts writes a review's summary to the Artifacts property
	// (today's skill: "Summary → provided summary text" in its pull
	// policy) rather than the blocker's Reason; without that property the
	// summary stays in Reason.
	ReviewInArtifacts bool
	// FailedMark starts the reason of a failure written as the status of
	// StateFailed that another state shares (today's skill has no Failed:
	// a failure is Canceled with the reason "failed: …").
	FailedMark string
	// Generation says which kind of database the preset found.
	Generation string

	// CreateKey is a rich_text property each create fills with a fresh
	// key, so that a create whose answer was lost can look for its page
	// before creating again.
	CreateKey string

	Optional []string

	// kinds and ids are the bound properties' types and ids, read from
	// the data source.
	kinds map[string]notionapi.PropertyConfigType
	ids   map[string]string
	// statusOptions are the options the data source's status property
	// had when the source opened.
	statusOptions []string
	// operator is the Notion user a person's claim sets as Assignee.
	operator string
}

// The preset names a source config can give.
const (
	PresetNtask         = "ntask"
	PresetClaimProtocol = "claim-protocol"
	PresetMeshHandoff   = "mesh-handoff"
)

// Preset returns the mapping of a named preset.
func Preset(name string) (Mapping, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "", PresetNtask:
		return ntask(), nil
	case PresetClaimProtocol:
		return claimProtocol(), nil
	case PresetMeshHandoff:
		return meshHandoff(), nil
	}
	return Mapping{}, fmt.Errorf("unknown schema %q (want ntask, claim-protocol, mesh-handoff or a custom mapping)", name)
}

// The generations of ntask databases the preset reads.
const (
	GenerationSeed  = "seed 002"
	GenerationToday = "today's notion-task skill"
)

// ntaskFor picks the ntask generation a data source's schema is: today's
// skill's when its title is "Task name" or its Status offers "In
// Progress" (seed 002 writes IN_PROGRESS), else seed 002's.
func ntaskFor(schema notionapi.PropertyConfigs) Mapping {
	_, named := schema["Task name"]
	if st, ok := schema["Status"]; named || ok && slices.Contains(optionNames(st), "In Progress") {
		return today()
	}
	return ntask()
}

// today is the database today's notion-task skill sets up
// (21-DOT-DEV/openclaw-skills at 75590fd, references/schema.md and
// NotionCLI.swift): the status type, priority 1-3, the Assignee person,
// lock fields the binary writes, and sub-tasks counted by two rollups.
// Backlog is not yet triaged: it is read as parked (blocked), shown with
// its own name, and never pulled.
func today() Mapping {
	return Mapping{
		Generation: GenerationToday,
		Title:      "Task name", Key: "ID", Description: "Description",
		Status: "Status",
		States: map[model.State]string{
			model.StateQueued: "Ready", model.StateClaimed: "In Progress", model.StateDone: "Done",
			model.StateBlocked: "Blocked", model.StateReview: "Review", model.StateCanceled: "Canceled",
			model.StateFailed: "Canceled",
		},
		FailedMark: "failed: ", ReviewInArtifacts: true,
		Also:  map[string]model.State{"backlog": model.StateBlocked},
		Class: "Class", ClassRank: "ClassRank", Priority: "Priority",
		ClassOptions: map[model.Class]string{
			model.ClassExpedite: "Expedite", model.ClassFixedDate: "Fixed Date",
			model.ClassStandard: "Standard", model.ClassIntangible: "Intangible",
		},
		Holder: "Agent Run", Assignee: "Assignee", Token: "Lock Token", Expires: "Lock Expires", HumanLease: true,
		StartedAt: "Started At", DoneAt: "Done At",
		Artifacts: "Summary", Reason: "Blocker Reason", UnblockAction: "Unblock Action", NextCheckAt: "Next Check At",
		Subtasks: "Dependencies", SubtasksDone: "Completed Sub-tasks", SubtaskPages: "Sub-tasks", ParentPage: "Parent-task",
		CreateKey: "Create Key",
		Optional: []string{"Description", "ID", "Class", "ClassRank", "Assignee", "Started At", "Done At", "Summary",
			"Blocker Reason", "Unblock Action", "Next Check At", "Dependencies", "Completed Sub-tasks", "Sub-tasks", "Parent-task", "Create Key"},
	}
}

// ntask is seed 002's database. Description, the unique id and the dates
// it marks "if property exists" are optional.
func ntask() Mapping {
	return Mapping{
		Generation: GenerationSeed,
		Title:      "Name", Key: "ID", Description: "Description",
		Status: "Status",
		States: map[model.State]string{
			model.StateQueued: "READY", model.StateClaimed: "IN_PROGRESS", model.StateDone: "DONE",
			model.StateBlocked: "BLOCKED", model.StateReview: "REVIEW", model.StateCanceled: "CANCELED",
			model.StateFailed: "FAILED",
		},
		Class: "Class", Priority: "Priority",
		ClaimedBy: "Claimed By", Holder: "Agent", Run: "Agent Run", Token: "Lock Token", Expires: "Lock Expires",
		StartedAt: "StartedAt", DoneAt: "DoneAt",
		Artifacts: "Artifacts", Reason: "BlockerReason", UnblockAction: "UnblockAction", NextCheckAt: "NextCheckAt",
		Subtasks: "Dependencies", CreateKey: "Create Key",
		Optional: []string{"Description", "ID", "StartedAt", "DoneAt", "NextCheckAt", "Dependencies", "Create Key"},
	}
}

// seed0Extras are properties claimdeck uses when a seed 000/001 database
// has them: the seeds keep no description, class, reason or artifacts.
var seed0Extras = []string{"details", "class", "priority", "lock_token", "run_id", "artifacts", "reason", "unblock_action", "next_check_at", "started_at", "done_at", "create_key"}

// claimProtocol is seed 000's database: OPEN tasks claimed by name, the
// lease being claimed_at + claim_timeout_minutes (default 30).
func claimProtocol() Mapping {
	return Mapping{
		Title: "Description", Description: "details",
		Status: "status",
		States: map[model.State]string{
			model.StateQueued: "OPEN", model.StateClaimed: "IN_PROGRESS", model.StateBlocked: "BLOCKED",
			model.StateDone: "COMPLETED", model.StateCanceled: "CANCELLED", model.StateReview: "REVIEW",
			model.StateFailed: "FAILED",
		},
		Class: "class", Priority: "priority",
		Holder: "claimed_by", Token: "lock_token", Run: "run_id",
		ClaimedAt: "claimed_at", Timeout: "claim_timeout_minutes", DefaultTimeout: 30 * time.Minute,
		StartedAt: "started_at", DoneAt: "done_at",
		Artifacts: "artifacts", Reason: "reason", UnblockAction: "unblock_action", NextCheckAt: "next_check_at",
		CreateKey: "create_key",
		Optional:  seed0Extras,
	}
}

// meshHandoff is seed 001's database: seed 000's claim fields, a hand-off
// status and a JSON hand-off history; stale after 10 minutes.
func meshHandoff() Mapping {
	m := claimProtocol()
	m.States = map[model.State]string{
		model.StateQueued: "queued", model.StateClaimed: "claimed", model.StateDone: "completed",
		model.StateFailed: "failed", model.StateBlocked: "blocked", model.StateReview: "review",
		model.StateCanceled: "canceled",
	}
	m.Also = map[string]model.State{"in_progress": model.StateClaimed, "stale": model.StateClaimed}
	m.PriorityOptions = map[int]string{model.PriorityMedium: "normal", model.PriorityHigh: "urgent", model.PriorityCritical: "critical"}
	m.DefaultTimeout = 10 * time.Minute
	m.HandoffStatus = "handoff_status"
	m.History = "handoff_history"
	return m
}

// role is one property the mapping uses and the types it may have.
type role struct {
	what  string
	name  *string
	types []notionapi.PropertyConfigType
}

func (m *Mapping) roles() []role {
	const (
		title    = notionapi.PropertyConfigTypeTitle
		text     = notionapi.PropertyConfigTypeRichText
		num      = notionapi.PropertyConfigTypeNumber
		sel      = notionapi.PropertyConfigTypeSelect
		status   = notionapi.PropertyConfigStatus
		date     = notionapi.PropertyConfigTypeDate
		uniqueID = notionapi.PropertyConfigUniqueID
		rollup   = notionapi.PropertyConfigTypeRollup
		formula  = notionapi.PropertyConfigTypeFormula
		people   = notionapi.PropertyConfigTypePeople
		relation = notionapi.PropertyConfigTypeRelation
	)
	return []role{
		{"title", &m.Title, []notionapi.PropertyConfigType{title}},
		{"key", &m.Key, []notionapi.PropertyConfigType{uniqueID}},
		{"description", &m.Description, []notionapi.PropertyConfigType{text}},
		{"status", &m.Status, []notionapi.PropertyConfigType{sel, status}},
		{"class", &m.Class, []notionapi.PropertyConfigType{sel, status}},
		{"class rank", &m.ClassRank, []notionapi.PropertyConfigType{num}},
		{"priority", &m.Priority, []notionapi.PropertyConfigType{num, sel, status}},
		{"claimed by", &m.ClaimedBy, []notionapi.PropertyConfigType{sel, status}},
		{"holder", &m.Holder, []notionapi.PropertyConfigType{text}},
		{"run", &m.Run, []notionapi.PropertyConfigType{text}},
		{"assignee", &m.Assignee, []notionapi.PropertyConfigType{people}},
		{"lock token", &m.Token, []notionapi.PropertyConfigType{text}},
		{"lease expiry", &m.Expires, []notionapi.PropertyConfigType{date}},
		{"claimed at", &m.ClaimedAt, []notionapi.PropertyConfigType{date}},
		{"claim timeout", &m.Timeout, []notionapi.PropertyConfigType{num}},
		{"started at", &m.StartedAt, []notionapi.PropertyConfigType{date}},
		{"done at", &m.DoneAt, []notionapi.PropertyConfigType{date}},
		{"artifacts", &m.Artifacts, []notionapi.PropertyConfigType{text}},
		{"reason", &m.Reason, []notionapi.PropertyConfigType{text}},
		{"unblock action", &m.UnblockAction, []notionapi.PropertyConfigType{text}},
		{"next check", &m.NextCheckAt, []notionapi.PropertyConfigType{date}},
		{"hand-off status", &m.HandoffStatus, []notionapi.PropertyConfigType{sel, status}},
		{"history", &m.History, []notionapi.PropertyConfigType{text}},
		{"open sub-tasks", &m.Subtasks, []notionapi.PropertyConfigType{rollup, formula, num}},
		{"completed sub-tasks", &m.SubtasksDone, []notionapi.PropertyConfigType{rollup, formula, num}},
		{"sub-task pages", &m.SubtaskPages, []notionapi.PropertyConfigType{relation}},
		{"parent page", &m.ParentPage, []notionapi.PropertyConfigType{relation}},
		{"create key", &m.CreateKey, []notionapi.PropertyConfigType{text}},
	}
}

// bind checks the mapping against a database schema, whose property ids
// by name are ids, and switches off the optional roles the database
// lacks. Every problem is named at once.
func (m *Mapping) bind(schema notionapi.PropertyConfigs, ids map[string]string) error {
	var problems []string
	m.kinds, m.ids = map[string]notionapi.PropertyConfigType{}, map[string]string{}
	for _, r := range m.roles() {
		name := *r.name
		if name == "" {
			continue
		}
		cfg, ok := schema[name]
		if ok {
			m.kinds[name], m.ids[name] = cfg.GetType(), cmp.Or(ids[name], string(cfg.GetID()))
		}
		if ok && r.name == &m.Status {
			m.statusOptions = optionNames(cfg)
			problems = append(problems, m.groupWords(cfg)...)
		}
		if !ok {
			if slices.Contains(m.Optional, name) {
				*r.name = ""
				continue
			}
			problems = append(problems, fmt.Sprintf("property %q (%s, %s) is missing", name, r.what, typeList(r.types)))
			continue
		}
		if !slices.Contains(r.types, cfg.GetType()) {
			problems = append(problems, fmt.Sprintf("property %q (%s) is %s, want %s", name, r.what, cfg.GetType(), typeList(r.types)))
		}
	}
	switch {
	case m.Title == "":
		problems = append(problems, "no title property is mapped")
	case m.Status == "":
		problems = append(problems, "no status property is mapped")
	case m.Holder == "":
		problems = append(problems, "no holder property is mapped")
	case m.Expires == "" && m.ClaimedAt == "":
		problems = append(problems, "neither a lease expiry nor a claimed-at property is mapped")
	}
	for _, st := range []model.State{model.StateQueued, model.StateClaimed, model.StateDone} {
		if m.States[st] == "" {
			problems = append(problems, fmt.Sprintf("no status value is mapped for %s", st))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	sort.Strings(problems)
	if m.Generation != "" {
		return fmt.Errorf("the database does not fit the schema (read as %s's): %s", m.Generation, strings.Join(problems, "; "))
	}
	return fmt.Errorf("the database does not fit the schema: %s", strings.Join(problems, "; "))
}

// read lists, sorted, the ids of the properties the source reads: every
// role bound to a property of the data source. Queries send them as
// filter_properties, so a page answers with these and no other.
func (m *Mapping) read() []string {
	ids := slices.Collect(maps.Values(m.ids))
	slices.Sort(ids)
	return slices.Compact(ids)
}

// groupWords names the status words of a status property that name one
// of its groups ("To-do", "In progress", "Complete") and none of its
// options. Before Notion-Version 2026-12-01 a status equals on such a
// word matched the whole group; from 2026-12-01 it matches nothing
// (https://developers.notion.com/guides/get-started/upgrade-guide-2026-12-01,
// "Status filters"), and a page never shows a group as its status, so the
// word could never be read or written as a state either.
func (m *Mapping) groupWords(cfg notionapi.PropertyConfig) []string {
	c, ok := cfg.(*notionapi.StatusPropertyConfig)
	if !ok {
		return nil
	}
	var out []string
	for _, g := range c.Status.Groups {
		for st, w := range m.States {
			if strings.EqualFold(w, g.Name) && !slices.ContainsFunc(c.Status.Options, func(o notionapi.Option) bool { return strings.EqualFold(o.Name, w) }) {
				out = append(out, fmt.Sprintf("the %s status %q names a status group of property %q, not an option: map it to one of the group's options", st, w, m.Status))
			}
		}
	}
	slices.Sort(out)
	return out
}

// optionNames lists the options of a select or status property.
func optionNames(cfg notionapi.PropertyConfig) []string {
	var opts []notionapi.Option
	switch c := cfg.(type) {
	case *notionapi.SelectPropertyConfig:
		opts = c.Select.Options
	case *notionapi.StatusPropertyConfig:
		opts = c.Status.Options
	}
	names := make([]string, len(opts))
	for i, o := range opts {
		names[i] = o.Name
	}
	return names
}

func typeList(ts []notionapi.PropertyConfigType) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = string(t)
	}
	return strings.Join(s, " or ")
}

// classOf reads a class from its select option, spelled as ClassOptions
// says or as model.ParseClass reads it; unknown is STANDARD.
func (m *Mapping) classOf(raw string) model.Class {
	for c, name := range m.ClassOptions {
		if strings.EqualFold(name, raw) {
			return c
		}
	}
	if c, err := model.ParseClass(raw); err == nil {
		return c
	}
	return model.ClassStandard
}

// stateOf reads a raw status; a failure shares its status (FailedMark),
// and decodeTask tells it by its reason.
func (m *Mapping) stateOf(raw string) model.State {
	for st, v := range m.States {
		if st == model.StateFailed && m.FailedMark != "" {
			continue
		}
		if strings.EqualFold(v, raw) {
			return st
		}
	}
	if st, ok := m.Also[strings.ToLower(raw)]; ok {
		return st
	}
	return model.StateUnknown
}

// priorityOption is the select option written for a numeric priority: the
// option of the highest value not above p, else the lowest option.
func (m *Mapping) priorityOption(p int) string {
	if p <= 0 || len(m.PriorityOptions) == 0 {
		return ""
	}
	values := make([]int, 0, len(m.PriorityOptions))
	for v := range m.PriorityOptions {
		values = append(values, v)
	}
	sort.Ints(values)
	pick := values[0]
	for _, v := range values {
		if v <= p {
			pick = v
		}
	}
	return m.PriorityOptions[pick]
}

// fit turns the select values of a patch into status values for the
// properties the data source types as status: Notion writes a status as
// {"status":{"name":…}} (https://developers.notion.com/reference/page-property-values#status).
func (m *Mapping) fit(p patch) notionapi.Properties {
	for name, v := range p {
		if m.kinds[name] != notionapi.PropertyConfigStatus {
			continue
		}
		switch x := v.(type) {
		case notionapi.SelectProperty:
			p[name] = notionapi.StatusProperty{Status: x.Select}
		case null:
			p[name] = null(notionapi.PropertyTypeStatus)
		}
	}
	return notionapi.Properties(p)
}

// optionFilter selects the pages whose select or status property name
// has the value.
func (m *Mapping) optionFilter(name, value string) notionapi.Filter {
	return m.optionCondition(name, notionapi.SelectFilterCondition{Equals: value})
}

// optionsCondition is one select or status condition (op equals or
// does_not_equal) over several option names: any of them, or none of
// them. Select and status filters take an array of names since April 2026
// (notion-sdk-js PR #707: "Select, status, and multi_select filter
// operators accept a single string or an array of strings";
// https://developers.notion.com/reference/filter-data-source-entries), so
// one condition replaces an "or" (or "and") of one condition per name,
// keeping a compound filter one level shallower.
func (m *Mapping) optionsCondition(name, op string, values []string) notionapi.Filter {
	kind := "select"
	if m.kinds[name] == notionapi.PropertyConfigStatus {
		kind = "status"
	}
	var v any = values
	if len(values) == 1 {
		v = values[0]
	}
	return optionsFilter{property: name, kind: kind, cond: map[string]any{op: v}}
}

// optionsFilter is a property filter notionapi cannot spell (its
// conditions hold one string): it embeds notionapi.PropertyFilter to be a
// notionapi.Filter and marshals itself.
type optionsFilter struct {
	notionapi.PropertyFilter
	property, kind string
	cond           map[string]any
}

func (f optionsFilter) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"property": f.property, f.kind: f.cond})
}

// optionCondition filters a select or status property under the key its
// type takes: {"property":…,"select":{…}} or {"property":…,"status":{…}},
// whose conditions are the same (equals, does_not_equal, is_empty,
// is_not_empty; https://developers.notion.com/reference/filter-data-source-entries).
func (m *Mapping) optionCondition(name string, c notionapi.SelectFilterCondition) notionapi.Filter {
	if m.kinds[name] == notionapi.PropertyConfigStatus {
		sc := notionapi.StatusFilterCondition(c)
		return &notionapi.PropertyFilter{Property: name, Status: &sc}
	}
	return &notionapi.PropertyFilter{Property: name, Select: &c}
}
