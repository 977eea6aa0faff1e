package mesh

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

// noRedirects is the client pings and notifications use by default: a
// redirect is an answer to report, not a place to send a bearer token.
var noRedirects = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// Target is one webhook a notification goes to.
type Target struct {
	Name  string // node name, or "extra" for the extra webhook
	URL   string
	token Token
}

// Notifier is seed 001's notifyMesh: it posts {"message": …, "deliver":
// false} to every other node's webhook with that node's bearer token, never
// to the sender itself, and to an optional extra webhook.
type Notifier struct {
	From       string // the sending node's name
	Nodes      []NodeConfig
	Extra      string // optional extra webhook, e.g. a chat bridge
	ExtraToken Token
	Timeout    time.Duration // per delivery; default 10 s
	Client     *http.Client  // default: one that follows no redirects
}

// Targets lists where a notification goes, in registry order.
func (n *Notifier) Targets() []Target {
	var out []Target
	for _, node := range n.Nodes {
		if node.Webhook == "" || strings.EqualFold(node.Name, n.From) {
			continue
		}
		out = append(out, Target{Name: node.Name, URL: node.Webhook, token: node.Token})
	}
	if n.Extra != "" {
		out = append(out, Target{Name: "extra", URL: n.Extra, token: n.ExtraToken})
	}
	return out
}

// Deliver posts one message to one target. Only a 2xx answer counts.
func (n *Notifier) Deliver(ctx context.Context, t Target, message string) error {
	timeout := n.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	body, err := json.Marshal(Notification{Message: message, Deliver: false})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("notify %s: bad webhook URL", t.Name)
	}
	req.Header.Set("Content-Type", "application/json")
	if t.token.Set() {
		req.Header.Set("Authorization", "Bearer "+t.token.Reveal())
	}
	client := n.Client
	if client == nil {
		client = noRedirects
	}
	resp, err := client.Do(req)
	if err != nil {
		// net/http's error quotes the URL whole, query and path secrets too.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return fmt.Errorf("notify %s: POST %s: %w", t.Name, model.RedactURL(t.URL), err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10)) // lets the connection be reused
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("notify %s: HTTP %d", t.Name, resp.StatusCode)
	}
	return nil
}
