package notionemu

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/claimdeck/claimdeck/sources/webserver"
)

// The endpoints the emulator answers, as method and path patterns. Stats
// counts requests under these names.
const (
	EndpointDatabaseRetrieve = "GET /v1/databases/{id}"
	EndpointDatabaseQuery    = "POST /v1/databases/{id}/query"
	EndpointPageRetrieve     = "GET /v1/pages/{id}"
	EndpointPropertyRetrieve = "GET /v1/pages/{id}/properties/{property}"
	EndpointPageCreate       = "POST /v1/pages"
	EndpointPageUpdate       = "PATCH /v1/pages/{id}"
	EndpointCommentCreate    = "POST /v1/comments"
	EndpointCommentList      = "GET /v1/comments"
	// The data source endpoints exist from Notion-Version 2025-09-03 on.
	EndpointDataSourceRetrieve = "GET /v1/data_sources/{id}"
	EndpointDataSourceQuery    = "POST /v1/data_sources/{id}/query"
	// EndpointUnknown counts requests for URLs the emulator does not have.
	EndpointUnknown = ""
)

// The Notion-Version values the emulator speaks. NotionVersion sees a
// database and its one data source as one object and refuses a database
// with several; DataSourceVersion splits them
// (https://developers.notion.com/docs/upgrade-guide-2025-09-03);
// TrashVersion also drops "archived" for "in_trash"
// (https://developers.notion.com/page/changelog, 2026-03-11).
// TitleOnlyVersion changes seven behaviours, of which the emulator serves
// those claimdeck meets
// (https://developers.notion.com/guides/get-started/upgrade-guide-2026-12-01):
// a data source query answers only the title property unless
// filter_properties names more (query), a status equals stops matching
// status groups, which the group operators match instead (compileStatus),
// and a person's name may be null (peopleJSON). The emulator serves no
// search and no markdown endpoint, so the guide's Search, Markdown v1 and
// replace_content_range changes answer as any unknown URL does.
const (
	NotionVersion     = "2022-06-28"
	DataSourceVersion = "2025-09-03"
	TrashVersion      = "2026-03-11"
	TitleOnlyVersion  = "2026-12-01"
)

// StatusGroupBeta is the Notion-Beta header value that lets a version
// before TitleOnlyVersion filter a status property by its groups
// (https://developers.notion.com/guides/get-started/upgrade-guide-2026-12-01,
// "Status filters").
const StatusGroupBeta = "status-group-filters-2026-10-06"

// betas lists the request's Notion-Beta values (comma-separated, possibly
// repeated headers).
func betas(r *http.Request) []string {
	var out []string
	for _, h := range r.Header.Values("Notion-Beta") {
		for v := range strings.SplitSeq(h, ",") {
			if v = strings.TrimSpace(v); v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}

// dataSources reports whether version is 2025-09-03 or later.
func dataSources(version string) bool { return version >= DataSourceVersion }

// Options configure a Server. The zero value is a server on the wall clock
// with Notion's default rate limit.
type Options struct {
	// Now is the clock for timestamps, rate limiting and relative date
	// filters; nil means time.Now.
	Now func() time.Time
	// RateLimit is the per-token budget; nil means DefaultRateLimit.
	RateLimit *RateLimit
	// WorkspaceLimit is the budget all tokens share (Notion's per-workspace
	// limit); the zero value is none.
	WorkspaceLimit RateLimit
	// QueryResultLimit is the most pages one query answers (default
	// DefaultQueryResultLimit, as Notion).
	QueryResultLimit int
}

// DefaultQueryResultLimit is how many results one data source query
// returns at most, however it is paginated
// (https://developers.notion.com/guides/data-apis/query-large-data-sources:
// "A single data source query returns at most 10,000 results").
const DefaultQueryResultLimit = 10000

// Server is an in-memory Notion workspace served over HTTP. It is safe for
// concurrent use.
type Server struct {
	now     func() time.Time
	mux     *http.ServeMux
	limiter *limiter
	// workspace is the budget every token of the workspace shares.
	workspace *limiter
	faults    faultInjector
	stats     statsRecorder

	mu        sync.Mutex
	bots      map[string]string // integration token → its bot user id
	caps      map[string]Capabilities
	databases map[string]*container // by database id
	sources   map[string]*database  // by data source id
	pages     map[string]*page
	comments  map[string][]*comment // by page id, in creation order
	users     map[string]string     // workspace member id → name (AddUser)
	seq       int
	// conflictWindow is how soon after a write another write to the page
	// answers 409.
	conflictWindow time.Duration
	// resultLimit caps one query's results (QueryResultLimit).
	resultLimit int
	// blockLimit is the Free workspace's block limit (SetBlockLimit).
	blockLimit int
}

// New returns an empty workspace with no tokens and no databases.
func New(opts Options) *Server {
	s := &Server{
		now:       opts.Now,
		mux:       http.NewServeMux(),
		bots:      map[string]string{},
		caps:      map[string]Capabilities{},
		databases: map[string]*container{},
		sources:   map[string]*database{},
		pages:     map[string]*page{},
		comments:  map[string][]*comment{},
		users:     map[string]string{},
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.resultLimit = DefaultQueryResultLimit
	if opts.QueryResultLimit > 0 {
		s.resultLimit = opts.QueryResultLimit
	}
	limit := DefaultRateLimit
	if opts.RateLimit != nil {
		limit = *opts.RateLimit
	}
	s.limiter = newLimiter(limit)
	s.workspace = newLimiter(opts.WorkspaceLimit)
	s.stats.reset()
	routes := map[string]endpoint{
		EndpointDatabaseRetrieve:   s.retrieveDatabase,
		EndpointDatabaseQuery:      s.queryDatabase,
		EndpointPageRetrieve:       s.retrievePage,
		EndpointPropertyRetrieve:   s.retrieveProperty,
		EndpointPageCreate:         s.createPage,
		EndpointPageUpdate:         s.updatePage,
		EndpointCommentCreate:      s.createComment,
		EndpointCommentList:        s.listComments,
		EndpointDataSourceRetrieve: s.retrieveDataSource,
		EndpointDataSourceQuery:    s.queryDataSource,
	}
	for pattern, e := range routes {
		s.mux.Handle(pattern, e)
	}
	return s
}

// SetQueryResultLimit changes how many results one query answers at most
// (at least 1), as a smaller stand-in for Notion's 10,000.
func (s *Server) SetQueryResultLimit(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resultLimit = max(1, n)
}

// AddToken registers an integration token. Requests with any other bearer
// token are answered 401 unauthorized.
func (s *Server) AddToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.bots[token]; !ok {
		s.bots[token] = newID()
	}
}

// CreateDatabase creates a database holding one data source made from
// schema, shared with the given tokens (each added with AddToken first);
// other tokens get 404 for it, as Notion answers for a database not shared
// with an integration. The id returned is the database's; its data source
// has an id of its own (DataSources lists it).
func (s *Server) CreateDatabase(schema DatabaseSchema, sharedWith ...string) (id string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &container{id: newID(), title: schema.Title, created: s.stamp(), shared: map[string]bool{}}
	if schema.ID != "" {
		var ok bool
		if c.id, ok = normalizeID(schema.ID); !ok {
			return "", fmt.Errorf("notionemu: creating database: database id %q is not a UUID", schema.ID)
		}
	}
	if _, taken := s.databases[c.id]; taken {
		return "", fmt.Errorf("notionemu: creating database: id %s already exists", c.id)
	}
	for _, token := range sharedWith {
		if _, ok := s.bots[token]; !ok {
			return "", fmt.Errorf("notionemu: creating database %q: token not added", schema.Title)
		}
		c.shared[token] = true
	}
	schema.ID = ""
	if _, err := s.lockedAddSource(c, schema); err != nil {
		return "", err
	}
	s.databases[c.id] = c
	return c.id, nil
}

// AddDataSource adds a data source made from schema to a database, as a
// person does in Notion with "Add data source"; schema.Title is its name
// and schema.ID, when set, its id. It returns the data source id.
func (s *Server) AddDataSource(databaseID string, schema DatabaseSchema) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, _ := normalizeID(databaseID)
	c, ok := s.databases[id]
	if !ok {
		return "", fmt.Errorf("notionemu: no database %s", databaseID)
	}
	return s.lockedAddSource(c, schema)
}

// DataSources lists a database's data source ids, oldest first.
func (s *Server) DataSources(databaseID string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, _ := normalizeID(databaseID)
	c, ok := s.databases[id]
	if !ok {
		return nil
	}
	out := make([]string, len(c.sources))
	for i, ds := range c.sources {
		out[i] = ds.id
	}
	return out
}

func (s *Server) lockedAddSource(c *container, schema DatabaseSchema) (string, error) {
	ds, err := newDatabase(schema, c.created)
	if err != nil {
		return "", fmt.Errorf("notionemu: creating data source: %w", err)
	}
	if _, taken := s.sources[ds.id]; taken || s.databases[ds.id] != nil || ds.id == c.id {
		return "", fmt.Errorf("notionemu: creating data source: id %s already exists", ds.id)
	}
	ds.container, ds.shared, ds.users = c, c.shared, s.users
	c.sources = append(c.sources, ds)
	s.sources[ds.id] = ds
	return ds.id, nil
}

// SetComputed sets the value a page shows for a property whose type the
// emulator does not model (a rollup, a formula, a button, …), such as
// {"type":"number","number":2,"function":"count"} for a rollup. Those values
// are computed by Notion and cannot be written through the API.
func (s *Server) SetComputed(pageID, property string, raw json.RawMessage) error {
	return s.setComputed(pageID, property, raw, false)
}

// SetComputedPageView sets what the page object alone shows for such a
// property, while the page property endpoint keeps the value SetComputed
// set: Notion computes a page object's rollups "based on a maximum of 25
// relations" and sends the exact value only from "Retrieve a page property
// item" (https://developers.notion.com/reference/retrieve-a-page-property).
func (s *Server) SetComputedPageView(pageID, property string, raw json.RawMessage) error {
	return s.setComputed(pageID, property, raw, true)
}

func (s *Server) setComputed(pageID, property string, raw json.RawMessage, pageView bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, _ := normalizeID(pageID)
	p, ok := s.pages[id]
	if !ok {
		return fmt.Errorf("notionemu: no page %s", pageID)
	}
	c, ok := p.db.lookup(property)
	if !ok || c.typ.modelled() || p.db.computes(c) {
		return fmt.Errorf("notionemu: page %s has no computed property %q", pageID, property)
	}
	if !json.Valid(raw) {
		return fmt.Errorf("notionemu: value for %q is not JSON", property)
	}
	if pageView {
		p.shown[c] = raw
	} else {
		p.values[c] = value{raw: raw}
		delete(p.shown, c)
	}
	return nil
}

// Serve answers requests on ln until ctx is done. Its clients — tests,
// agents, a demo — all come from loopback, one address for many clients,
// so the per-client cap is lifted: closing their idle connections would
// break writes they are about to send on them.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if err := webserver.New(s, webserver.Limits{MaxBody: 8 << 20, PerClient: 4096}).Serve(ctx, ln); err != nil {
		return fmt.Errorf("notionemu: serving: %w", err)
	}
	return nil
}

// ServeHTTP answers one API request. After any injected latency it checks
// what Notion checks before it looks at the request itself: the token, the
// version header and the rate limit; then come injected failures.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, pattern := s.mux.Handler(r)
	rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	// Like Notion, every answer carries the server's time; on the emulator's
	// clock, so that clients can take watermarks from it.
	rec.Header().Set("Date", s.now().UTC().Format(http.TimeFormat))
	s.stats.begin(pattern)
	defer func() { s.stats.end(pattern, rec.status, rec.bytes) }()

	if !s.faults.delay(r.Context()) {
		writeError(rec, newAPIError(http.StatusGatewayTimeout, "gateway_timeout", "Request canceled while delayed."))
		return
	}
	if !s.knows(bearer(r)) {
		writeError(rec, newAPIError(http.StatusUnauthorized, "unauthorized", "API token is invalid."))
		return
	}
	switch v := r.Header.Get("Notion-Version"); v {
	case "":
		writeError(rec, newAPIError(http.StatusBadRequest, "missing_version",
			"Notion-Version header failed validation: Notion-Version header should be defined, instead was `undefined`."))
		return
	case NotionVersion, DataSourceVersion, TrashVersion, TitleOnlyVersion:
	default:
		writeError(rec, validationError("notionemu speaks Notion-Version %s, %s, %s and %s, not %q.", NotionVersion, DataSourceVersion, TrashVersion, TitleOnlyVersion, v))
		return
	}
	if err := s.allowed(bearer(r), pattern); err != nil {
		writeError(rec, err)
		return
	}
	if wait, ok := s.limiter.allow(bearer(r), s.now()); !ok {
		rec.Header().Set("Retry-After", fmt.Sprint(int(wait/time.Second)))
		writeError(rec, rateLimited(ReasonConnection))
		return
	}
	// The workspace's limit is shared by every token: one token's burst
	// answers another's request with 429
	// (https://developers.notion.com/reference/request-limits, per-workspace limit).
	if wait, ok := s.workspace.allow(workspaceKey, s.now()); !ok {
		rec.Header().Set("Retry-After", fmt.Sprint(int(wait/time.Second)))
		writeError(rec, rateLimited(ReasonWorkspace))
		return
	}
	f := s.faults.next(pattern)
	switch {
	case f != nil && (f.Status == http.StatusTooManyRequests || f.Status == StatusServiceOverload):
		// "Connections should handle HTTP 429 and 529 responses and respect
		// the Retry-After response header"
		// (https://developers.notion.com/reference/request-limits).
		rec.Header().Set("Retry-After", fmt.Sprint(int(max(f.RetryAfter, time.Second)/time.Second)))
	case f != nil && f.Status == http.StatusServiceUnavailable:
		rec.Header().Set("Retry-After", "1")
	}
	switch {
	case f != nil && f.Apply:
		// The write is made, then the answer is lost: what a client sees
		// when a gateway times out after Notion committed.
		s.mux.ServeHTTP(discard{header: http.Header{}}, r)
		writeError(rec, f.apiError())
	case f != nil:
		writeError(rec, f.apiError())
	case pattern == EndpointUnknown:
		writeError(rec, newAPIError(http.StatusBadRequest, "invalid_request_url", "Invalid request URL."))
	default:
		s.mux.ServeHTTP(rec, r)
	}
}

// discard is a ResponseWriter that drops the answer of a write whose
// response an injected fault replaces.
type discard struct{ header http.Header }

func (d discard) Header() http.Header         { return d.header }
func (d discard) Write(b []byte) (int, error) { return len(b), nil }
func (d discard) WriteHeader(int)             {}

// knows reports whether token was added with AddToken.
func (s *Server) knows(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.bots[token]
	return ok && token != ""
}

func bearer(r *http.Request) string {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return ""
	}
	return token
}

// endpoint is an API operation: it returns the object to answer with, or
// an error that becomes Notion's error object.
type endpoint func(r *http.Request, token string) (any, error)

func (e endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := e(r, bearer(r))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, body)
}

func writeError(w http.ResponseWriter, err error) {
	var apiErr *apiError
	if !errors.As(err, &apiErr) {
		apiErr = newAPIError(http.StatusInternalServerError, "internal_server_error", err.Error())
	}
	// Every Notion error carries a request_id for its support to trace.
	writeJSON(w, apiErr.Status, apiErr.body(newID()))
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	data, err := json.Marshal(body)
	if err != nil {
		status = http.StatusInternalServerError
		data = []byte(`{"object":"error","status":500,"code":"internal_server_error","message":"encoding response"}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

// statusWriter remembers the status a handler answered with and the
// bytes of the body it wrote, for Stats.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (w *statusWriter) WriteHeader(status int) {
	w.status = status
	w.ResponseWriter.WriteHeader(status)
}

// lockedDatabase finds a database the token may see; the caller holds s.mu.
func (s *Server) lockedDatabase(rawID, token string) (*container, error) {
	id, ok := normalizeID(rawID)
	if !ok {
		return nil, validationError("path failed validation: path.database_id should be a valid uuid, instead was `%q`.", rawID)
	}
	c, ok := s.databases[id]
	if !ok || !c.shared[token] {
		return nil, notFound("database", id)
	}
	return c, nil
}

// lockedDataSource finds a data source the token may see; the caller holds
// s.mu.
func (s *Server) lockedDataSource(rawID, token string) (*database, error) {
	id, ok := normalizeID(rawID)
	if !ok {
		return nil, validationError("path failed validation: path.data_source_id should be a valid uuid, instead was `%q`.", rawID)
	}
	ds, ok := s.sources[id]
	if !ok || !ds.shared[token] {
		return nil, notFound("data_source", id)
	}
	return ds, nil
}

// lockedPage finds a page the token may see; the caller holds s.mu.
func (s *Server) lockedPage(rawID, token, path string) (*page, error) {
	id, ok := normalizeID(rawID)
	if !ok {
		return nil, validationError("%s should be a valid uuid, instead was `%q`.", path, rawID)
	}
	p, ok := s.pages[id]
	if !ok || !p.db.shared[token] {
		return nil, notFound("page", id)
	}
	return p, nil
}

// retrieveDatabase answers GET /v1/databases/{id}. Under 2025-09-03 and
// later it lists the data sources and carries no schema: "the properties
// field has moved to the data source object"
// (https://developers.notion.com/reference/database-retrieve). Before, it
// is the one data source's schema, or the multi-source 400.
func (s *Server) retrieveDatabase(r *http.Request, token string) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.lockedDatabase(r.PathValue("id"), token)
	if err != nil {
		return nil, err
	}
	v := r.Header.Get("Notion-Version")
	if dataSources(v) {
		return c.objectJSON(s.bots[token], v), nil
	}
	ds, err := c.sole()
	if err != nil {
		return nil, err
	}
	return ds.objectJSON(s.bots[token], v), nil
}
