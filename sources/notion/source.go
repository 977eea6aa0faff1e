package notion

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jomei/notionapi"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// Config opens a Notion source. Token is a secret: it is never printed,
// logged or put in an error.
type Config struct {
	Name       string
	Token      string
	DatabaseID string
	// DataSourceID or DataSource (its name) picks one of the database's
	// data sources; either is needed once the database has several.
	DataSourceID string
	DataSource   string
	// Preset is ntask (seed 002), claim-protocol (seed 000) or mesh-handoff
	// (seed 001); Mapping, when set, replaces it.
	Preset  string
	Mapping *Mapping
	// TrailKey signs the notes claimdeck leaves on pages, so that only
	// they are read back as claimdeck's events (trail.go). Empty: a key
	// derived from Token. Keep it from the agents: whoever has it can
	// write claimdeck's trail.
	TrailKey string
	// OperatorUser is the Notion user id a person's claim sets as Assignee
	// in a database set up by today's notion-task skill. Optional.
	OperatorUser string
	// HandoffQueueDB is seed 001's Handoff Queue database; each hand-off
	// adds a record to it. Optional.
	HandoffQueueDB string
	// BaseURL is where requests go (default https://api.notion.com): an
	// emulator, a proxy or a recording.
	BaseURL string
	// Rate is requests per second per token (default 3), shared by every
	// source using the token. Negative means no limit (local emulators).
	Rate float64
	// Version is the Notion-Version sent: VersionCurrent (the default) or
	// VersionDataSources for a workspace that pins it.
	Version string
	// Workspace names the Notion workspace the token belongs to: sources
	// naming the same one share its workspace-wide budget, so a 429 for
	// the workspace's limit slows every token in it (default: the token
	// alone).
	Workspace string
	// Lease is the default lease (seed 002: 20 minutes).
	Lease time.Duration
	// Grace is how long an agent's expired lease waits before claim takes
	// the task over (default model.DefaultPolicy().Grace).
	Grace time.Duration
	// Now is the clock leases and reservations are written and judged by
	// (default time.Now); tests hand in their own.
	Now func() time.Time
	// Settle is the wait between a claim's update and its verifying page
	// GET (default 1 s; negative means none).
	Settle time.Duration
	// Overlap is how far back an incremental poll looks before the newest
	// edit it has seen, since Notion rounds edit times down to the minute
	// (default 2 min).
	Overlap time.Duration
	// ReconcileEvery is how often a poll reloads the whole database to notice
	// pages that were archived or trashed (default 5 min).
	ReconcileEvery time.Duration
	// Timeout bounds one request (default 30 s).
	Timeout time.Duration
	// Budget bounds one command, every request, retry and wait included
	// (default 3 min): a Retry-After longer than what is left ends the
	// command at once, saying so.
	Budget time.Duration
	// Retries is how many times a read that met a 429/5xx/529 or timed out
	// is tried again (default 5); RetryBase is the first backoff (default
	// 500 ms), doubling each time. Writes are never sent again blindly.
	Retries   int
	RetryBase time.Duration
	// RetryMax caps one backoff (default 1 min); a Retry-After is honoured
	// in full.
	RetryMax time.Duration
	// Transport carries the requests (default http.DefaultTransport).
	Transport http.RoundTripper
}

// String describes the config without its token.
func (c Config) String() string {
	token := "unset"
	if c.Token != "" {
		token = "[redacted]"
	}
	return fmt.Sprintf("notion source %q (database %s, data source %s, schema %s, token %s)", c.Name, c.DatabaseID, orDash(c.DataSourceID+c.DataSource), c.schemaName(), token)
}

func (c Config) schemaName() string {
	if c.Mapping != nil {
		return "custom"
	}
	if c.Preset == "" {
		return PresetNtask
	}
	return c.Preset
}

// GoString keeps %#v from printing the token too.
func (c Config) GoString() string { return c.String() }

// Source is a task queue in a Notion database.
type Source struct {
	name    string
	schema  string // the configured schema's name
	m       Mapping
	api     *api
	db      string
	ds      string // the data source holding the tasks
	queue   *handoffQueue
	lease   time.Duration
	grace   time.Duration
	settle  time.Duration
	overlap time.Duration
	every   time.Duration
	limit   *limiter
	now     func() time.Time
	// key signs claimdeck's notes (trail.go).
	key []byte
	// claiming holds the ids this process is claiming right now: agents
	// sharing a source never race each other for one task.
	claiming sync.Map
}

var _ sources.Source = (*Source)(nil)

// Open connects, reads the database schema and checks it against the
// mapping: MISCONFIGURED names every missing or mistyped property.
func Open(ctx context.Context, cfg Config) (*Source, error) {
	const op = "open"
	if strings.TrimSpace(cfg.Token) == "" {
		return nil, model.Errorf(model.CodeMisconfigured, op, "", "source %s: no Notion token", cfg.Name)
	}
	if strings.TrimSpace(cfg.DatabaseID) == "" {
		return nil, model.Errorf(model.CodeMisconfigured, op, "", "source %s: no database_id", cfg.Name)
	}
	var m Mapping
	detect := false
	if cfg.Mapping != nil {
		m = *cfg.Mapping
	} else {
		detect = cfg.schemaName() == PresetNtask
		var err error
		if m, err = Preset(cfg.Preset); err != nil {
			return nil, model.Errorf(model.CodeMisconfigured, op, "", "source %s: %v", cfg.Name, err)
		}
	}
	base := cfg.BaseURL
	if base == "" {
		base = "https://api.notion.com"
	}
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, model.Errorf(model.CodeMisconfigured, op, "", "source %s: base_url %q is not an absolute URL", cfg.Name, base)
	}
	next := cfg.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	version, err := CheckVersion(strings.TrimSpace(cfg.Version))
	if err != nil {
		return nil, model.Errorf(model.CodeMisconfigured, op, "", "source %s: %v", cfg.Name, err)
	}
	rate := cfg.Rate
	if rate == 0 {
		rate = 3
	}
	rt := &transport{base: u, next: next, limit: limiterFor(cfg.Token, rate)}
	token := cfg.Token
	s := &Source{
		limit: rt.limit,
		name:  cfg.Name, m: m, db: cfg.DatabaseID, schema: cfg.schemaName(),
		api: &api{hc: &http.Client{Transport: rt}, token: token, version: version, gate: newThrottle(token, cfg.Workspace), base: strings.TrimRight(u.String(), "/"), timeout: orDur(cfg.Timeout, 30*time.Second), budget: orDur(cfg.Budget, 3*time.Minute),
			retry: retryPolicy{attempts: 1 + orInt(cfg.Retries, 5), base: orDur(cfg.RetryBase, 500*time.Millisecond), max: orDur(cfg.RetryMax, time.Minute)}},
		lease: orDur(cfg.Lease, model.DefaultPolicy().Lease), grace: orDur(cfg.Grace, model.DefaultPolicy().Grace), settle: orDur(cfg.Settle, time.Second),
		overlap: orDur(cfg.Overlap, 2*time.Minute), every: orDur(cfg.ReconcileEvery, 5*time.Minute),
		now: cfg.Now, key: trailKey(cfg.TrailKey, cfg.Token),
	}
	if s.now == nil {
		s.now = time.Now
	}
	if cfg.Settle < 0 {
		s.settle = 0
	}
	ctx, done := s.begin(ctx)
	defer done()
	if s.ds, err = s.pickDataSource(ctx, cfg); err != nil {
		return nil, err
	}
	sc, err := s.api.schema(ctx, s.ds)
	if err != nil {
		return nil, s.fail(op, "", err)
	}
	if detect {
		s.m = ntaskFor(sc.Properties)
	}
	s.m.operator = strings.TrimSpace(cfg.OperatorUser)
	if err := s.m.bind(sc.Properties, sc.ids); err != nil {
		return nil, model.Errorf(model.CodeMisconfigured, op, "", "source %s, database %s, data source %s: %v", cfg.Name, cfg.DatabaseID, s.ds, err)
	}
	s.api.props = s.m.read()
	if cfg.HandoffQueueDB != "" {
		if s.queue, err = s.openQueue(ctx, cfg.HandoffQueueDB); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// pickDataSource finds the database's data source for the tasks: the one
// named in the config, or the only one. Several and none named is
// MISCONFIGURED, listing each.
func (s *Source) pickDataSource(ctx context.Context, cfg Config) (string, error) {
	const op = "open"
	list, err := s.api.dataSources(ctx, cfg.DatabaseID)
	if err != nil {
		return "", s.fail(op, "", err)
	}
	var names []string
	for _, d := range list {
		if (cfg.DataSourceID != "" && sameID(d.ID, cfg.DataSourceID)) || (cfg.DataSourceID == "" && cfg.DataSource != "" && d.Name == cfg.DataSource) {
			return d.ID, nil
		}
		names = append(names, fmt.Sprintf("%s (%q)", d.ID, d.Name))
	}
	switch {
	case len(list) == 1 && cfg.DataSourceID == "" && cfg.DataSource == "":
		return list[0].ID, nil
	case len(list) == 0:
		return "", model.Errorf(model.CodeMisconfigured, op, "", "source %s: database %s has no data source", cfg.Name, cfg.DatabaseID)
	case cfg.DataSourceID == "" && cfg.DataSource == "":
		return "", model.Errorf(model.CodeMisconfigured, op, "", "source %s: database %s has %d data sources; set data_source_id or data_source to one of: %s",
			cfg.Name, cfg.DatabaseID, len(list), strings.Join(names, ", "))
	}
	return "", model.Errorf(model.CodeMisconfigured, op, "", "source %s: database %s has no data source %s; it has: %s",
		cfg.Name, cfg.DatabaseID, orDash(cfg.DataSourceID+cfg.DataSource), strings.Join(names, ", "))
}

func sameID(a, b string) bool {
	return strings.EqualFold(strings.ReplaceAll(a, "-", ""), strings.ReplaceAll(b, "-", ""))
}

// budgetKey marks a context that already carries a command's budget.
type budgetKey struct{}

// begin starts a command: its requests, retries and waits share one
// budget. A command run inside another keeps the outer budget.
func (s *Source) begin(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Value(budgetKey{}) != nil {
		return ctx, func() {}
	}
	return context.WithTimeoutCause(context.WithValue(ctx, budgetKey{}, true), s.api.budget, errBudgetTimeout)
}

func orDur(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func orInt(n, def int) int {
	if n > 0 {
		return n
	}
	return def
}

// Name is the configured source name.
func (s *Source) Name() string { return s.name }

// Schema says which schema the source reads the database as, and for the
// ntask preset which generation it found: "ntask (today's notion-task
// skill)" or "ntask (seed 002)".
func (s *Source) Schema() string {
	if s.m.Generation == "" {
		return s.schema
	}
	return s.schema + " (" + s.m.Generation + ")"
}

// Caps: claims are verified by re-reading, not atomic; changes are found
// by polling; escalation needs the schema's hand-off status property;
// CheckWrite checks what reads reveal (caps.go). Next hands out no dead
// holder's task: seed 002 keeps it IN_PROGRESS, and the sweep puts it back.
func (s *Source) Caps() sources.Caps {
	c := sources.Caps{Rescue: false, Escalation: s.m.HandoffStatus != "", WriteCheck: true, Trail: true, CostlyCount: true, Reads: s.Schema(), Lacks: []string{
		"atomic claims: Notion has no conditional writes, so a claim is verified by reading it back",
		"sub-tasks: tasks are not created under a parent here",
		"push: Notion sends no change notifications; the dashboard polls",
	}}
	if !c.Escalation {
		c.Lacks = append(c.Lacks, "escalation marks: the database has no hand-off status property (seed 001's handoff_status)")
	}
	return c
}

// Close releases nothing: the client holds no connections of its own.
func (s *Source) Close() error { return nil }

// fail turns a client error into a protocol error with a clear message,
// Notion's request_id when there is one, and without the token. id is
// empty for database-level calls.
func (s *Source) fail(op, id string, err error) error {
	var me *model.Error
	if errors.As(err, &me) {
		return err
	}
	if errors.Is(err, ErrIncomplete) {
		// Kept as ErrIncomplete: no reader may take the pages read for the list.
		return model.Errorf(model.CodeAPIError, op, id, "%w", err)
	}
	code, msg := model.CodeAPIError, ""
	var ae *apiError
	var te *timeoutError
	if errors.As(err, &ae) {
		ref := " (request_id " + orDash(ae.RequestID) + ")"
		switch {
		case ae.Status == http.StatusUnauthorized:
			// Named as refused credentials, so pollers wait long (hub.CredentialsBackoff).
			return model.Errorf(model.CodeMisconfigured, op, id, "%w: Notion rejected the integration token (401 unauthorized): check the token or token_env%s", sources.ErrCredentials, ref)
		case blockLimit(ae):
			return model.Errorf(model.CodeMisconfigured, op, id, "%w: %s%s", ErrBlockLimit, ae.Message, ref)
		case ae.Status == http.StatusForbidden:
			code, msg = model.CodeMisconfigured, "the integration lacks this capability (403 "+ae.Code+"): "+ae.Message+ref
		case ae.Status == http.StatusNotFound && id == "":
			code, msg = model.CodeMisconfigured, fmt.Sprintf("database %s not found or not shared with the integration (404 object_not_found): share it with the integration in Notion%s", s.db, ref)
		case ae.Status == http.StatusNotFound:
			return sources.NotFound(op, id)
		case ae.Status == http.StatusTooManyRequests:
			msg = fmt.Sprintf("Notion kept answering 429 rate_limited%s; gave up after the retries%s", forLimit(ae.limit()), ref)
		default:
			msg = ae.Error()
		}
	} else {
		switch {
		case errors.As(err, &te):
			msg = te.msg
		case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
			msg = "the request to Notion timed out"
		case errors.Is(err, context.Canceled):
			msg = "canceled"
		default:
			msg = err.Error()
		}
	}
	return model.Errorf(code, op, id, "%s", model.Redact(msg))
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// page reads one page, fresh, with a page GET (never a query: seed 002's
// "Lock verification MUST re-read the page").
func (s *Source) page(ctx context.Context, op, id string) (*model.Task, error) {
	t, _, err := s.pageRaw(ctx, op, id)
	return t, err
}

// keyShape is the task key Notion prints for a unique_id (TASK-3, or 3
// without a prefix).
var keyShape = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:([A-Za-z][A-Za-z0-9_]*)-)?([0-9]{1,9})$`) })

// resolve turns the task key list and get print (task_id, TASK-3) into
// the page id, by a query on the unique_id property; a page id passes as
// it is. A key in another prefix, or no unique_id property, is not found.
func (s *Source) resolve(ctx context.Context, op, id string) (string, error) {
	m := keyShape().FindStringSubmatch(strings.TrimSpace(id))
	if _, err := uuid.Parse(id); err == nil || m == nil || s.m.Key == "" {
		return id, nil
	}
	n, _ := strconv.Atoi(m[2])
	found, err := s.query(ctx, op, &notionapi.PropertyFilter{Property: s.m.Key, UniqueId: &notionapi.UniqueIdFilterCondition{Equals: &n}})
	if err != nil {
		return "", err
	}
	for _, t := range found {
		if strings.EqualFold(t.DisplayKey(), strings.TrimSpace(id)) || m[1] == "" {
			return t.ID, nil
		}
	}
	return "", sources.NotFound(op, id)
}

// pageRaw is page with the page as Notion sent it.
func (s *Source) pageRaw(ctx context.Context, op, id string) (*model.Task, *page, error) {
	if _, err := uuid.Parse(id); err != nil {
		return nil, nil, sources.NotFound(op, id) // Notion's ids are UUIDs: asking would only earn a 400
	}
	p, err := s.api.getPage(ctx, id)
	if err != nil {
		return nil, nil, s.fail(op, id, err)
	}
	if p.trashed {
		return nil, nil, trashed{sources.NotFound(op, id)}
	}
	if !sameID(p.dataSource, s.ds) {
		return nil, nil, sources.NotFound(op, id) // in another data source
	}
	return decodeTask(&s.m, s.name, &p.Page), p, nil
}

// trashed is the not-found of a page Notion still has, in the trash: to a
// reader the task is gone; to its holder the claim has ended.
type trashed struct{ error }

func (e trashed) Unwrap() error { return e.error }

// update writes a patch and returns the page as Notion answers it. It is
// sent once: after a failure the caller re-reads and decides.
func (s *Source) update(ctx context.Context, op, id string, p patch) (*model.Task, error) {
	t, err := s.write(ctx, id, p)
	return t, s.failOrNil(op, id, err)
}

// write sends a page update once and returns Notion's error as it is, for
// the caller to judge with ambiguous.
func (s *Source) write(ctx context.Context, id string, p patch) (*model.Task, error) {
	res, err := s.api.updatePage(ctx, id, s.m.fit(p))
	if err != nil {
		return nil, err
	}
	return decodeTask(&s.m, s.name, &res.Page), nil
}

func (s *Source) failOrNil(op, id string, err error) error {
	if err == nil {
		return nil
	}
	return s.fail(op, id, err)
}

// query returns every page the filter selects.
func (s *Source) query(ctx context.Context, op string, filter notionapi.Filter) ([]*model.Task, error) {
	var out []*model.Task
	err := s.api.queryPages(ctx, s.ds, pageQuery{Filter: filter}, func(p *page) bool {
		if !p.trashed {
			out = append(out, decodeTask(&s.m, s.name, &p.Page))
		}
		return true
	})
	if err != nil {
		return nil, s.fail(op, "", err)
	}
	return out, nil
}

// Get reads one task with its history: the hand-off history property when
// the schema has one, and the comments on the page, an action kept in
// both once. Without the Read comments capability the comments are left
// out and the history says why.
func (s *Source) Get(ctx context.Context, id string) (*model.Task, error) {
	ctx, done := s.begin(ctx)
	defer done()
	id, err := s.resolve(ctx, "get", id)
	if err != nil {
		return nil, err
	}
	t, err := s.page(ctx, "get", id)
	if err != nil {
		return nil, err
	}
	mark := reviewMark(t)
	notes, err := s.comments(ctx, id)
	var events []model.Event
	switch {
	case forbidden(err):
		events = []model.Event{noComments("read", err)}
	case err != nil:
		return nil, err
	}
	for _, n := range notes {
		events = append(events, n.Event)
	}
	more := t.EditMore()
	more.History = model.MergeHistory(more.History, events)
	more.ReviewBy = reviewBy(t, mark, notes)
	return t, nil
}

// forbidden reports a 403: the integration lacks a capability.
func forbidden(err error) bool {
	var ae *apiError
	var me *model.Error
	return errors.As(err, &ae) && ae.Status == http.StatusForbidden ||
		errors.As(err, &me) && me.Code == model.CodeMisconfigured && strings.Contains(me.Msg, "(403 ")
}

// noComments is the history entry that stands for comments the
// integration may not read or post.
func noComments(what string, err error) model.Event {
	return model.Event{At: time.Now(), Actor: "claimdeck", Action: "history-unavailable",
		Detail: fmt.Sprintf("the integration may not %s comments (turn on the comment capabilities in Notion's integration settings): %v", what, err)}
}

// Create adds a queued task. Notion chooses the page id. A create is sent
// once: when its answer is lost, the page it may have made is looked for
// by its create key before it is sent again.
func (s *Source) Create(ctx context.Context, n sources.NewTask) (*model.Task, error) {
	if err := n.Check("create"); err != nil {
		return nil, err
	}
	const op = "create"
	ctx, done := s.begin(ctx)
	defer done()
	if strings.TrimSpace(n.Title) == "" {
		return nil, model.Errorf(model.CodeMisconfigured, op, "", "a task needs a title")
	}
	if n.Parent != "" {
		// Caps.Subtasks is false: refuse rather than drop the relation.
		return nil, model.Errorf(model.CodeMisconfigured, op, "", "this Notion source does not create sub-tasks")
	}
	p := patch{}
	p.title(s.m.Title, n.Title)
	if n.Description != "" {
		p.text(s.m.Description, n.Description)
	}
	status := s.m.States[model.StateQueued]
	if n.Parked {
		// The skill's Backlog option (TaskStatus.swift), title case as
		// Notion matches it; a database without one parks it as Blocked.
		status = s.m.States[model.StateBlocked]
		if _, ok := s.m.Also["backlog"]; ok {
			status = "Backlog"
		}
	}
	p.option(s.m.Status, status)
	if n.Priority != 0 {
		p.priority(&s.m, n.Priority)
	}
	if n.Class != 0 {
		p.class(&s.m, n.Class)
	}
	p.option(s.m.HandoffStatus, "available")
	key := uuid.NewString()
	p.text(s.m.CreateKey, key)
	for attempt := 1; ; attempt++ {
		res, err := s.api.createPage(ctx, s.ds, s.m.fit(p))
		if err == nil {
			return decodeTask(&s.m, s.name, &res.Page), nil
		}
		if !ambiguous(ctx, err) || attempt > s.api.retry.attempts {
			return nil, s.fail(op, "", err)
		}
		if s.m.CreateKey == "" {
			return nil, model.Errorf(model.CodeAPIError, op, "", "the task may or may not have been created (%v): look in the database before creating it again; a rich_text property %q would let claimdeck check by itself",
				s.fail(op, "", err), "Create Key")
		}
		var found *model.Task
		byKey := pageQuery{Filter: &notionapi.PropertyFilter{Property: s.m.CreateKey, RichText: &notionapi.TextFilterCondition{Equals: key}}}
		if err := s.api.queryPages(ctx, s.ds, byKey, func(pg *page) bool {
			found = decodeTask(&s.m, s.name, &pg.Page)
			return false
		}); err != nil {
			return nil, s.fail(op, "", err)
		}
		if found != nil {
			return found, nil
		}
		if err := s.waitAfter(ctx, attempt, err); err != nil {
			return nil, s.fail(op, "", err)
		}
	}
}

// ambiguous reports a failed write that may have landed or may be worth
// sending again after a re-read: 409, 429, 5xx, a timeout or a broken
// connection, while the command still has time.
func ambiguous(ctx context.Context, err error) bool {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.Status == http.StatusConflict || retryable(ae.Status)
	}
	return ctx.Err() == nil
}

// waitAfter waits before a write is tried again: the Retry-After of a 429,
// else a backoff; within the command's budget.
func (s *Source) waitAfter(ctx context.Context, attempt int, err error) error {
	var ae *apiError
	errors.As(err, &ae)
	wait := s.api.retry.backoff(attempt, ae)
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
		return newTimeout("Notion asked to wait %s, longer than the %s left of the command's time budget (%s): %v",
			wait.Round(time.Second), time.Until(dl).Round(time.Second), s.api.budget, err)
	}
	if err := sleep(ctx, wait); err != nil {
		return s.api.ctxError(ctx, err)
	}
	return nil
}

func asError(err error, target **model.Error) bool { return errors.As(err, target) }
