package sqlstore

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNoPush is Watch's answer on SQLite, which has no change notification
// across processes: the hub keeps polling on its timer.
var ErrNoPush = errors.New("this source cannot push changes; polling instead")

// Watch listens for the NOTIFY the migration's statement trigger sends on
// every change to the table, and passes a hint for each (coalesced: a slow
// reader sees one hint for many changes). While NOTIFYs come faster than
// Config.ListenPause it stops listening for a pause at a time, and hints
// after each. A lost connection is retried with backoff; the channel closes when
// ctx ends.
func (s *Store) Watch(ctx context.Context) (<-chan struct{}, error) {
	if s.pgPool == nil {
		return nil, ErrNoPush
	}
	hints := make(chan struct{}, 1)
	go func() {
		defer close(hints)
		backoff := 100 * time.Millisecond
		for ctx.Err() == nil {
			err := s.listen(ctx, hints)
			if ctx.Err() != nil {
				return
			}
			if err == nil {
				backoff = 100 * time.Millisecond
			}
			// Changes may have been missed while not listening: say so.
			hint(hints)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, 10*time.Second)
		}
	}()
	return hints, nil
}

func (s *Store) listen(ctx context.Context, hints chan struct{}) error {
	pooled, err := s.pgPool.Acquire(ctx)
	if err != nil {
		return err
	}
	// A listening connection is never handed back to the pool.
	c := pooled.Hijack()
	defer c.Close(context.WithoutCancel(ctx))
	channel := pgx.Identifier{s.channel}.Sanitize()
	if _, err := c.Exec(ctx, "LISTEN "+channel); err != nil {
		return err
	}
	hint(hints) // a change made before LISTEN took hold sent nobody a NOTIFY
	var last time.Time
	for {
		if _, err := c.WaitForNotification(ctx); err != nil {
			return err
		}
		hint(hints)
		now := time.Now()
		if now.Sub(last) >= s.cfg.ListenPause {
			last = now
			continue
		}
		// Changes come faster than the pause: the server wakes every
		// listener for every NOTIFY, so stop listening for one pause.
		if err := s.pause(ctx, c, channel); err != nil {
			return err
		}
		last = time.Now()
		hint(hints) // what changed meanwhile sent this connection nothing
	}
}

// pause stops listening on channel for ListenPause.
func (s *Store) pause(ctx context.Context, c *pgx.Conn, channel string) error {
	if _, err := c.Exec(ctx, "UNLISTEN "+channel); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(s.cfg.ListenPause):
	}
	_, err := c.Exec(ctx, "LISTEN "+channel)
	return err
}

func hint(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
