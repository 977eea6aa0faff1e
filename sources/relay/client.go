package relay

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/mesh"
)

// maxAnswer bounds the answer a client reads: a million tasks are well
// under it, and a relay gone wrong cannot fill a dashboard's memory.
const maxAnswer = 2 << 30

// Source reads a source through a relay and does everything else — every
// write, Get, Next, Archive — on the source itself. It is the source a
// dashboard's hub polls when the configuration names a relay for it.
type Source struct {
	sources.Source
	base  *url.URL
	token mesh.Token
	hc    *http.Client
	// retry is how long Watch waits before it reconnects (doubling to a
	// minute); tests shorten it.
	retry time.Duration
}

// Wrap reads src through the relay at addr (http://host:port), presenting
// token. src's name is the name asked of the relay: the relay must read a
// source of that name.
func Wrap(src sources.Source, addr string, token mesh.Token) (*Source, error) {
	u, err := url.Parse(addr)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return nil, fmt.Errorf("relay address %q: want http://HOST:PORT (the address `claimdeck relay --listen` serves)", redactURL(addr))
	}
	if !token.Set() {
		return nil, fmt.Errorf("relay %s: no token: set %s to the relay's token", u.Host, DefaultTokenEnv)
	}
	u.Path = ""
	return &Source{Source: src, base: u, token: token, hc: &http.Client{}, retry: time.Second}, nil
}

// redactURL keeps a password written into an address out of messages.
func redactURL(addr string) string {
	if u, err := url.Parse(addr); err == nil && u.User != nil {
		return u.Redacted()
	}
	return addr
}

// Relay is the relay's address, for the dashboard's source line and doctor.
func (s *Source) Relay() string { return s.base.String() }

// Caps are the source's, with Watch: the relay pushes a hint per change.
func (s *Source) Caps() sources.Caps {
	c := s.Source.Caps()
	c.Watch = true
	c.Lacks = without(c.Lacks, "watch")
	c.Reads = strings.TrimPrefix(c.Reads+"; ", "; ") + "through the relay at " + s.base.Host
	return c
}

// without drops the lacks that name what the relay now gives.
func without(lacks []string, word string) []string {
	var out []string
	for _, l := range lacks {
		if !strings.Contains(strings.ToLower(l), word) {
			out = append(out, l)
		}
	}
	return out
}

func (s *Source) get(ctx context.Context, path string, q url.Values) (*http.Response, error) {
	u := *s.base
	u.Path, u.RawQuery = path, q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s.token.Reveal())
	resp, err := s.hc.Do(req)
	if err != nil {
		return nil, model.Errorf(model.CodeAPIError, "poll", "", "relay %s unreachable: %s", s.base.Host, errText(err))
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		msg := strings.TrimSpace(string(body))
		code := model.CodeAPIError
		switch resp.StatusCode {
		case http.StatusUnauthorized:
			code, msg = model.CodeMisconfigured, "the relay refused the token: set "+DefaultTokenEnv+" to the token the relay was started with"
		case http.StatusNotFound, http.StatusBadRequest:
			code = model.CodeMisconfigured
		}
		return nil, model.Errorf(code, "poll", "", "relay %s: %s (HTTP %d)", s.base.Host, model.Redact(msg), resp.StatusCode)
	}
	return resp, nil
}

// errText is a transport error without the URL net/http puts in front.
func errText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// Poll asks the relay for the changes since the cursor. It fails, as a
// poll of the source would, when the relay cannot read the source or its
// reads lag; the error says which, and when the relay last read it.
func (s *Source) Poll(ctx context.Context, since sources.Cursor, opt ...sources.PollOption) (sources.Delta, error) {
	q := url.Values{"source": {s.Name()}, "cursor": {string(since)}}
	for _, o := range opt {
		if !o.FinishedAfter.IsZero() {
			q.Set("after", strconv.FormatInt(o.FinishedAfter.UnixMicro(), 10))
		}
	}
	resp, err := s.get(ctx, "/v1/poll", q)
	if err != nil {
		return sources.Delta{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return sources.Delta{}, model.Errorf(model.CodeAPIError, "poll", "", "relay %s: the answer broke off: %s", s.base.Host, errText(err))
	}
	a, err := decodeAnswer(body)
	if err != nil {
		return sources.Delta{}, model.Errorf(model.CodeAPIError, "poll", "", "relay %s: %v", s.base.Host, err)
	}
	if err := a.health(s.base.Host); err != nil {
		return sources.Delta{}, err
	}
	for _, t := range a.Tasks {
		if t.Source != s.Name() {
			return sources.Delta{}, model.Errorf(model.CodeAPIError, "poll", t.ID, "relay %s answered a task of source %q for %q", s.base.Host, t.Source, s.Name())
		}
	}
	return sources.Delta{Full: a.Full, Tasks: a.Tasks, Removed: a.Removed, Cursor: sources.Cursor(a.Cursor), Archived: a.Archived}, nil
}

// health is the relay's view of the source as the error a poll of it
// would give: nil while the relay reads it well.
func (a *Answer) health(host string) error {
	switch {
	case !a.Loaded && hub.Status(a.Status) != hub.StatusDegraded:
		return model.Errorf(model.CodeAPIError, "poll", "", "relay %s has not read the source yet", host)
	case hub.Status(a.Status) == hub.StatusDegraded:
		code := model.Code(a.Code)
		if code == "" {
			code = model.CodeAPIError
		}
		return model.Errorf(code, "poll", "", "relay %s cannot read the source (%s)%s", host, a.Err, lastRead(a.Updated))
	case a.Lagging:
		return model.Errorf(model.CodeAPIError, "poll", "", "relay %s's reads of the source lag: no answer from it for %s%s", host, (3 * a.Every).String(), lastRead(a.Updated))
	}
	return nil
}

func lastRead(at time.Time) string {
	if at.IsZero() {
		return "; it has never read it"
	}
	return "; its last good read was at " + at.UTC().Format(time.RFC3339)
}

// Watch turns the relay's change stream into hints. It reconnects while
// ctx lasts, waiting longer after each failure (to a minute); the hub's
// timed polls carry on meanwhile. The channel closes when ctx ends.
func (s *Source) Watch(ctx context.Context) (<-chan struct{}, error) {
	hints := make(chan struct{}, 1)
	go func() {
		defer close(hints)
		wait := s.retry
		for ctx.Err() == nil {
			if s.stream(ctx, hints) {
				wait = s.retry // it worked for a while: start over
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			wait = min(2*wait, time.Minute)
		}
	}()
	return hints, nil
}

// stream reads one watch stream until it fails or stays silent past three
// keep-alives; true when it delivered anything.
func (s *Source) stream(ctx context.Context, hints chan<- struct{}) bool {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	resp, err := s.get(ctx, "/v1/watch", url.Values{"source": {s.Name()}})
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	silence := time.AfterFunc(3*keepAlive, cancel)
	defer silence.Stop()
	sc := bufio.NewScanner(resp.Body)
	got := false
	for sc.Scan() {
		silence.Reset(3 * keepAlive)
		got = true
		if sc.Text() == "" {
			continue
		}
		select {
		case hints <- struct{}{}:
		default:
		}
	}
	return got
}
