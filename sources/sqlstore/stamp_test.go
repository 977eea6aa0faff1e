package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// stampedQueue is a PostgreSQL store over a migrated table holding one
// task, polled once in full, and a connection of someone else's.
func stampedQueue(t *testing.T, overlap time.Duration) (*Store, *model.Task, sources.Cursor, *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	s := openPG(t, Config{Create: true, Overlap: overlap})
	t.Cleanup(func() { s.Close() })
	if st, _ := s.stmts(); !st.stamped {
		t.Fatal("a table migrated now is not stamped")
	}
	task, err := s.Create(ctx, sources.NewTask{Title: "stamped"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.Poll(ctx, "")
	if err != nil || len(d.Tasks) != 1 {
		t.Fatalf("full poll: %d tasks, %v", len(d.Tasks), err)
	}
	other, err := pgx.Connect(ctx, s.cfg.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close(ctx) })
	return s, task, d.Cursor, other
}

func polled(t *testing.T, s *Store, cur sources.Cursor) sources.Delta {
	t.Helper()
	d, err := s.Poll(context.Background(), cur)
	if err != nil || d.Full {
		t.Fatalf("incremental poll: full=%v, %v", d.Full, err)
	}
	return d
}

// A transaction that writes a row, outlives a poll and the overlap, and
// commits afterwards: the next poll still reads the row, where a time
// watermark would have passed it.
func TestPollReadsATransactionThatCommitsAfterThePoll(t *testing.T) {
	ctx := context.Background()
	s, task, cur, other := stampedQueue(t, time.Millisecond)
	tx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, fmt.Sprintf("UPDATE %s SET title = 'late' WHERE id = $1", s.table), task.ID); err != nil {
		t.Fatal(err)
	}
	// A later transaction commits first, so that the late one is among
	// those the poll's snapshot lists as in progress (below its xmax),
	// not past the xmax.
	if _, err := s.Create(ctx, sources.NewTask{Title: "committed first"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // the write is older than the overlap
	during := polled(t, s, cur)
	var c cursor
	if err := json.Unmarshal([]byte(during.Cursor), &c); err != nil || len(c.XIP) == 0 {
		t.Fatalf("the poll's snapshot lists no transaction in progress (%s, %v)", during.Cursor, err)
	}
	for _, read := range during.Tasks {
		if read.Title == "late" {
			t.Fatal("a poll read an uncommitted write")
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	after := polled(t, s, during.Cursor)
	if len(after.Tasks) != 1 || after.Tasks[0].Title != "late" {
		t.Fatalf("the poll after the commit read %d tasks, not the late write", len(after.Tasks))
	}
}

// A poll reads a change once: the next one, within the overlap, reads
// nothing again.
func TestPollReadsAChangeOnce(t *testing.T) {
	ctx := context.Background()
	s, task, cur, _ := stampedQueue(t, 0)
	if _, err := s.Claim(ctx, task.ID, sources.ClaimRequest{Agent: "a"}); err != nil {
		t.Fatal(err)
	}
	first := polled(t, s, cur)
	if len(first.Tasks) != 1 || first.Tasks[0].State != model.StateClaimed {
		t.Fatalf("the poll after a claim read %d tasks", len(first.Tasks))
	}
	if again := polled(t, s, first.Cursor); len(again.Tasks) != 0 {
		t.Fatalf("the next poll read the claim again (%d tasks)", len(again.Tasks))
	}
}

// A row written without a stamp (under an older claimdeck's trigger) is
// still read, by its time.
func TestPollReadsAnUnstampedWrite(t *testing.T) {
	ctx := context.Background()
	s, task, cur, other := stampedQueue(t, 0)
	for _, q := range []string{
		"ALTER TABLE %s DISABLE TRIGGER claimdeck_touch",
		"UPDATE %s SET title = 'unstamped', " + stampColumn + " = NULL, updated_at = clock_timestamp(), version = version + 1",
		"ALTER TABLE %s ENABLE TRIGGER claimdeck_touch",
	} {
		if _, err := other.Exec(ctx, fmt.Sprintf(q, s.table)); err != nil {
			t.Fatal(err)
		}
	}
	d := polled(t, s, cur)
	if len(d.Tasks) != 1 || d.Tasks[0].ID != task.ID || d.Tasks[0].Title != "unstamped" {
		t.Fatalf("the poll after an unstamped write read %d tasks", len(d.Tasks))
	}
}

// A table an older claimdeck migrated has no stamp: it works, polled by
// time, and Behind says what `claimdeck migrate` would add, until it has.
func TestBehindNamesTheMissingStampUntilMigrate(t *testing.T) {
	ctx := context.Background()
	s := openPG(t, Config{Create: true})
	if b := s.Behind(); b != "" {
		t.Fatalf("a table migrated now is behind: %q", b)
	}
	if _, err := s.db.exec(ctx, fmt.Sprintf("ALTER TABLE %s DROP COLUMN %s", s.table, stampColumn)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	old := openPG(t, Config{Table: s.cfg.Table})
	defer old.Close()
	if !old.Migrated() || !strings.Contains(old.Behind(), "transaction stamp") {
		t.Fatalf("migrated=%v, behind=%q: want a migrated table behind by its stamp", old.Migrated(), old.Behind())
	}
	if _, err := old.Poll(ctx, ""); err != nil {
		t.Fatalf("a table without the stamp must still poll: %v", err)
	}
	if err := old.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if b := old.Behind(); b != "" {
		t.Fatalf("after Migrate still behind: %q", b)
	}
}

// A time PostgreSQL holds but Go cannot (infinity) marks its task broken,
// naming the value, and the poll goes on: the same on pgx's direct path
// for a timestamptz as through database/sql's.
func TestAnInfiniteTimeMarksItsTaskBroken(t *testing.T) {
	ctx := context.Background()
	s, task, cur, other := stampedQueue(t, 0)
	if _, err := other.Exec(ctx, fmt.Sprintf("UPDATE %s SET lease_expires_at = 'infinity' WHERE id = $1", s.table), task.ID); err != nil {
		t.Fatal(err)
	}
	for _, d := range []sources.Delta{polled(t, s, cur), func() sources.Delta {
		d, err := s.Poll(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		return d
	}()} {
		if len(d.Tasks) != 1 || !strings.Contains(d.Tasks[0].More().Problem, `"infinity"`) {
			t.Fatalf("the poll read %d tasks, the first with problem %q", len(d.Tasks), firstProblem(d))
		}
	}
}

func firstProblem(d sources.Delta) string {
	if len(d.Tasks) == 0 {
		return ""
	}
	return d.Tasks[0].More().Problem
}
