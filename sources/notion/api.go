package notion

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jomei/notionapi"

	"github.com/claimdeck/claimdeck/model"
)

// The Notion-Version values a source may send. VersionCurrent (the
// default) is Notion's current version: "archived" is gone from pages,
// blocks, databases and data sources for "in_trash", and appending
// children takes a position object
// (https://developers.notion.com/docs/upgrade-guide-2026-03-11).
// VersionTitleOnly is the next one; of its seven changes claimdeck meets
// three, and sends the same requests under both versions
// (https://developers.notion.com/guides/get-started/upgrade-guide-2026-12-01):
// Search and Query a data source answer only the title unless
// filter_properties names more — every query names the properties the
// source reads (api.props); a status equals stops matching status groups —
// claimdeck filters on option names only, and Open refuses a status word
// that names a group and no option (Mapping.bind); a person's name may be
// null — a holder without one is shown by their user id (assigneeName).
// Its Markdown changes (v1, replace_content_range, insert_content.after)
// and Search do not concern claimdeck, which calls neither endpoint.
// VersionDataSources is the first with data sources; older ones refuse a
// database as soon as a person adds a second data source to it
// (https://developers.notion.com/docs/upgrade-guide-2025-09-03), and it
// stays available for a workspace that pins it.
// jomei/notionapi sends 2022-06-28 and has no data source calls (its issue
// #195, PR #196 unmerged), so every request goes through api below, which
// keeps notionapi's page and property types.
const (
	VersionCurrent     = "2026-03-11"
	VersionTitleOnly   = "2026-12-01"
	VersionDataSources = "2025-09-03"
)

// CheckVersion says whether v (empty: the current one) is a version this
// source speaks, and which: the one rule for a configuration's
// api_version, which Open applies and a configuration check may call.
func CheckVersion(v string) (string, error) {
	switch v {
	case "":
		return VersionCurrent, nil
	case VersionCurrent, VersionTitleOnly, VersionDataSources:
		return v, nil
	}
	return "", fmt.Errorf("api_version %q is not a Notion API version claimdeck speaks: use %s (the default) or %s (%s for a workspace that pins it)",
		v, VersionCurrent, VersionTitleOnly, VersionDataSources)
}

// apiError is Notion's error object with what notionapi.Error drops: the
// request_id Notion's support traces a request by, additional_data, and
// the Retry-After of a 429.
type apiError struct {
	Status     int             `json:"status"`
	Code       string          `json:"code"`
	Message    string          `json:"message"`
	RequestID  string          `json:"request_id"`
	Additional json.RawMessage `json:"additional_data"`
	RetryAfter time.Duration   `json:"-"`
}

func (e *apiError) Error() string {
	limit := ""
	if r := e.limit(); r != "" {
		limit = " [limit reached: " + r + "]"
	}
	return fmt.Sprintf("Notion answered %d %s%s: %s (request_id %s)", e.Status, e.Code, limit, e.Message, orDash(e.RequestID))
}

// limit is which of Notion's rate limits a 429 says was exceeded
// (additional_data.rate_limit_reason), "" when it does not say.
func (e *apiError) limit() string {
	if e.Status != http.StatusTooManyRequests || len(e.Additional) == 0 {
		return ""
	}
	var d struct {
		Reason string `json:"rate_limit_reason"`
	}
	_ = json.Unmarshal(e.Additional, &d)
	return d.Reason
}

// ErrBlockLimit is Notion refusing to create a block (a task's page, a
// comment's is not one) because a Free workspace with more than one member
// has used its 1,000 lifetime blocks and its grace period is over.
// Deleting does not give blocks back; reads, edits and claims of existing
// tasks go on. The next step is the workspace owner's: upgrade the plan,
// or connect with a personal access token, to which the limit does not
// apply (https://developers.notion.com/reference/workspace-block-limits).
var ErrBlockLimit = errors.New("the Notion workspace reached the Free plan's block limit, so no task can be created: " +
	"reads, edits and claims of existing tasks still work; to create tasks, upgrade the workspace's plan or connect with a personal access token " +
	"(https://developers.notion.com/reference/workspace-block-limits)")

// blockLimit reports whether e is the refusal of a block-creating request
// past the workspace's block limit: Notion's answer names the block limit.
func blockLimit(e *apiError) bool {
	return e.Status >= 400 && e.Status < 500 && e.Status != http.StatusTooManyRequests &&
		strings.Contains(strings.ToLower(e.Message), "block limit")
}

// timeoutError says which of the two clocks ran out.
type timeoutError struct{ msg string }

func (e *timeoutError) Error() string     { return e.msg }
func (e *timeoutError) Timeout() bool     { return true }
func (e *timeoutError) Unwrap() error     { return context.DeadlineExceeded }
func newTimeout(f string, a ...any) error { return &timeoutError{fmt.Sprintf(f, a...)} }

var (
	errAttemptTimeout = errors.New("request timeout")
	errBudgetTimeout  = errors.New("command budget")
)

// api sends requests to Notion. Reads (GETs and queries) are retried on
// 429, 5xx and 529 and on a request that timed out; writes never are:
// the caller re-reads and decides, since a write that failed may have
// landed (see claim, settled and postNote). Every request first waits out the
// pauses Notion asked for on its token and its workspace (throttle).
type api struct {
	hc      *http.Client
	token   string
	version string // the Notion-Version sent
	// props are the ids of the page properties the source reads, sent as
	// filter_properties with every query that names none itself.
	props   []string
	base    string // the configured base_url, as errors name it
	retry   retryPolicy
	gate    throttle
	timeout time.Duration // per request
	budget  time.Duration // per command
}

// idempotent reports whether a request may be sent again blindly.
func idempotent(method, path string) bool {
	path, _, _ = strings.Cut(path, "?")
	return method == http.MethodGet || (method == http.MethodPost && strings.HasSuffix(path, "/query"))
}

// do sends one call and decodes the answer into out.
func (a *api) do(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	for attempt := 1; ; attempt++ {
		actx := ctx
		if attempt > 1 {
			actx = context.WithValue(ctx, slotKey{}, nil) // a retry queues at the limiter
		}
		if err := a.gate.wait(ctx); err != nil {
			return err
		}
		err := a.once(actx, method, path, body, out)
		if err == nil {
			return nil
		}
		var ae *apiError
		var te *timeoutError
		if errors.As(err, &ae) && ae.Status == http.StatusTooManyRequests {
			a.gate.hold(ae)
		}
		again := errors.As(err, &ae) && retryable(ae.Status) || ae == nil && errors.As(err, &te) && ctx.Err() == nil
		if !idempotent(method, path) || !again || attempt >= a.retry.attempts {
			return err
		}
		wait := a.retry.backoff(attempt, ae)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			if ae != nil && ae.RetryAfter > 0 {
				return newTimeout("Notion asked to wait %s (Retry-After%s), longer than the %s left of the command's time budget (%s): %v",
					ae.RetryAfter, forLimit(ae.limit()), time.Until(dl).Round(time.Second), a.budget, err)
			}
			return err
		}
		if err := sleep(ctx, wait); err != nil {
			return a.ctxError(ctx, err)
		}
	}
}

// ctxError names the clock that ended ctx.
func (a *api) ctxError(ctx context.Context, err error) error {
	switch context.Cause(ctx) {
	case errBudgetTimeout:
		return newTimeout("the command's time budget (%s) ran out", a.budget)
	case errAttemptTimeout:
		return newTimeout("one request took longer than the per-request timeout (%s)", a.timeout)
	}
	return err
}

func (a *api) once(ctx context.Context, method, path string, body []byte, out any) error {
	actx, cancel := context.WithTimeoutCause(ctx, a.timeout, errAttemptTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(actx, method, "https://api.notion.com"+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Notion-Version", cmp.Or(probing(ctx), a.version))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := a.hc.Do(req)
	if err != nil {
		if actx.Err() != nil {
			return a.ctxError(actx, err)
		}
		// net/http names the URL the request was built with; the transport
		// sent it to base_url, which is what the reader must check.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = fmt.Errorf("%s %s%s: %w", method, model.RedactURL(a.base), path, uerr.Err)
		}
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return a.ctxError(actx, err)
	}
	if res.StatusCode != http.StatusOK {
		e := &apiError{}
		_ = json.Unmarshal(raw, e)
		e.Status = res.StatusCode
		if s, err := strconv.Atoi(strings.TrimSpace(res.Header.Get("Retry-After"))); err == nil && s >= 0 {
			e.RetryAfter = time.Duration(s) * time.Second
		}
		return e
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decoding Notion's answer to %s %s: %w", method, path, err)
	}
	return nil
}

// backoff honours Retry-After in full (Notion sends more than a minute
// under load), plus a spread (see retrySpread) so that the clients a 429 storm
// sent back together do not return together; otherwise it waits
// base·2^(attempt-1) with jitter, never over max.
func (r retryPolicy) backoff(attempt int, e *apiError) time.Duration {
	if e != nil && e.RetryAfter > 0 {
		return e.RetryAfter + retrySpread(e.RetryAfter)
	}
	d := r.base << (attempt - 1)
	if d <= 0 || d > r.max {
		d = r.max
	}
	return d/2 + rand.N(d/2+1)
}

// page is a page as claimdeck reads it: notionapi's page, plus what
// notionapi does not know — the data source parent and in_trash.
type page struct {
	notionapi.Page
	trashed    bool
	dataSource string
}

func (p *page) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &p.Page); err != nil {
		return err
	}
	var extra struct {
		InTrash bool `json:"in_trash"`
		Parent  struct {
			DataSourceID string `json:"data_source_id"`
		} `json:"parent"`
	}
	if err := json.Unmarshal(b, &extra); err != nil {
		return err
	}
	p.trashed = p.Archived || extra.InTrash
	p.dataSource = extra.Parent.DataSourceID
	return nil
}

// listOf is one answer of a paginated list endpoint.
type listOf[T any] struct {
	Results    []T    `json:"results"`
	HasMore    bool   `json:"has_more"`
	NextCursor string `json:"next_cursor"`
}

// dataSourceRef is one entry of a database's data_sources list.
type dataSourceRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// schema is a data source's title and properties, and each property's id
// by name: notionapi's relation config drops its id.
type schema struct {
	ID         string                    `json:"id"`
	Properties notionapi.PropertyConfigs `json:"properties"`
	ids        map[string]string
}

func (s *schema) UnmarshalJSON(b []byte) error {
	type plain schema
	if err := json.Unmarshal(b, (*plain)(s)); err != nil {
		return err
	}
	var ids struct {
		Properties map[string]struct {
			ID string `json:"id"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &ids); err != nil {
		return err
	}
	s.ids = make(map[string]string, len(ids.Properties))
	for name, p := range ids.Properties {
		s.ids[name] = p.ID
	}
	return nil
}

func (a *api) getPage(ctx context.Context, id string) (*page, error) {
	var p page
	return &p, a.do(ctx, http.MethodGet, "/v1/pages/"+id, nil, &p)
}

func (a *api) updatePage(ctx context.Context, id string, props notionapi.Properties) (*page, error) {
	var p page
	return &p, a.do(ctx, http.MethodPatch, "/v1/pages/"+id, map[string]any{"properties": props}, &p)
}

// createPage makes a page in a data source: from 2025-09-03 the parent is
// {"type":"data_source_id","data_source_id":…}
// (https://developers.notion.com/reference/post-page).
func (a *api) createPage(ctx context.Context, dataSource string, props notionapi.Properties) (*page, error) {
	var p page
	parent := map[string]string{"type": "data_source_id", "data_source_id": dataSource}
	return &p, a.do(ctx, http.MethodPost, "/v1/pages", map[string]any{"parent": parent, "properties": props}, &p)
}

// pageQuery is what a data source query asks for beside its cursor
// (https://developers.notion.com/reference/query-a-data-source).
type pageQuery struct {
	Filter notionapi.Filter
	Sorts  []notionapi.SortObject
	// Only names the ids of the properties the answer carries
	// (filter_properties); none means those the source reads (api.props).
	Only []string
}

// queryPages runs a data source query, 100 pages per request, until each
// returns false or the pages run out; ErrIncomplete when Notion cut the
// answer short and the query could not be split.
func (a *api) queryPages(ctx context.Context, dataSource string, q pageQuery, each func(*page) bool) error {
	return scanAll(ctx, a, dataSource, q, each)
}

// trashMark is a query result decoded only as far as counting needs.
type trashMark struct {
	ID          string    `json:"id"`
	CreatedTime time.Time `json:"created_time"`
	Archived    bool      `json:"archived"`
	InTrash     bool      `json:"in_trash"`
}

func (p *trashMark) rowID() string         { return p.ID }
func (p *trashMark) rowCreated() time.Time { return p.CreatedTime }
func (p *page) rowID() string              { return string(p.ID) }
func (p *page) rowCreated() time.Time      { return p.CreatedTime }

// countPages counts the pages a filter selects, asking for one property
// of each (titleID) and decoding none: Notion has no count endpoint, so
// this still reads every page, 100 a request.
func (a *api) countPages(ctx context.Context, dataSource, titleID string, filter notionapi.Filter) (int, error) {
	n := 0
	err := scanAll(ctx, a, dataSource, pageQuery{Filter: filter, Only: []string{titleID}}, func(p *trashMark) bool {
		if !p.Archived && !p.InTrash {
			n++
		}
		return true
	})
	return n, err
}

// ErrIncomplete is what a query whose answer Notion cut at its per-query
// result limit returns when the query cannot be split: its pages are not
// the whole list, and nothing may treat them as if they were.
var ErrIncomplete = errors.New("Notion cut the query at its per-query result limit (request_status incomplete, query_result_limit_reached)")

// row is a query result as scanAll splits queries by.
type row[T any] interface {
	*T
	rowID() string
	rowCreated() time.Time
}

// oldestFirst is the order a split query reads in: created_time never
// changes, so a window starting at a created_time misses nothing.
var oldestFirst = []notionapi.SortObject{{Timestamp: notionapi.TimestampCreated, Direction: notionapi.SortOrderASC}}

// scanAll reads every page q selects. One Notion query answers at most
// 10,000 pages and then says so (request_status incomplete); an unsorted
// query is therefore read oldest first in created_time windows, each a
// fresh query from the last page's created_time on, pages seen twice at a
// window's edge given once — as Notion's SDK does
// (https://developers.notion.com/guides/data-apis/query-large-data-sources).
// A sorted query, or a window that cannot move on (more pages created in
// one instant than a query answers), ends in ErrIncomplete.
func scanAll[T any, P row[T]](ctx context.Context, a *api, dataSource string, q pageQuery, each func(P) bool) error {
	if len(q.Sorts) > 0 {
		incomplete, err := scanPages(ctx, a, dataSource, q, func(p *T) bool { return each(P(p)) })
		if err == nil && incomplete {
			err = ErrIncomplete
		}
		return err
	}
	seen := map[string]bool{}
	var from time.Time
	for {
		w := q
		w.Sorts, w.Filter = oldestFirst, createdFrom(q.Filter, from)
		var last time.Time
		stopped := false
		incomplete, err := scanPages(ctx, a, dataSource, w, func(t *T) bool {
			p := P(t)
			last = p.rowCreated()
			if seen[p.rowID()] {
				return true
			}
			seen[p.rowID()] = true
			stopped = !each(p)
			return !stopped
		})
		if err != nil || stopped || !incomplete {
			return err
		}
		if !last.After(from) {
			return fmt.Errorf("%w: more pages were created at %s than one query answers; narrow the query", ErrIncomplete, last.UTC().Format(time.RFC3339))
		}
		from = last
	}
}

// createdFrom adds a created_time lower bound to filter; the zero time
// adds none. An "and" filter takes the bound as one more condition, so
// the nesting Notion allows (two levels) is not exceeded by it.
func createdFrom(filter notionapi.Filter, from time.Time) notionapi.Filter {
	if from.IsZero() {
		return filter
	}
	bound := &notionapi.TimestampFilter{Timestamp: notionapi.TimestampCreated, CreatedTime: &notionapi.DateFilterCondition{OnOrAfter: notionDate(from)}}
	switch f := filter.(type) {
	case nil:
		return bound
	case notionapi.AndCompoundFilter:
		return append(slices.Clone(f), bound)
	}
	return notionapi.AndCompoundFilter{filter, bound}
}

// scanPages follows one query's cursors, reporting whether any answer
// said the result was cut short (request_status incomplete).
func scanPages[T any](ctx context.Context, a *api, dataSource string, q pageQuery, each func(*T) bool) (incomplete bool, err error) {
	req := map[string]any{"page_size": 100}
	if q.Filter != nil {
		req["filter"] = q.Filter
	}
	if len(q.Sorts) > 0 {
		req["sorts"] = q.Sorts
	}
	// Every query names the properties it reads: under 2026-12-01 a query
	// without filter_properties answers the title alone, and under any
	// version a narrower answer is a cheaper one
	// (https://developers.notion.com/guides/get-started/upgrade-guide-2026-12-01).
	only := q.Only
	if len(only) == 0 {
		only = a.props
	}
	path := "/v1/data_sources/" + dataSource + "/query"
	if len(only) > 0 {
		path += "?" + url.Values{"filter_properties": only}.Encode()
	}
	for {
		var res struct {
			listOf[T]
			RequestStatus struct {
				Type string `json:"type"`
			} `json:"request_status"`
		}
		if err := a.do(ctx, http.MethodPost, path, req, &res); err != nil {
			return incomplete, err
		}
		incomplete = incomplete || res.RequestStatus.Type == "incomplete"
		for i := range res.Results {
			if !each(&res.Results[i]) {
				return incomplete, nil
			}
		}
		if !res.HasMore || res.NextCursor == "" {
			return incomplete, nil
		}
		req["start_cursor"] = res.NextCursor
	}
}

// dataSources lists a database's data sources
// (https://developers.notion.com/reference/database-retrieve).
func (a *api) dataSources(ctx context.Context, database string) ([]dataSourceRef, error) {
	var db struct {
		DataSources []dataSourceRef `json:"data_sources"`
	}
	return db.DataSources, a.do(ctx, http.MethodGet, "/v1/databases/"+database, nil, &db)
}

func (a *api) schema(ctx context.Context, dataSource string) (*schema, error) {
	var s schema
	return &s, a.do(ctx, http.MethodGet, "/v1/data_sources/"+dataSource, nil, &s)
}

func (a *api) comments(ctx context.Context, pageID, cursor string) (*listOf[notionapi.Comment], error) {
	var l listOf[notionapi.Comment]
	path := "/v1/comments?page_size=100&block_id=" + pageID
	if cursor != "" {
		path += "&start_cursor=" + cursor
	}
	return &l, a.do(ctx, http.MethodGet, path, nil, &l)
}

func (a *api) comment(ctx context.Context, pageID string, text []notionapi.RichText) error {
	return a.do(ctx, http.MethodPost, "/v1/comments", map[string]any{"parent": map[string]string{"page_id": pageID}, "rich_text": text}, nil)
}
