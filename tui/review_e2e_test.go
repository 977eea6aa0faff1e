package tui

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/lockdir"
	"github.com/claimdeck/claimdeck/sources/notion"
	"github.com/claimdeck/claimdeck/sources/notion/notionemu"
	"github.com/claimdeck/claimdeck/sources/sqlstore"
)

var reviewTables atomic.Int64

// reviewBackends open an empty queue of each kind: SQLite, PostgreSQL
// (when CLAIMDECK_TEST_PG_DSN names a server), a lock directory, and the
// Notion emulator holding seed 002's database and one set up by today's
// notion-task skill.
var reviewBackends = []struct {
	name string
	open func(t *testing.T) sources.Source
}{
	{"sqlite", func(t *testing.T) sources.Source {
		return openSQL(t, sqlstore.Config{Name: "local", Driver: "sqlite", Path: filepath.Join(t.TempDir(), "queue.db"), Create: true})
	}},
	{"postgres", func(t *testing.T) sources.Source {
		dsn := os.Getenv("CLAIMDECK_TEST_PG_DSN")
		if dsn == "" {
			t.Skip("set CLAIMDECK_TEST_PG_DSN (bash .ci/run starts a throwaway cluster and sets it)")
		}
		table := fmt.Sprintf("review_e2e_%d_%d", os.Getpid(), reviewTables.Add(1))
		return openSQL(t, sqlstore.Config{Name: "local", Driver: "postgres", DSN: dsn, Table: table, Create: true})
	}},
	{"lockdir", func(t *testing.T) sources.Source {
		src, err := lockdir.Open(lockdir.Config{Name: "local", Path: filepath.Join(t.TempDir(), ".locks")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = src.Close() })
		return src
	}},
	{"notion-seed-002", func(t *testing.T) sources.Source { return openNotion(t, notionemu.PresetNtask()) }},
	{"notion-today", func(t *testing.T) sources.Source { return openNotion(t, notionemu.PresetToday()) }},
}

func openSQL(t *testing.T, cfg sqlstore.Config) sources.Source {
	t.Helper()
	st, err := sqlstore.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// openNotion serves the emulator on 127.0.0.1 with one database.
func openNotion(t *testing.T, schema notionemu.DatabaseSchema) sources.Source {
	t.Helper()
	srv := notionemu.New(notionemu.Options{RateLimit: &notionemu.RateLimit{}})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	const token = "secret_review_e2e"
	srv.AddToken(token)
	db, err := srv.CreateDatabase(schema, token)
	if err != nil {
		t.Fatal(err)
	}
	src, err := notion.Open(context.Background(), notion.Config{Name: "local", Token: token, DatabaseID: db, BaseURL: ts.URL,
		Rate: -1, Settle: 10 * time.Millisecond, RetryBase: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// The dashboard drives a person's and a reviewer's work end to end on
// every backend: take over -> complete; an agent's review -> rework with
// a reason -> the agent claims it again -> review -> approve.
func TestE2ETakeOverCompleteAndTheReviewersLoopOnEveryBackend(t *testing.T) {
	for _, b := range reviewBackends {
		t.Run(b.name, func(t *testing.T) {
			src := b.open(t)
			ctx := context.Background()
			mine, err := src.Create(ctx, sources.NewTask{Title: "Rotate the TLS certificates"})
			if err != nil {
				t.Fatal(err)
			}
			reviewed, err := src.Create(ctx, sources.NewTask{Title: "Split the parser"})
			if err != nil {
				t.Fatal(err)
			}
			review := func(agent string) {
				t.Helper()
				held, err := src.Claim(ctx, reviewed.ID, sources.ClaimRequest{Agent: agent})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := src.Finish(ctx, reviewed.ID, held.Claim().Token, sources.Outcome{State: model.StateReview, Reason: "pr/1"}); err != nil {
					t.Fatal(err)
				}
			}
			review("SANDMAN")
			e := dashboardOn(t, src)
			get := func(id string) *model.Task {
				t.Helper()
				got, err := src.Get(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				return got
			}
			key, rkey := mine.DisplayKey(), reviewed.DisplayKey()
			// The source's line says how it reads the database, where it says.
			e.see("Rotate the TLS certificates", "1 IN REVIEW", strings.TrimSpace("local "+src.Caps().Reads)+" ok")

			// Take over the queued task, then finish it as its holder.
			e.keys("1", "c", "enter", "y")
			e.see("takeover " + key + " applied")
			e.keys("2", "d")
			e.see("Complete my claim " + key)
			e.keys("y")
			e.see("complete " + key + " applied")
			if got := get(mine.ID); got.State != model.StateDone || got.Held() {
				t.Fatalf("after complete: %s held by %q", got.State, got.Claim().Name)
			}

			// The Review row waits first in Parked: send it back.
			e.keys("6", "w", "enter")
			e.see("a reason is required")
			for _, r := range "keep the comments" {
				e.keys(string(r))
			}
			e.keys("enter")
			e.see("keep the comments", "[y/N]")
			e.keys("y")
			e.see("rework " + rkey + " applied")
			if got := get(reviewed.ID); got.State != model.StateQueued || got.Held() {
				t.Fatalf("after rework: %s held by %q", got.State, got.Claim().Name)
			}
			review("ORACLE")
			e.see("1 IN REVIEW") // back in Review: counted again
			e.keys("6", "a", "enter")
			e.see("Approve " + rkey)
			e.keys("y")
			e.see("approve " + rkey + " applied")
			if got := get(reviewed.ID); got.State != model.StateDone {
				t.Fatalf("after approve: %s", got.State)
			}

			// A blocked task waits in Parked: unblock it back to the queue.
			parked, err := src.Create(ctx, sources.NewTask{Title: "Wait for the vendor"})
			if err != nil {
				t.Fatal(err)
			}
			held, err := src.Claim(ctx, parked.ID, sources.ClaimRequest{Agent: "SANDMAN"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := src.Finish(ctx, parked.ID, held.Claim().Token, sources.Outcome{State: model.StateBlocked, Reason: "the vendor's key"}); err != nil {
				t.Fatal(err)
			}
			pkey := parked.DisplayKey()
			e.see("Wait for the vendor")
			e.keys("6")
			e.keys("n", "enter")
			e.see("Unblock " + pkey)
			e.keys("y")
			e.see("unblock " + pkey + " applied")
			if got := get(parked.ID); got.State != model.StateQueued || got.Held() {
				t.Fatalf("after unblock: %s held by %q", got.State, got.Claim().Name)
			}
			recs, err := sources.ReadJournal(e.journal)
			if err != nil {
				t.Fatal(err)
			}
			var applied []string
			for _, r := range recs {
				if r.Result == "applied" {
					applied = append(applied, string(r.Action))
				}
			}
			if got := strings.Join(applied, ","); got != "takeover,complete,rework,approve,unblock" {
				t.Fatalf("the journal holds %s", got)
			}
			e.quit()
		})
	}
}
