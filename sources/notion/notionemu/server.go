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
	EndpointPageCreate       = "POST /v1/pages"
	EndpointPageUpdate       = "PATCH /v1/pages/{id}"
	EndpointCommentCreate    = "POST /v1/comments"
	EndpointCommentList      = "GET /v1/comments"
	// EndpointUnknown counts requests for URLs the emulator does not have.
	EndpointUnknown = ""
)

// NotionVersion is the only Notion-Version the emulator speaks.
const NotionVersion = "2022-06-28"

// Options configure a Server. The zero value is a server on the wall clock
// with Notion's default rate limit.
type Options struct {
	// Now is the clock for timestamps, rate limiting and relative date
	// filters; nil means time.Now.
	Now func() time.Time
	// RateLimit is the per-token budget; nil means DefaultRateLimit.
	RateLimit *RateLimit
}

// Server is an in-memory Notion workspace served over HTTP. It is safe for
// concurrent use.
type Server struct {
	now     func() time.Time
	mux     *http.ServeMux
	limiter *limiter
	faults  faultInjector
	stats   statsRecorder

	mu        sync.Mutex
	bots      map[string]string // integration token → its bot user id
	databases map[string]*database
	pages     map[string]*page
	comments  map[string][]*comment // by page id, in creation order
	seq       int
}

// New returns an empty workspace with no tokens and no databases.
func New(opts Options) *Server {
	s := &Server{
		now:       opts.Now,
		mux:       http.NewServeMux(),
		bots:      map[string]string{},
		databases: map[string]*database{},
		pages:     map[string]*page{},
		comments:  map[string][]*comment{},
	}
	if s.now == nil {
		s.now = time.Now
	}
	limit := DefaultRateLimit
	if opts.RateLimit != nil {
		limit = *opts.RateLimit
	}
	s.limiter = newLimiter(limit)
	s.stats.reset()
	routes := map[string]endpoint{
		EndpointDatabaseRetrieve: s.retrieveDatabase,
		EndpointDatabaseQuery:    s.queryDatabase,
		EndpointPageRetrieve:     s.retrievePage,
		EndpointPageCreate:       s.createPage,
		EndpointPageUpdate:       s.updatePage,
		EndpointCommentCreate:    s.createComment,
		EndpointCommentList:      s.listComments,
	}
	for pattern, e := range routes {
		s.mux.Handle(pattern, e)
	}
	return s
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

// CreateDatabase creates a database from schema, shared with the given
// tokens (each added with AddToken first); other tokens get 404 for it, as
// Notion answers for a database not shared with an integration.
func (s *Server) CreateDatabase(schema DatabaseSchema, sharedWith ...string) (id string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	db, err := newDatabase(schema, s.stamp())
	if err != nil {
		return "", fmt.Errorf("notionemu: creating database: %w", err)
	}
	if _, taken := s.databases[db.id]; taken {
		return "", fmt.Errorf("notionemu: creating database: id %s already exists", db.id)
	}
	for _, token := range sharedWith {
		if _, ok := s.bots[token]; !ok {
			return "", fmt.Errorf("notionemu: creating database %q: token not added", schema.Title)
		}
		db.shared[token] = true
	}
	s.databases[db.id] = db
	return db.id, nil
}

// SetComputed sets the value a page shows for a property whose type the
// emulator does not model (a rollup, a formula, a button, …), such as
// {"type":"number","number":2,"function":"count"} for a rollup. Those values
// are computed by Notion and cannot be written through the API.
func (s *Server) SetComputed(pageID, property string, raw json.RawMessage) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, _ := normalizeID(pageID)
	p, ok := s.pages[id]
	if !ok {
		return fmt.Errorf("notionemu: no page %s", pageID)
	}
	c, ok := p.db.lookup(property)
	if !ok || c.typ.modelled() {
		return fmt.Errorf("notionemu: page %s has no computed property %q", pageID, property)
	}
	if !json.Valid(raw) {
		return fmt.Errorf("notionemu: value for %q is not JSON", property)
	}
	p.values[c] = value{raw: raw}
	return nil
}

// Serve answers requests on ln until ctx is done.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if err := webserver.New(s, webserver.Limits{MaxBody: 8 << 20}).Serve(ctx, ln); err != nil {
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
	defer func() { s.stats.end(rec.status) }()

	if !s.faults.delay(r.Context()) {
		writeError(rec, &apiError{http.StatusGatewayTimeout, "gateway_timeout", "Request canceled while delayed."})
		return
	}
	if !s.knows(bearer(r)) {
		writeError(rec, &apiError{http.StatusUnauthorized, "unauthorized", "API token is invalid."})
		return
	}
	switch v := r.Header.Get("Notion-Version"); {
	case v == "":
		writeError(rec, &apiError{http.StatusBadRequest, "missing_version",
			"Notion-Version header failed validation: Notion-Version header should be defined, instead was `undefined`."})
		return
	case v != NotionVersion:
		writeError(rec, validationError("notionemu speaks Notion-Version %s only, not %q.", NotionVersion, v))
		return
	}
	if wait, ok := s.limiter.allow(bearer(r), s.now()); !ok {
		rec.Header().Set("Retry-After", fmt.Sprint(int(wait/time.Second)))
		writeError(rec, &apiError{http.StatusTooManyRequests, "rate_limited",
			"You have been rate limited. Please try again in a few minutes."})
		return
	}
	if err := s.faults.next(); err != nil {
		if err.Status == http.StatusServiceUnavailable || err.Status == StatusServiceOverload {
			rec.Header().Set("Retry-After", "1")
		}
		writeError(rec, err)
		return
	}
	if pattern == EndpointUnknown {
		writeError(rec, &apiError{http.StatusBadRequest, "invalid_request_url", "Invalid request URL."})
		return
	}
	s.mux.ServeHTTP(rec, r)
}

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
		apiErr = &apiError{http.StatusInternalServerError, "internal_server_error", err.Error()}
	}
	writeJSON(w, apiErr.Status, apiErr.body())
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

// statusWriter remembers the status a handler answered with, for Stats.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	w.status = status
	w.ResponseWriter.WriteHeader(status)
}

// lockedDatabase finds a database the token may see; the caller holds s.mu.
func (s *Server) lockedDatabase(rawID, token string) (*database, error) {
	id, ok := normalizeID(rawID)
	if !ok {
		return nil, validationError("path failed validation: path.database_id should be a valid uuid, instead was `%q`.", rawID)
	}
	db, ok := s.databases[id]
	if !ok || !db.shared[token] {
		return nil, notFound("database", id)
	}
	return db, nil
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

func (s *Server) retrieveDatabase(r *http.Request, token string) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	db, err := s.lockedDatabase(r.PathValue("id"), token)
	if err != nil {
		return nil, err
	}
	return db.objectJSON(s.bots[token]), nil
}
