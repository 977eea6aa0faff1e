package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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

// insertEnv makes this test binary a separate process that inserts one
// row into the SQLite file it names, through database/sql alone, as a
// seed 003 agent's own SQL would.
const insertEnv = "CLAIMDECK_SQLITE_TEST_INSERT"

func sqliteInsert(path string) int {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err == nil {
		_, err = db.Exec("INSERT INTO governance_tasks (id, title, status, assigned_worker) VALUES (?, 'from another process', 'pending', 'claude-chat')", fmt.Sprint(os.Getpid()))
		db.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// A SQLite store hints at a row another process wrote, and again at the
// next one.
func TestSQLiteWatchSeesAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "queue.db")
	s := openSQLite(t, Config{Create: true, Path: path})
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	hints, err := s.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		for len(hints) > 0 {
			<-hints
		}
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), insertEnv+"="+path)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the other process: %v\n%s", err, out)
		}
		select {
		case <-hints:
		case <-time.After(10 * time.Second):
			t.Fatalf("no hint within 10 s of insert %d by another process", i+1)
		}
	}
	cancel()
	for range hints { // the channel closes when the context ends
	}
}
