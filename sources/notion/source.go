package notion

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

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
	// Preset is ntask (seed 002), claim-protocol (seed 000) or mesh-handoff
	// (seed 001); Mapping, when set, replaces it.
	Preset  string
	Mapping *Mapping
	// HandoffQueueDB is seed 001's Handoff Queue database; each hand-off
	// adds a record to it. Optional.
	HandoffQueueDB string
	// BaseURL is where requests go (default https://api.notion.com): an
	// emulator, a proxy or a recording.
	BaseURL string
	// Rate is requests per second per token (default 3), shared by every
	// source using the token. Negative means no limit (local emulators).
	Rate float64
	// Lease is the default lease (seed 002: 20 minutes).
	Lease time.Duration
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
	// Timeout bounds one request, retries excluded (default 30 s).
	Timeout time.Duration
	// Retries is how many times a 429/5xx/529 is tried again (default 5);
	// RetryBase is the first backoff (default 500 ms), doubling each time.
	Retries   int
	RetryBase time.Duration
	// RetryMax caps one wait, Retry-After included (default 1 min).
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
	return fmt.Sprintf("notion source %q (database %s, schema %s, token %s)", c.Name, c.DatabaseID, c.schemaName(), token)
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
	m       Mapping
	client  *notionapi.Client
	db      notionapi.DatabaseID
	queue   *handoffQueue
	lease   time.Duration
	settle  time.Duration
	overlap time.Duration
	every   time.Duration
	redact  func(string) string
	limit   *limiter
	// claiming holds the ids this process is claiming right now: agents
	// sharing a source never race each other for one task.
	claiming sync.Map
}

var (
	_ sources.Source    = (*Source)(nil)
	_ sources.Commenter = (*Source)(nil)
	_ sources.Editor    = (*Source)(nil)
)

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
	if cfg.Mapping != nil {
		m = *cfg.Mapping
	} else {
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
	rate := cfg.Rate
	if rate == 0 {
		rate = 3
	}
	rt := &transport{base: u, next: next, limit: limiterFor(cfg.Token, rate), retry: retryPolicy{
		attempts: 1 + orInt(cfg.Retries, 5), base: orDur(cfg.RetryBase, 500*time.Millisecond), max: orDur(cfg.RetryMax, time.Minute),
	}}
	token := cfg.Token
	s := &Source{
		limit: rt.limit,
		name:  cfg.Name, m: m, db: notionapi.DatabaseID(cfg.DatabaseID),
		client: notionapi.NewClient(notionapi.Token(token),
			notionapi.WithHTTPClient(&http.Client{Transport: rt, Timeout: orDur(cfg.Timeout, 30*time.Second)}),
			notionapi.WithRetry(1)),
		lease: orDur(cfg.Lease, model.DefaultPolicy().Lease), settle: orDur(cfg.Settle, time.Second),
		overlap: orDur(cfg.Overlap, 2*time.Minute), every: orDur(cfg.ReconcileEvery, 5*time.Minute),
		redact: func(s string) string { return model.RedactAll(s, token) },
	}
	if cfg.Settle < 0 {
		s.settle = 0
	}
	db, err := s.client.Database.Get(ctx, s.db)
	if err != nil {
		return nil, s.fail(op, "", err)
	}
	if err := s.m.bind(db.Properties); err != nil {
		return nil, model.Errorf(model.CodeMisconfigured, op, "", "source %s, database %s: %v", cfg.Name, cfg.DatabaseID, err)
	}
	if cfg.HandoffQueueDB != "" {
		if s.queue, err = s.openQueue(ctx, notionapi.DatabaseID(cfg.HandoffQueueDB)); err != nil {
			return nil, err
		}
	}
	return s, nil
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

// Caps: claims are verified by re-reading, not atomic.
func (s *Source) Caps() sources.Caps { return sources.Caps{AtomicClaim: false} }

// Close releases nothing: the client holds no connections of its own.
func (s *Source) Close() error { return nil }

// fail turns a client error into a protocol error with a clear message
// and without the token. id is empty for database-level calls.
func (s *Source) fail(op, id string, err error) error {
	var me *model.Error
	if errors.As(err, &me) {
		return err
	}
	code, msg := model.CodeAPIError, ""
	var apiErr *notionapi.Error
	var rateErr *notionapi.RateLimitedError
	switch {
	case errors.As(err, &apiErr) && apiErr.Status == http.StatusUnauthorized:
		code, msg = model.CodeMisconfigured, "Notion rejected the integration token (401 unauthorized): check the token or token_env"
	case errors.As(err, &apiErr) && apiErr.Status == http.StatusForbidden:
		code, msg = model.CodeMisconfigured, "the integration lacks this capability (403 "+string(apiErr.Code)+"): "+apiErr.Message
	case errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound && id == "":
		code, msg = model.CodeMisconfigured, fmt.Sprintf("database %s not found or not shared with the integration (404 object_not_found): share it with the integration in Notion", s.db)
	case errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound:
		msg = "no such task (404 object_not_found)"
	case errors.As(err, &apiErr):
		msg = fmt.Sprintf("Notion answered %d %s: %s", apiErr.Status, apiErr.Code, apiErr.Message)
	case errors.As(err, &rateErr):
		msg = "Notion kept answering 429 rate_limited; gave up after the retries"
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		msg = "the request to Notion timed out"
	case errors.Is(err, context.Canceled):
		msg = "canceled"
	default:
		msg = err.Error()
	}
	return model.Errorf(code, op, id, "%s", s.redact(msg))
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// page reads one page, fresh, with a page GET (never a query: seed 002's
// "Lock verification MUST re-read the page").
func (s *Source) page(ctx context.Context, op, id string) (*model.Task, error) {
	if strings.TrimSpace(id) == "" || strings.ContainsAny(id, "/?#") {
		return nil, sources.NotFound(op, id)
	}
	p, err := s.client.Page.Get(ctx, notionapi.PageID(id))
	if err != nil {
		return nil, s.fail(op, id, err)
	}
	if p.Archived || !s.inDatabase(p) {
		return nil, model.Errorf(model.CodeAPIError, op, id, "no such task (the page is in the trash or in another database)")
	}
	return decodeTask(&s.m, s.name, p), nil
}

func (s *Source) inDatabase(p *notionapi.Page) bool {
	return strings.ReplaceAll(string(p.Parent.DatabaseID), "-", "") == strings.ReplaceAll(string(s.db), "-", "")
}

// update writes a patch and returns the page as Notion answers it.
func (s *Source) update(ctx context.Context, op, id string, p patch) (*model.Task, error) {
	res, err := s.client.Page.Update(ctx, notionapi.PageID(id), &notionapi.PageUpdateRequest{Properties: notionapi.Properties(p)})
	if err != nil {
		return nil, s.fail(op, id, err)
	}
	return decodeTask(&s.m, s.name, res), nil
}

// query returns every page the filter selects, 100 per request.
func (s *Source) query(ctx context.Context, op string, filter notionapi.Filter) ([]*model.Task, error) {
	var out []*model.Task
	req := &notionapi.DatabaseQueryRequest{Filter: filter, PageSize: 100}
	for {
		res, err := s.client.Database.Query(ctx, s.db, req)
		if err != nil {
			return nil, s.fail(op, "", err)
		}
		for i := range res.Results {
			if !res.Results[i].Archived {
				out = append(out, decodeTask(&s.m, s.name, &res.Results[i]))
			}
		}
		if !res.HasMore || res.NextCursor == "" {
			return out, nil
		}
		req.StartCursor = res.NextCursor
	}
}

// Get reads one task with its history: the hand-off history property when
// the schema has one, else claimdeck's comments on the page.
func (s *Source) Get(ctx context.Context, id string) (*model.Task, error) {
	t, err := s.page(ctx, "get", id)
	if err != nil || s.m.History != "" {
		return t, err
	}
	t.History, err = s.comments(ctx, id)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// Create adds a queued task. Notion chooses the page id.
func (s *Source) Create(ctx context.Context, n sources.NewTask) (*model.Task, error) {
	if err := n.Check("create"); err != nil {
		return nil, err
	}
	const op = "create"
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
	p.option(s.m.Status, s.m.States[model.StateQueued])
	if n.Priority != 0 {
		p.priority(&s.m, n.Priority)
	}
	if n.Class != 0 {
		p.class(&s.m, n.Class)
	}
	p.option(s.m.HandoffStatus, "available")
	res, err := s.client.Page.Create(ctx, &notionapi.PageCreateRequest{
		Parent:     notionapi.Parent{Type: notionapi.ParentTypeDatabaseID, DatabaseID: s.db},
		Properties: notionapi.Properties(p),
	})
	if err != nil {
		return nil, s.fail(op, "", err)
	}
	return decodeTask(&s.m, s.name, res), nil
}

func asError(err error, target **model.Error) bool { return errors.As(err, target) }
