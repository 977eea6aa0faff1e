package sqlstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// watched opens a PostgreSQL store, watches it until the test ends or
// stop is called, and connects to its server as someone else would.
func watched(t *testing.T, cfg Config) (s *Store, hints <-chan struct{}, other *pgx.Conn, stop func()) {
	t.Helper()
	s = openPG(t, cfg)
	t.Cleanup(func() { s.Close() })
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	hints, err := s.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	other, err = pgx.Connect(ctx, s.cfg.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close(context.Background()) })
	return s, hints, other, stop
}

// A watcher that hears two NOTIFYs within ListenPause stops listening for
// the pause, so that a busy table does not wake it for every change; a
// change made while it does not listen still reaches it as a hint once it
// listens again.
func TestWatchPausesOnABusyTableAndHintsAfter(t *testing.T) {
	s, hints, other, _ := watched(t, Config{Create: true, ListenPause: time.Second})
	ctx := context.Background()
	<-hints // listening
	insert := func(id string) {
		t.Helper()
		q := fmt.Sprintf("INSERT INTO %s (id, title, status, assigned_worker) VALUES ($1, 'busy', 'pending', 'claude-chat')", s.table)
		if _, err := other.Exec(ctx, q, id); err != nil {
			t.Fatal(err)
		}
	}
	insert("w1")
	insert("w2")
	// The watcher's connection last ran UNLISTEN: it is pausing.
	paused := fmt.Sprintf("SELECT count(*) FROM pg_stat_activity WHERE query = 'UNLISTEN %s'", pgx.Identifier{s.channel}.Sanitize())
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var n int
		if err := other.QueryRow(ctx, paused).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("two NOTIFYs in a row did not make the watcher stop listening")
		}
	}
	for len(hints) > 0 {
		<-hints
	}
	insert("w3") // no NOTIFY reaches the watcher now
	select {
	case <-hints:
	case <-time.After(10 * time.Second):
		t.Fatal("no hint after the pause for a change made during it")
	}
}
