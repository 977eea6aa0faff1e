package mesh

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

// PollerConfig tunes the health poller. Zero values take seed 001's
// defaults.
type PollerConfig struct {
	Every       time.Duration // between rounds; default 2 min
	Timeout     time.Duration // per ping, body included; default 10 s
	Concurrency int           // pings in flight at once; default 16
	DownAfter   int           // consecutive failures that make a node DOWN; default 3
	History     int           // latency samples kept per node; default 32
	BodyLimit   int64         // largest health response read; default 64 KiB
	// Client sends the pings; its redirect policy is replaced so that a
	// redirect is a failed ping, never a request to somewhere else.
	Client *http.Client
	// Book, when set, is the node health record: the poller starts from
	// it, counts failures on from what other pingers recorded, and
	// writes every round to it as By ("dashboard", "node watch", "sweep").
	Book *Book
	By   string
}

func (c *PollerConfig) defaults() {
	if c.Every <= 0 {
		c.Every = 2 * time.Minute
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 16
	}
	if c.DownAfter <= 0 {
		c.DownAfter = 3
	}
	if c.History <= 0 {
		c.History = 32
	}
	if c.BodyLimit <= 0 {
		c.BodyLimit = 64 << 10
	}
}

// Poller pings every node of a registry and keeps what it learned. All
// methods are safe for concurrent use; rounds never overlap.
type Poller struct {
	cfg     PollerConfig
	nodes   []NodeConfig
	client  *http.Client
	round   sync.Mutex
	mu      sync.Mutex
	state   []model.Node // parallel to nodes
	wrote   []time.Time  // when this poller last wrote each node to the Book
	bookErr error
	changed chan struct{}
}

// outcome is one ping's result.
type outcome struct {
	done    bool
	rep     HealthReport
	latency time.Duration
	err     error
	at      time.Time
}

// NewPoller returns a poller over the registry's nodes, starting from the
// status and last-seen time the registry file records.
func NewPoller(reg *Registry, cfg PollerConfig) *Poller {
	cfg.defaults()
	client := noRedirects
	if cfg.Client != nil {
		c := *cfg.Client
		c.CheckRedirect = noRedirects.CheckRedirect
		client = &c
	}
	p := &Poller{cfg: cfg, nodes: slices.Clone(reg.Nodes), client: client, changed: make(chan struct{}, 1)}
	p.wrote = make([]time.Time, len(p.nodes))
	p.state, p.bookErr = cfg.Book.Nodes(reg)
	return p
}

// BookErr is the last failure to read or write the node health record, or
// nil: the pings went on, but the other doors did not learn of them.
func (p *Poller) BookErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bookErr
}

// Changed receives a value after nodes changed. It holds at most one
// pending value, so a slow reader sees one hint for many changes and the
// poller never waits for it; read Nodes for the state.
func (p *Poller) Changed() <-chan struct{} { return p.changed }

// Nodes is a snapshot of every node, in registry order; the caller owns it.
func (p *Poller) Nodes() []model.Node {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := slices.Clone(p.state)
	for i := range out {
		out[i].ClaimedTasks = slices.Clone(out[i].ClaimedTasks)
		out[i].Latency = slices.Clone(out[i].Latency)
	}
	return out
}

// Run polls a round at once and then every interval until ctx ends.
func (p *Poller) Run(ctx context.Context) error {
	tick := time.NewTicker(p.cfg.Every)
	defer tick.Stop()
	for {
		p.PollOnce(ctx)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// PollOnce pings every node once, at most Concurrency at a time, and returns
// the snapshot after the round. Hanging nodes cost one Timeout each, spread
// over the workers, so a round with fewer hanging nodes than workers ends
// within about one Timeout.
func (p *Poller) PollOnce(ctx context.Context) []model.Node {
	p.round.Lock()
	defer p.round.Unlock()
	jobs := make(chan int)
	got := make([]outcome, len(p.nodes))
	var wg sync.WaitGroup
	for range min(p.cfg.Concurrency, len(p.nodes)) {
		wg.Go(func() {
			for i := range jobs {
				start := time.Now()
				rep, err := p.ping(ctx, p.nodes[i])
				if ctx.Err() != nil {
					continue // our own shutdown, not the node's failure
				}
				got[i] = outcome{done: true, rep: rep, latency: time.Since(start), err: err, at: time.Now()}
			}
		})
	}
feed:
	for i := range p.nodes {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	p.settle(got)
	return p.Nodes()
}

// settle applies a round's outcomes. With a Book it does so on what the
// record holds, under its lock: a round another pinger recorded since this
// poller last wrote counts, so every door sees one count and one status.
func (p *Poller) settle(got []outcome) {
	apply := func(entries map[string]bookEntry) {
		for i, o := range got {
			if !o.done {
				continue
			}
			key := strings.ToUpper(p.nodes[i].Name)
			if e, ok := entries[key]; ok && e.CheckedAt.After(p.wrote[i]) {
				e.over(&p.state[i])
			}
			p.record(i, o)
			if entries != nil {
				entries[key] = entryOf(p.state[i], o.at, p.cfg.By)
				p.wrote[i] = o.at
			}
		}
	}
	// mu is held until the record is saved: nobody reads a state here
	// that the record does not hold yet.
	p.mu.Lock()
	if p.cfg.Book == nil {
		apply(nil)
	} else {
		p.bookErr = p.cfg.Book.write(apply)
	}
	p.mu.Unlock()
	select {
	case p.changed <- struct{}{}:
	default:
	}
}

// ping sends one health request and judges the answer. Every way it can
// fail becomes an error whose text is the reason shown on the Nodes view.
func (p *Poller) ping(ctx context.Context, n NodeConfig) (HealthReport, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.Health, nil)
	if err != nil {
		return HealthReport{}, fmt.Errorf("bad health URL: %w", err)
	}
	if n.Token.Set() {
		req.Header.Set("Authorization", "Bearer "+n.Token.Reveal())
	}
	req.Header.Set("Accept", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return HealthReport{}, p.transportReason(err)
	}
	defer resp.Body.Close()
	switch code := resp.StatusCode; {
	case code >= 300 && code < 400:
		return HealthReport{}, fmt.Errorf("redirect (HTTP %d) to %q not followed", code, model.RedactURL(resp.Header.Get("Location")))
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return HealthReport{}, fmt.Errorf("unauthorized (HTTP %d): check the node's token", code)
	case code != http.StatusOK:
		return HealthReport{}, fmt.Errorf("HTTP %d", code)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, p.cfg.BodyLimit+1))
	if err != nil {
		return HealthReport{}, p.transportReason(err)
	}
	if int64(len(body)) > p.cfg.BodyLimit {
		return HealthReport{}, fmt.Errorf("response larger than %d bytes", p.cfg.BodyLimit)
	}
	rep, err := ParseHealth(body)
	if err != nil {
		return HealthReport{}, err
	}
	if !strings.EqualFold(rep.Node, n.Name) {
		return HealthReport{}, fmt.Errorf("answered as node %q", rep.Node)
	}
	return rep, nil
}

// transportReason shortens a client error to its cause; the URL it would
// repeat is already on screen.
func (p *Poller) transportReason(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("timed out after %s", p.cfg.Timeout)
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return uerr.Err
	}
	return err
}

// record applies one ping's outcome to node i: the one rule of a node's
// health (DownAfter consecutive failures make it DOWN; one good answer
// makes it healthy again), and since when it has held. The caller holds mu.
func (p *Poller) record(i int, o outcome) {
	n := &p.state[i]
	was := n.Status
	if o.err != nil {
		n.Failures++
		n.LastErr = model.Redact(o.err.Error())
		n.Status = model.NodeDegraded
		if n.Failures >= p.cfg.DownAfter {
			n.Status = model.NodeDown
		}
	} else {
		rep := o.rep
		n.Failures = 0
		n.LastSeen = o.at
		n.LastTaskAt = rep.LastTaskAt
		n.QueueDepth = rep.QueueDepth
		n.ClaimedTasks = slices.Clone(rep.ClaimedTasks)
		n.Status, n.LastErr = model.NodeHealthy, ""
		if !rep.Healthy() {
			n.Status, n.LastErr = model.NodeDegraded, fmt.Sprintf("node reports status %q", rep.Status)
		}
		if len(n.Latency) == p.cfg.History {
			n.Latency = slices.Delete(n.Latency, 0, 1)
		}
		n.Latency = append(n.Latency, o.latency)
	}
	if n.Status != was || n.Since.IsZero() {
		n.Since = o.at
	}
	n.RecordedBy = p.cfg.By
}
