package lockdir

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// FuzzMoveMarker feeds arbitrary bytes to the move marker's reader: it
// never panics; what it reads is a frozen or moved mark naming a target,
// which writes back to the same mark; anything else is MISCONFIGURED naming
// the file, and a write then refused changes no task.
func FuzzMoveMarker(f *testing.F) {
	for _, seed := range []string{
		`{"state":"frozen","to":"governance","at":"2026-12-06T07:00:00Z"}`,
		`{"state":"moved","to":"local","at":"2026-12-06T07:00:00.123456789Z"}`,
		`{"state":"none","to":"x"}`, `{"state":"moved","to":""}`, `{"state":"melted","to":"x"}`,
		`{"state":"frozen","to":"x","at":"yesterday"}`, `{}`, `[]`, `null`, `{`, ``, "\x00",
	} {
		f.Add([]byte(seed))
	}
	dir := f.TempDir()
	s, err := Open(Config{Name: "locks", Path: dir})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, moveName), data, 0o600); err != nil {
			t.Fatal(err)
		}
		m, err := s.readMark()
		if err != nil {
			if model.CodeOf(err) != model.CodeMisconfigured || !strings.Contains(err.Error(), moveName) {
				t.Fatalf("marker %q: %v, want MISCONFIGURED naming %s", data, err, moveName)
			}
			if _, err := s.Claim(context.Background(), "t-1", sources.ClaimRequest{Agent: "a"}); err == nil {
				t.Fatalf("marker %q: a claim landed under a marker that does not read", data)
			}
			if _, err := s.Get(sources.PastMark(context.Background()), "t-1"); !errors.Is(err, model.ErrNoSuchTask) {
				t.Fatalf("marker %q: a refused claim left a task: %v", data, err)
			}
			return
		}
		if m.State == sources.MoveNone || m.To == "" {
			t.Fatalf("marker %q read as %+v: a mark names its state and target", data, m)
		}
		if err := s.writeMark(&m); err != nil {
			t.Fatal(err)
		}
		again, err := s.readMark()
		if err != nil || again.State != m.State || again.To != m.To || !again.At.Equal(m.At) {
			t.Fatalf("marker %q: %+v written back reads %+v, %v", data, m, again, err)
		}
	})
}

// A write under a marker is refused under the directory's write lock;
// the marker's own writes are not.
func TestMoveMarkerRefusesWrites(t *testing.T) {
	ctx := context.Background()
	s, err := Open(Config{Name: "locks", Path: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Freeze(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if err := s.Freeze(ctx, "c"); model.CodeOf(err) != model.CodeConflict {
		t.Fatalf("freeze towards another target: %v, want CONFLICT", err)
	}
	if _, err := s.Claim(ctx, "t-1", sources.ClaimRequest{Agent: "a"}); model.CodeOf(err) != model.CodeAPIError || !strings.Contains(err.Error(), "frozen") {
		t.Fatalf("claim while frozen: %v", err)
	}
	if err := s.MarkMoved(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	_, err = s.Claim(ctx, "t-1", sources.ClaimRequest{Agent: "a"})
	if to, ok := sources.MovedTo(err); !ok || to != "b" {
		t.Fatalf("claim once moved: %v", err)
	}
	m, err := s.MoveMark(ctx)
	if err != nil || m.State != sources.MoveDone || time.Since(m.At) > time.Minute {
		t.Fatalf("mark: %+v %v", m, err)
	}
	if err := s.Thaw(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Claim(ctx, "t-1", sources.ClaimRequest{Agent: "a"}); err != nil {
		t.Fatalf("claim after the thaw: %v", err)
	}
}
