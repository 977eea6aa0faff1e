package mesh

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// maxNotificationSize bounds what the agent hook reads from one request,
// and inboxSize how many notifications it keeps.
const (
	maxNotificationSize = 64 << 10
	inboxSize           = 1024
)

// Handler answers seed 001's `POST /hooks/health` for the node called name:
// the bearer token is required and compared in constant time (401
// otherwise), other methods get 405, and the body is status's report with
// the node's name. Mount it at /hooks/health. An empty token refuses every
// request rather than serving an open endpoint.
func Handler(name, token string, status func(ctx context.Context) (HealthReport, error)) http.Handler {
	want := Token(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !authorize(w, r, want) {
			return
		}
		rep, err := status(r.Context())
		if err != nil {
			// The cause stays on this node: a source error can name hosts
			// and paths a peer has no business learning.
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"node": name, "status": "unhealthy"})
			return
		}
		rep.Node = name
		if rep.Status == "" {
			rep.Status = "healthy"
		}
		writeJSON(w, http.StatusOK, rep)
	})
}

// authorize lets a POST with the right bearer token through and answers
// anything else itself. The method is checked first so that probing with GET
// learns nothing about the token.
func authorize(w http.ResponseWriter, r *http.Request, want Token) bool {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return false
	}
	if !want.Authorizes(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="mesh"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v) // the client has gone if this fails; nothing to tell it
}

// Notification is what seed 001's notifyMesh posts to a node's webhook.
type Notification struct {
	Message string `json:"message"`
	Deliver bool   `json:"deliver"`
}

// Received is a notification as the agent hook recorded it.
type Received struct {
	Notification
	At time.Time
}

// Inbox answers `POST /hooks/agent` for one node: it checks the bearer token
// like Handler and records each notification, for the demo's nodes and for
// tests that count what the mesh was told.
type Inbox struct {
	token Token
	mu    sync.Mutex
	got   []Received
}

// NewInbox returns an agent hook that accepts token.
func NewInbox(token string) *Inbox { return &Inbox{token: Token(token)} }

func (in *Inbox) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !authorize(w, r, in.token) {
		return
	}
	var n Notification
	if err := json.NewDecoder(io.LimitReader(r.Body, maxNotificationSize)).Decode(&n); err != nil || n.Message == "" {
		http.Error(w, `want {"message": …, "deliver": …}`, http.StatusBadRequest)
		return
	}
	in.mu.Lock()
	if len(in.got) == inboxSize {
		in.got = slices.Delete(in.got, 0, 1)
	}
	in.got = append(in.got, Received{Notification: n, At: time.Now()})
	in.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}

// Messages is a copy of the last notifications received, oldest first.
func (in *Inbox) Messages() []Received {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]Received(nil), in.got...)
}
