package sqlstore

import (
	"context"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// A second import of the same id is CONFLICT and writes nothing: neither
// the row nor a second copy of its history.
func TestImportRefusesAnIDItHolds(t *testing.T) {
	ctx := context.Background()
	from := openSQLite(t, Config{Create: true})
	defer from.Close()
	made, err := from.Create(ctx, sources.NewTask{Title: "index rebuild"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := from.Claim(ctx, made.ID, sources.ClaimRequest{Agent: "SANDMAN", RunID: "run-1", Lease: time.Hour}); err != nil {
		t.Fatal(err)
	}
	task, err := from.Get(ctx, made.ID)
	if err != nil {
		t.Fatal(err)
	}
	for name, open := range map[string]func(*testing.T) *Store{
		"sqlite":   func(t *testing.T) *Store { return openSQLite(t, Config{Create: true}) },
		"postgres": func(t *testing.T) *Store { return openPG(t, Config{Create: true}) },
	} {
		t.Run(name, func(t *testing.T) {
			to := open(t)
			defer to.Close()
			if err := to.Import(ctx, task); err != nil {
				t.Fatal(err)
			}
			first, err := to.Get(ctx, task.ID)
			if err != nil {
				t.Fatal(err)
			}
			err = to.Import(ctx, task)
			if model.CodeOf(err) != model.CodeConflict {
				t.Fatalf("a second import: %v, want CONFLICT", err)
			}
			again, err := to.Get(ctx, task.ID)
			if err != nil {
				t.Fatal(err)
			}
			if again.Version != first.Version || len(again.More().History) != len(task.More().History) || again.Claim().Token != task.Claim().Token {
				t.Fatalf("a refused import changed the task: version %s→%s, history %d (want %d)", first.Version, again.Version, len(again.More().History), len(task.More().History))
			}
		})
	}
}
