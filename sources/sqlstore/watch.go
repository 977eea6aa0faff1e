package sqlstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Watch hints at changes: on PostgreSQL by LISTEN (listen), on SQLite by
// probing its data version (probe). The channel closes when ctx ends.
func (s *Store) Watch(ctx context.Context) (<-chan struct{}, error) {
	if s.pgPool == nil {
		return s.probe(ctx)
	}
	return s.watchPostgres(ctx), nil
}

// probe reads PRAGMA data_version every ProbeEvery on a connection of its
// own and hints when it changed: SQLite changes it on a connection when
// any other connection, in this process or another, committed to the
// file. A probe reads the WAL index in shared memory, not the table, so an
// idle watch costs the same at any size. A failed probe hints too: the
// poll it brings reports the failure.
func (s *Store) probe(ctx context.Context) (<-chan struct{}, error) {
	c, err := s.sqliteDB.Conn(ctx)
	if err != nil {
		return nil, s.classify("watch", "", err)
	}
	stmt, err := c.PrepareContext(ctx, "PRAGMA data_version")
	if err != nil {
		c.Close()
		return nil, s.classify("watch", "", err)
	}
	version := func() (v int64, err error) {
		err = stmt.QueryRowContext(ctx).Scan(&v)
		return v, err
	}
	last, err := version()
	if err != nil {
		stmt.Close()
		c.Close()
		return nil, s.classify("watch", "", err)
	}
	hints := make(chan struct{}, 1)
	go func() {
		defer close(hints)
		defer c.Close()
		defer stmt.Close()
		tick := time.NewTicker(s.cfg.ProbeEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			v, err := version()
			if ctx.Err() != nil {
				return
			}
			if err != nil || v != last {
				last = v
				hint(hints)
			}
		}
	}()
	return hints, nil
}

// watchPostgres listens for the NOTIFY the migration's statement trigger sends on
// every change to the table, and passes a hint for each (coalesced: a slow
// reader sees one hint for many changes). While NOTIFYs come faster than
// Config.ListenPause it stops listening for a pause at a time, and hints
// after each. A lost connection is retried with backoff; the channel closes when
// ctx ends.
func (s *Store) watchPostgres(ctx context.Context) <-chan struct{} {
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
	return hints
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
