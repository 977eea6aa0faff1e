package notion

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// limiter spaces requests so that they never exceed a rate: one request
// every `every`, no bursts, so a minute never holds more than rate×60.
type limiter struct {
	mu    sync.Mutex
	every time.Duration
	next  time.Time // when the next request may go
}

// wait blocks until the caller may send one request.
func (l *limiter) wait(ctx context.Context) error {
	if l == nil {
		return nil
	}
	return sleep(ctx, time.Until(l.reserve(1)[0]))
}

// reserve takes n consecutive send times. A claim takes two for its read
// and its write, so that other callers queued at the limiter cannot widen
// the gap between them — the window in which a racing claim goes unseen.
func (l *limiter) reserve(n int) []time.Time {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	at := l.next
	if now := time.Now(); at.Before(now) {
		at = now
	}
	out := make([]time.Time, n)
	for i := range out {
		out[i] = at
		at = at.Add(l.every)
	}
	l.next = at
	return out
}

// slotKey carries a send time reserved with limiter.reserve.
type slotKey struct{}

// withSlot makes the first try of the request made with ctx go at a
// reserved time instead of queueing at the limiter.
func withSlot(ctx context.Context, slots []time.Time, i int) context.Context {
	if i >= len(slots) {
		return ctx
	}
	return context.WithValue(ctx, slotKey{}, slots[i])
}

// limiters holds one limiter per integration token, keyed by a hash of the
// token so that the token itself is kept nowhere but in the client: Notion's
// budget is per integration, whatever number of sources share it.
var limiters = struct {
	sync.Mutex
	byToken map[string]*limiter
}{byToken: map[string]*limiter{}}

// limiterFor returns the token's shared limiter. A source asking for a lower
// rate than the one already shared slows the limiter down for everyone; a
// rate of zero or less means no limiter (tests against a local emulator).
func limiterFor(token string, rate float64) *limiter {
	if rate <= 0 {
		return nil
	}
	sum := sha256.Sum256([]byte(token))
	key := hex.EncodeToString(sum[:])
	// 3% under the rate: requests leave evenly spaced but arrive with
	// network jitter, and it is the arrivals Notion counts.
	every := time.Duration(1.03 * float64(time.Second) / rate)
	limiters.Lock()
	defer limiters.Unlock()
	l := limiters.byToken[key]
	if l == nil {
		l = &limiter{every: every}
		limiters.byToken[key] = l
	}
	l.mu.Lock()
	if every > l.every {
		l.every = every
	}
	l.mu.Unlock()
	return l
}

// pauses are the waits Notion asked for with a 429's Retry-After, by
// token (its per-connection budget) and by workspace (the budget every
// connection of the workspace shares), so that every source on the token
// or in the workspace holds back instead of each earning its own 429.
var pauses = struct {
	sync.Mutex
	until map[string]pause
}{until: map[string]pause{}}

// pause is when requests on a key may go again, and which limit said so.
type pause struct {
	until time.Time
	limit string
	after time.Duration // the Retry-After that set until
}

// throttle is one source's place in pauses: its token's key and its
// workspace's (the token's own when no workspace is configured).
type throttle struct {
	token, workspace string
}

func newThrottle(token, workspace string) throttle {
	sum := sha256.Sum256([]byte(token))
	g := throttle{token: "token:" + hex.EncodeToString(sum[:])}
	g.workspace = g.token
	if w := strings.TrimSpace(workspace); w != "" {
		g.workspace = "workspace:" + w
	}
	return g
}

// hold records e's Retry-After on the key its limit names: the
// workspace's for a workspace-wide limit, else the token's.
func (g throttle) hold(e *apiError) {
	if e.RetryAfter <= 0 {
		return
	}
	key, limit := g.token, cmp.Or(e.limit(), "rate_limited")
	if strings.Contains(limit, "workspace") {
		key = g.workspace
	}
	until := time.Now().Add(e.RetryAfter)
	pauses.Lock()
	defer pauses.Unlock()
	if p := pauses.until[key]; p.until.Before(until) {
		pauses.until[key] = pause{until: until, limit: limit, after: e.RetryAfter}
	}
}

// wait blocks until neither the token nor the workspace is paused, then a
// spread of the pause's Retry-After more: every request the pause held
// would otherwise go at the same instant, and a limiter with a small burst
// answers all but one of them with the next 429 and the next pause. A
// pause that outlasts ctx's deadline ends the call at once, naming the
// limit and how long is left, instead of sleeping into the deadline.
func (g throttle) wait(ctx context.Context) error {
	pauses.Lock()
	p := pauses.until[g.token]
	if w := pauses.until[g.workspace]; w.until.After(p.until) {
		p = w
	}
	pauses.Unlock()
	left := time.Until(p.until)
	if left <= 0 {
		return nil
	}
	if dl, ok := ctx.Deadline(); ok && dl.Before(p.until) {
		scope := "this token"
		if strings.Contains(p.limit, "workspace") {
			scope = "every token of this workspace"
		}
		return newTimeout("Notion's %s limit was reached: %s waits %s more (Retry-After), longer than what is left of the command's time budget",
			p.limit, scope, left.Round(time.Second))
	}
	return sleep(ctx, left+retrySpread(p.after))
}

// retrySpread is a random extra wait of up to a quarter of a Retry-After, so
// that the requests one 429 storm held back return spread out instead of
// together. A tenth proved too narrow: six readers held by one pause of a
// limiter with a burst of one kept colliding for six rounds.
func retrySpread(retryAfter time.Duration) time.Duration {
	return rand.N(retryAfter/4 + 1)
}

// forLimit names a 429's limit inside a parenthesis, or nothing.
func forLimit(limit string) string {
	if limit == "" {
		return ""
	}
	return " for " + limit
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retryPolicy bounds the retries of reads; notionapi's are unused
// because it re-sends consumed bodies and ignores 5xx.
type retryPolicy struct {
	attempts int           // total tries, first included
	base     time.Duration // first backoff; doubles each try
	max      time.Duration // longest backoff without a Retry-After
}

// transport is the RoundTripper every request of a source goes through:
// base URL rewrite, the token's rate limiter on every request, and the
// request and response repairs that keep notionapi's types usable.
type transport struct {
	base  *url.URL
	next  http.RoundTripper
	limit *limiter
}

// retryable are the statuses Notion documents as transient.
func retryable(status int) bool {
	switch status {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout, 529:
		return true
	}
	return false
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	if req.Method == http.MethodPatch && strings.HasPrefix(req.URL.Path, "/v1/pages/") {
		body = withoutTrashFlags(body)
	}
	ctx := req.Context()
	out := req.Clone(ctx)
	out.URL.Scheme, out.URL.Host, out.Host = t.base.Scheme, t.base.Host, t.base.Host
	if body != nil {
		out.Body = io.NopCloser(bytes.NewReader(body))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		out.ContentLength = int64(len(body))
	}
	var err error
	if at, ok := ctx.Value(slotKey{}).(time.Time); ok {
		err = sleep(ctx, time.Until(at))
	} else {
		err = t.limit.wait(ctx)
	}
	if err != nil {
		return nil, err
	}
	res, err := t.next.RoundTrip(out)
	if err != nil {
		return nil, err
	}
	noteServerTime(ctx, res)
	return repairResponse(res)
}

// withoutTrashFlags drops "archived" and "in_trash" from a page update:
// sending "archived": false would restore a page a person had put in the
// trash, so no update may carry either.
func withoutTrashFlags(body []byte) []byte {
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil {
		return body
	}
	_, a := obj["archived"]
	_, b := obj["in_trash"]
	if !a && !b {
		return body
	}
	delete(obj, "archived")
	delete(obj, "in_trash")
	out, err := json.Marshal(obj)
	if err != nil {
		return body
	}
	return out
}

// repairResponse makes a response decodable by notionapi: property values
// and configs of types it does not know are removed (it fails on the whole
// page otherwise), and an error body that is not JSON becomes a Notion
// error object (it would surface as a JSON syntax error).
func repairResponse(res *http.Response) (*http.Response, error) {
	raw, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	_ = res.Body.Close()
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		raw = errorBody(res.StatusCode, raw)
	} else {
		raw = sanitize(raw)
	}
	res.Body = io.NopCloser(bytes.NewReader(raw))
	res.ContentLength = int64(len(raw))
	res.Header.Del("Content-Length")
	return res, nil
}

func errorBody(status int, raw []byte) []byte {
	var probe struct {
		Object string `json:"object"`
	}
	if json.Unmarshal(raw, &probe) == nil && probe.Object == "error" {
		return raw
	}
	msg := strings.TrimSpace(string(raw))
	if len(msg) > 200 {
		msg = msg[:200]
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	out, _ := json.Marshal(map[string]any{
		"object": "error", "status": status, "code": fmt.Sprintf("http_%d", status), "message": msg,
	})
	return out
}

// knownTypes are the property types notionapi v1.13.3 decodes, as values
// and as database configs.
var knownTypes = map[string]bool{
	"title": true, "rich_text": true, "text": true, "number": true, "select": true,
	"multi_select": true, "date": true, "formula": true, "relation": true, "rollup": true,
	"people": true, "files": true, "checkbox": true, "url": true, "email": true,
	"phone_number": true, "created_time": true, "created_by": true, "last_edited_time": true,
	"last_edited_by": true, "status": true, "unique_id": true, "verification": true, "button": true,
}

// sanitize removes unknown-typed entries from every "properties" object in
// a JSON document, and entries that are not objects with a type: notionapi
// fails on the first and panics on the second. A body that is not JSON is
// returned as it is.
func sanitize(raw []byte) []byte {
	var doc any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&doc) != nil {
		return raw
	}
	if !prune(doc) {
		return raw
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return raw
	}
	return out
}

// prune walks v and reports whether it removed anything.
func prune(v any) bool {
	changed := false
	switch x := v.(type) {
	case map[string]any:
		if props, ok := x["properties"].(map[string]any); ok {
			for name, p := range props {
				m, ok := p.(map[string]any)
				typ, _ := m["type"].(string)
				if !ok || !knownTypes[typ] {
					delete(props, name)
					changed = true
				}
			}
		}
		for _, c := range x {
			changed = prune(c) || changed
		}
	case []any:
		for _, c := range x {
			changed = prune(c) || changed
		}
	}
	return changed
}

// serverTimeKey carries a sink for the server's time (its Date header) of
// the first answer to a call: polls take their watermark from Notion's
// clock, never from ours.
type serverTimeKey struct{}

func withServerTime(ctx context.Context) (context.Context, *atomic.Int64) {
	sink := new(atomic.Int64)
	return context.WithValue(ctx, serverTimeKey{}, sink), sink
}

func noteServerTime(ctx context.Context, res *http.Response) {
	sink, _ := ctx.Value(serverTimeKey{}).(*atomic.Int64)
	if sink == nil || res.StatusCode != http.StatusOK {
		return
	}
	if d, err := http.ParseTime(res.Header.Get("Date")); err == nil {
		sink.CompareAndSwap(0, d.Unix())
	}
}
