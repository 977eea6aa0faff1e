package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

func TestMarkEscalationSQLite(t *testing.T) {
	testMarkEscalation(t, openSQLite(t, Config{Create: true, SeedTimeout: time.Hour}))
}

func TestMarkEscalationPostgres(t *testing.T) {
	pgDSN(t)
	testMarkEscalation(t, openPG(t, Config{Create: true, SeedTimeout: time.Hour}))
}

func testMarkEscalation(t *testing.T, s *Store) {
	ctx := context.Background()
	defer s.Close()
	create := func(title string) string {
		t.Helper()
		task, err := s.Create(ctx, sources.NewTask{Title: title})
		if err != nil {
			t.Fatal(err)
		}
		return task.ID
	}
	get := func(id string) *model.Task {
		t.Helper()
		task, err := s.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return task
	}

	// An agent on a node that went DOWN, its lease still running: marked
	// stale, the lease ends now, and another node's agent can claim it once
	// the grace has passed.
	down := create("held on a dead node")
	held, err := s.Claim(ctx, down, sources.ClaimRequest{Agent: "alpha-1", Node: "ALPHA", Lease: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.MarkEscalation(ctx, down, "not-the-token", model.LevelStale); !errors.Is(err, model.ErrLostLock) {
		t.Fatalf("mark with a wrong token = %v, want LOST_LOCK", err)
	}
	if got := get(down); got.Escalated != model.LevelNone || got.Version != held.Version {
		t.Fatalf("a refused mark changed the row: level %s, version %s → %s", got.Escalated, held.Version, got.Version)
	}
	if err := s.MarkEscalation(ctx, down, held.Claim().Token, model.LevelStale); err != nil {
		t.Fatal(err)
	}
	marked := get(down)
	if marked.Escalated != model.LevelStale || marked.Version == held.Version || !marked.Claim().Expires.Time().Before(held.Claim().Expires.Time()) {
		t.Fatalf("after the mark: level %s, version %s, lease %s (was %s)", marked.Escalated, marked.Version, marked.Claim().Expires, held.Claim().Expires)
	}
	if n := len(marked.More().History); n == 0 || marked.More().History[n-1].Action != "escalate" || marked.More().History[n-1].Detail != "level stale" {
		t.Errorf("audit trail: %+v", marked.More().History)
	}
	for _, h := range marked.More().History {
		if strings.Contains(h.Detail+h.Reason, held.Claim().Token) {
			t.Error("the audit trail carries the lock token")
		}
	}
	// Idempotent, and never lowered.
	if err := s.MarkEscalation(ctx, down, held.Claim().Token, model.LevelUrgent); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkEscalation(ctx, down, held.Claim().Token, model.LevelStale); err != nil {
		t.Fatalf("a second sweep marking a lower level: %v", err)
	}
	if got := get(down).Escalated; got != model.LevelUrgent {
		t.Fatalf("level = %s, want urgent kept", got)
	}
	if _, err := s.Claim(ctx, down, sources.ClaimRequest{Agent: "charlie-1", Node: "CHARLIE"}); !errors.Is(err, model.ErrConflict) {
		t.Fatalf("a claim within the grace after the mark = %v, want CONFLICT", err)
	}
	backdate(t, s, down, model.DefaultPolicy().Grace)
	taken, err := s.Claim(ctx, down, sources.ClaimRequest{Agent: "charlie-1", Node: "CHARLIE"})
	if err != nil {
		t.Fatalf("the DOWN node's claim is not claimable a grace after the mark: %v", err)
	}
	if taken.Escalated != model.LevelNone {
		t.Errorf("a new claim inherits escalation %s", taken.Escalated)
	}
	if _, err := s.Heartbeat(ctx, down, held.Claim().Token, time.Hour); !errors.Is(err, model.ErrLostLock) {
		t.Errorf("the dead node's agent heartbeat after the takeover = %v, want LOST_LOCK", err)
	}
	if err := s.MarkEscalation(ctx, down, held.Claim().Token, model.LevelNotify); !errors.Is(err, model.ErrLostLock) {
		t.Errorf("marking with the old token after a re-claim = %v, want LOST_LOCK", err)
	}

	// A human's claim is never marked, whatever token is named.
	human := create("taken over")
	h, err := s.Takeover(ctx, human, sources.Human{Actor: "alice", Expect: get(human).Version})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.MarkEscalation(ctx, human, h.Claim().Token, model.LevelStale); !errors.Is(err, model.ErrLostLock) {
		t.Errorf("marking a HUMAN claim = %v, want LOST_LOCK", err)
	}

	// A row claimed by the seed's own SQL has no token: it is marked only
	// once its seed lease has run out, and its lease is left alone.
	seed := create("claimed by seed SQL")
	claimSQL := strings.ReplaceAll(seedSQL(seedClaim, seed), "governance_tasks", s.table)
	if _, err := s.db.exec(ctx, claimSQL); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkEscalation(ctx, seed, "", model.LevelStale); !errors.Is(err, model.ErrLostLock) {
		t.Errorf("marking a live seed claim = %v, want LOST_LOCK", err)
	}
	old := s.d.timeArg(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	if _, err := s.db.exec(ctx, "UPDATE "+s.table+" SET started_at = $1 WHERE id = $2", old, seed); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkEscalation(ctx, seed, "", model.LevelEscalated); err != nil {
		t.Fatal(err)
	}
	if got := get(seed); got.Escalated != model.LevelEscalated || got.Claim().Expires.Time().Year() != 2020 {
		t.Errorf("seed row after the mark: level %s, lease %s", got.Escalated, got.Claim().Expires)
	}

	if err := s.MarkEscalation(ctx, "no-such-task", "tok", model.LevelStale); !errors.Is(err, model.ErrNoSuchTask) {
		t.Errorf("unknown task = %v", err)
	}
	if err := s.MarkEscalation(ctx, seed, "", model.LevelNone); model.CodeOf(err) != model.CodeMisconfigured {
		t.Errorf("level none = %v", err)
	}
}

func TestMarkEscalationNeedsMigrate(t *testing.T) {
	path := t.TempDir() + "/governance.db"
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(strings.ReplaceAll(seedTable, "TIMESTAMPTZ", "TEXT")); err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw := openSQLite(t, Config{Path: path})
	defer raw.Close()
	if err := raw.MarkEscalation(context.Background(), "abc-123-456", "", model.LevelStale); model.CodeOf(err) != model.CodeMisconfigured {
		t.Errorf("mark on an unmigrated table = %v, want MISCONFIGURED", err)
	}
}
