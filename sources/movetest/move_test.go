package movetest_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	_ "modernc.org/sqlite"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/lockdir"
	"github.com/claimdeck/claimdeck/sources/movetest"
	"github.com/claimdeck/claimdeck/sources/sourcetest/lincheck"
	"github.com/claimdeck/claimdeck/sources/sourcetest/memsource"
	"github.com/claimdeck/claimdeck/sources/sqlstore"
)

const (
	lease = 2 * time.Second
	grace = time.Second
)

// stores is a configuration: each name opens a real store.
type stores map[string]func(ctx context.Context, prepare bool) (sources.Source, error)

func (s stores) open(ctx context.Context, name string, prepare bool) (sources.Source, error) {
	o, ok := s[name]
	if !ok {
		return nil, model.Errorf(model.CodeMisconfigured, "", "", "--source %q: no such source in the configuration", name)
	}
	return o(ctx, prepare)
}

// follow opens name as the doors do.
func (s stores) follow(ctx context.Context, name string) (sources.Source, error) {
	src, err := s.open(ctx, name, false)
	if err != nil {
		return nil, err
	}
	return sources.Follow(src, s.follow), nil
}

// keep writes the lane's history into dir.
func keep(t *testing.T, dir string, res movetest.Result) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, o := range res.Ops {
		if err := lincheck.WriteOp(f, o); err != nil {
			t.Fatal(err)
		}
	}
	if !res.Lin.Linearizable() {
		if err := res.Lin.Visualize(filepath.Join(dir, "violations.html")); err != nil {
			t.Error(err)
		}
	}
}

func sqlite(name, path string) func(context.Context, bool) (sources.Source, error) {
	return func(ctx context.Context, prepare bool) (sources.Source, error) {
		return sqlstore.Open(ctx, sqlstore.Config{Name: name, Driver: "sqlite", Path: path, Create: prepare, MustExist: !prepare, Lease: lease, Grace: grace})
	}
}

func postgres(name, dsn, table string) func(context.Context, bool) (sources.Source, error) {
	return func(ctx context.Context, prepare bool) (sources.Source, error) {
		return sqlstore.Open(ctx, sqlstore.Config{Name: name, Driver: "postgres", DSN: dsn, Table: table, Create: prepare, MustExist: !prepare, Lease: lease, Grace: grace})
	}
}

func lockDir(name, path string) func(context.Context, bool) (sources.Source, error) {
	return func(ctx context.Context, prepare bool) (sources.Source, error) {
		return lockdir.Open(lockdir.Config{Name: name, Path: path, MustExist: !prepare, Lease: lease, Grace: grace})
	}
}

func pgDSN(t *testing.T) string { return pgDSNOf(t) }

func pgDSNOf(tb testing.TB) string {
	dsn := os.Getenv("CLAIMDECK_TEST_PG_DSN")
	if dsn == "" {
		tb.Skip("CLAIMDECK_TEST_PG_DSN is not set (bash .ci/pg-start DIR PORT)")
	}
	return dsn
}

// pgTable is a table name of this test's own, in the shared cluster.
func pgTable() string { return "move_" + strings.ReplaceAll(uuid.NewString()[:8], "-", "") }

// runLane runs the lane from one source to another: 8 agents on 40 tasks,
// 12 on 200 with FAULTS_LONG set (the fault suite's long run). With
// FAULTS_HISTORIES set the history is kept there (move-NAME/history.jsonl,
// and violations.html beside it when it is not linearizable).
func runLane(t *testing.T, s stores, from, to string) movetest.Result {
	t.Helper()
	cfg := movetest.Config{From: from, To: to, Open: s.open, Lease: lease, Grace: grace, Agents: 8, Tasks: 40}
	if os.Getenv("FAULTS_LONG") != "" {
		cfg.Agents, cfg.Tasks, cfg.Kills, cfg.Timeout = 12, 200, 6, 10*time.Minute
	}
	res, err := movetest.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("FAULTS_HISTORIES"); dir != "" {
		keep(t, filepath.Join(dir, "move-"+from+"-"+to), res)
	}
	t.Logf("%s: moved %d tasks (%d already there), frozen %s, dry run listed %d; %d retryable answers during the freeze; %d heartbeats of the carried claim after the move; %s",
		res.Elapsed.Round(time.Millisecond), len(res.Move.Tasks), len(res.Move.Already), res.Move.Frozen.Round(time.Millisecond), len(res.DryRun.Tasks), res.Frozen, res.CarriedBeats, res.Lin)
	for _, p := range res.Problems {
		t.Error(p)
	}
	if res.CarriedBeats < 3 {
		t.Errorf("the carried claim heartbeat %d times after the move, want 3", res.CarriedBeats)
	}
	return res
}

// TestMoveSQLiteToPostgres moves a live SQLite queue into an empty
// PostgreSQL table (made by the move) under agents.
func TestMoveSQLiteToPostgres(t *testing.T) {
	dsn := pgDSN(t)
	s := stores{
		"local":      sqlite("local", filepath.Join(t.TempDir(), "queue.db")),
		"governance": postgres("governance", dsn, pgTable()),
	}
	res := runLane(t, s, "local", "governance")
	if !res.Move.Prepare || !res.DryRun.Prepare {
		t.Errorf("the empty database's table was not reported as made (dry run %v, move %v)", res.DryRun.Prepare, res.Move.Prepare)
	}
}

// TestMoveLockdirToSQLite moves a live lock directory into a SQLite file.
func TestMoveLockdirToSQLite(t *testing.T) {
	dir := t.TempDir()
	s := stores{
		"locks": lockDir("locks", filepath.Join(dir, "locks")),
		"local": sqlite("local", filepath.Join(dir, "queue.db")),
	}
	runLane(t, s, "locks", "local")
}

// TestMoveSQLiteToLockdir moves a live SQLite queue into a lock directory.
func TestMoveSQLiteToLockdir(t *testing.T) {
	dir := t.TempDir()
	s := stores{
		"local": sqlite("local", filepath.Join(dir, "queue.db")),
		"locks": lockDir("locks", filepath.Join(dir, "locks")),
	}
	runLane(t, s, "local", "locks")
}

// TestMovePostgresToSQLite moves a live PostgreSQL table into SQLite.
func TestMovePostgresToSQLite(t *testing.T) {
	dsn := pgDSN(t)
	s := stores{
		"governance": postgres("governance", dsn, pgTable()),
		"local":      sqlite("local", filepath.Join(t.TempDir(), "queue.db")),
	}
	runLane(t, s, "governance", "local")
}

func made(t *testing.T, ctx context.Context, src sources.Source, n int) []*model.Task {
	t.Helper()
	var out []*model.Task
	for i := range n {
		task, err := src.Create(ctx, sources.NewTask{ID: fmt.Sprintf("t-%02d", i), Title: fmt.Sprintf("task %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, task)
	}
	return out
}

// opened opens name's store, making it, with n tasks in it.
func opened(t *testing.T, s stores, name string, n int) (sources.Source, []*model.Task) {
	t.Helper()
	src, err := s.open(context.Background(), name, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src, made(t, context.Background(), src, n)
}

func target(s stores, name string) sources.Target {
	return sources.Target{Name: name, Open: func(ctx context.Context, prepare bool) (sources.Source, error) {
		return s.open(ctx, name, prepare)
	}}
}

// TestMoveRefusals: a second move is refused, as is a move into a target
// holding a different task with the same id (naming it, the origin left
// serving), and the answers a frozen and a moved origin give.
func TestMoveRefusals(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := stores{
		"a": sqlite("a", filepath.Join(dir, "a.db")),
		"b": sqlite("b", filepath.Join(dir, "b.db")),
		"c": lockDir("c", filepath.Join(dir, "c")),
	}
	a, _ := opened(t, s, "a", 3)
	c, _ := s.open(ctx, "c", true)
	defer c.Close()
	if _, err := c.Create(ctx, sources.NewTask{ID: "t-01", Title: "another task 1"}); err != nil {
		t.Fatal(err)
	}

	_, err := sources.Move(ctx, a, target(s, "c"), sources.MoveOptions{})
	if model.CodeOf(err) != model.CodeConflict || !strings.Contains(err.Error(), "t-01") {
		t.Fatalf("move into a target holding another t-01: %v, want CONFLICT naming t-01", err)
	}
	if m, _ := a.(sources.Movable).MoveMark(ctx); m.State != sources.MoveNone {
		t.Fatalf("a refused move left the origin %s", m.State)
	}
	if _, err := a.Claim(ctx, "t-00", sources.ClaimRequest{Agent: "x"}); err != nil {
		t.Fatalf("the origin does not serve after a refused move: %v", err)
	}

	rep, err := sources.Move(ctx, a, target(s, "b"), sources.MoveOptions{})
	if err != nil || len(rep.Tasks) != 3 {
		t.Fatalf("move: %+v %v", rep, err)
	}
	_, err = sources.Move(ctx, a, target(s, "b"), sources.MoveOptions{})
	if model.CodeOf(err) != model.CodeConflict || !strings.Contains(err.Error(), "already moved to b") {
		t.Fatalf("second move: %v, want CONFLICT: already moved", err)
	}
	_, err = sources.Move(ctx, a, target(s, "c"), sources.MoveOptions{})
	if model.CodeOf(err) != model.CodeConflict {
		t.Fatalf("move of a moved source elsewhere: %v, want CONFLICT", err)
	}
	b, _ := s.open(ctx, "b", false)
	defer b.Close()
	_, err = sources.Move(ctx, b, target(s, "a"), sources.MoveOptions{})
	if model.CodeOf(err) != model.CodeConflict || !strings.Contains(err.Error(), "undo") {
		t.Fatalf("move back into the moved origin: %v, want CONFLICT pointing to undo", err)
	}

	// The raw origin answers a move, never MISCONFIGURED, for writes and reads.
	for what, call := range map[string]func() error{
		"claim":     func() error { _, err := a.Claim(ctx, "t-02", sources.ClaimRequest{Agent: "y"}); return err },
		"heartbeat": func() error { _, err := a.Heartbeat(ctx, "t-00", "no-such-token", 0); return err },
		"get":       func() error { _, err := a.Get(ctx, "t-02"); return err },
		"next":      func() error { _, err := a.Next(ctx, "y"); return err },
	} {
		err := call()
		if to, ok := sources.MovedTo(err); !ok || to != "b" || model.CodeOf(err) != model.CodeAPIError {
			t.Errorf("%s on the moved origin: %v, want API_ERROR: moved to b", what, err)
		}
	}
}

// TestFrozenWritesAreRetryable: while frozen, every write is refused with
// API_ERROR (ntask exit 30), nothing lands, and reads serve.
func TestFrozenWritesAreRetryable(t *testing.T) {
	ctx := context.Background()
	stores := map[string]func(context.Context, bool) (sources.Source, error){
		"sqlite":  sqlite("a", filepath.Join(t.TempDir(), "a.db")),
		"lockdir": lockDir("a", filepath.Join(t.TempDir(), "a")),
	}
	if dsn := os.Getenv("CLAIMDECK_TEST_PG_DSN"); dsn != "" {
		stores["postgres"] = postgres("a", dsn, pgTable())
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			a, err := open(ctx, true)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			ts := made(t, ctx, a, 2)
			held, err := a.Claim(ctx, ts[0].ID, sources.ClaimRequest{Agent: "x"})
			if err != nil {
				t.Fatal(err)
			}
			if err := a.(sources.Movable).Freeze(ctx, "b"); err != nil {
				t.Fatal(err)
			}
			writes := map[string]func() error{
				"create":    func() error { _, err := a.Create(ctx, sources.NewTask{ID: "t-09", Title: "new"}); return err },
				"claim":     func() error { _, err := a.Claim(ctx, ts[1].ID, sources.ClaimRequest{Agent: "y"}); return err },
				"claimnext": func() error { _, err := a.ClaimNext(ctx, sources.ClaimRequest{Agent: "y"}); return err },
				"heartbeat": func() error { _, err := a.Heartbeat(ctx, held.ID, held.Claim().Token, 0); return err },
				"complete": func() error {
					_, err := a.Finish(ctx, held.ID, held.Claim().Token, sources.Outcome{State: model.StateDone})
					return err
				},
				"comment": func() error { return a.Comment(ctx, held.ID, sources.Note{Author: "x", Text: "hi"}) },
			}
			for what, call := range writes {
				if err := call(); !errors.Is(err, sources.ErrFrozen) || model.CodeOf(err) != model.CodeAPIError || model.CodeOf(err).ExitStatusV1() != 30 {
					t.Errorf("%s while frozen: %v, want API_ERROR (exit 30): frozen", what, err)
				}
			}
			now, err := a.Get(ctx, held.ID)
			if err != nil {
				t.Fatalf("a read while frozen: %v", err)
			}
			if now.Version != held.Version || now.State != model.StateClaimed {
				t.Errorf("a write landed while frozen: %s version %s, was %s", now.State, now.Version, held.Version)
			}
			if _, err := a.Get(ctx, "t-09"); !errors.Is(err, model.ErrNoSuchTask) {
				t.Errorf("the create landed while frozen: %v", err)
			}
			if err := a.(sources.Movable).Thaw(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := a.Heartbeat(ctx, held.ID, held.Claim().Token, 0); err != nil {
				t.Errorf("heartbeat after the thaw: %v", err)
			}
		})
	}
}

// TestFollowNotConfigured: an origin moved to a source this configuration
// lacks answers MISCONFIGURED naming it and how to add it.
func TestFollowNotConfigured(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := stores{"a": sqlite("a", filepath.Join(dir, "a.db")), "b": sqlite("b", filepath.Join(dir, "b.db"))}
	a, _ := s.open(ctx, "a", true)
	made(t, ctx, a, 1)
	if _, err := sources.Move(ctx, a, target(s, "b"), sources.MoveOptions{}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	delete(s, "b")
	f, err := s.follow(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = f.ClaimNext(ctx, sources.ClaimRequest{Agent: "x"})
	if model.CodeOf(err) != model.CodeMisconfigured || !strings.Contains(err.Error(), "moved to b") || !strings.Contains(err.Error(), "add a source named b") {
		t.Fatalf("claim-next on an origin moved to an unknown source: %v", err)
	}
}

// TestMoveDryRunWritesNothing: the dry run lists every task and makes no
// target, marks nothing.
func TestMoveDryRunWritesNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := stores{"a": lockDir("a", filepath.Join(dir, "a")), "b": sqlite("b", filepath.Join(dir, "b.db"))}
	a, _ := opened(t, s, "a", 4)
	rep, err := sources.Move(ctx, a, target(s, "b"), sources.MoveOptions{DryRun: true})
	if err != nil || len(rep.Tasks) != 4 || !rep.Prepare {
		t.Fatalf("dry run: %d tasks, prepare %v, %v", len(rep.Tasks), rep.Prepare, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "b.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dry run made the target's file: %v", err)
	}
	if m, _ := a.(sources.Movable).MoveMark(ctx); m.State != sources.MoveNone {
		t.Errorf("the dry run left the origin %s", m.State)
	}
}

// TestMoveResumes: a move cut short after the copy (the origin frozen,
// the tasks in the target) is finished by running it again, which skips
// what is there; a target task changed since is CONFLICT naming it.
func TestMoveResumes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := stores{"a": sqlite("a", filepath.Join(dir, "a.db")), "b": sqlite("b", filepath.Join(dir, "b.db"))}
	a, ts := opened(t, s, "a", 3)
	if _, err := a.Claim(ctx, ts[0].ID, sources.ClaimRequest{Agent: "x"}); err != nil {
		t.Fatal(err)
	}
	// cut short: frozen and copied, never marked
	if err := a.(sources.Movable).Freeze(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	b, _ := s.open(ctx, "b", true)
	defer b.Close()
	plan, err := sources.PlanCopy(ctx, a, b, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plan.Apply(ctx, b, nil); err != nil {
		t.Fatal(err)
	}
	rep, err := sources.Move(ctx, a, target(s, "b"), sources.MoveOptions{})
	if err != nil || !rep.Resumed || len(rep.Tasks) != 0 || len(rep.Already) != 3 {
		t.Fatalf("resumed move: resumed %v, %d copied, %d already there: %v", rep.Resumed, len(rep.Tasks), len(rep.Already), err)
	}
	all, _ := b.Poll(ctx, "")
	if len(all.Tasks) != 3 {
		t.Fatalf("the target holds %d tasks after the resumed move, want 3", len(all.Tasks))
	}

	// a target whose copy of a task differs
	c := stores{"c": sqlite("c", filepath.Join(dir, "c.db")), "d": sqlite("d", filepath.Join(dir, "d.db"))}
	cs, _ := opened(t, c, "c", 2)
	ds, _ := c.open(ctx, "d", true)
	defer ds.Close()
	if _, err := ds.Create(ctx, sources.NewTask{ID: "t-01", Title: "task 1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ds.Claim(ctx, "t-01", sources.ClaimRequest{Agent: "z"}); err != nil {
		t.Fatal(err)
	}
	_, err = sources.Move(ctx, cs, target(c, "d"), sources.MoveOptions{})
	if model.CodeOf(err) != model.CodeConflict || !strings.Contains(err.Error(), "t-01") || !strings.Contains(err.Error(), "serves again") {
		t.Fatalf("move into a differing copy: %v, want CONFLICT naming t-01, the origin serving again", err)
	}
}

// TestMoveUndo: a move is undone while the target holds the tasks as the
// move left them; once work happened there, the undo is refused naming it.
func TestMoveUndo(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := stores{"a": sqlite("a", filepath.Join(dir, "a.db")), "b": lockDir("b", filepath.Join(dir, "b"))}
	a, _ := opened(t, s, "a", 2)
	if _, err := sources.Move(ctx, a, target(s, "b"), sources.MoveOptions{}); err != nil {
		t.Fatal(err)
	}
	b, _ := s.open(ctx, "b", false)
	defer b.Close()
	if err := sources.Undo(ctx, a, b); err != nil {
		t.Fatalf("undo of an untouched move: %v", err)
	}
	if _, err := a.Claim(ctx, "t-00", sources.ClaimRequest{Agent: "x"}); err != nil {
		t.Fatalf("the origin does not serve after the undo: %v", err)
	}
	if m, _ := b.(sources.Movable).MoveMark(ctx); m.State != sources.MoveDone || m.To != "a" {
		t.Fatalf("the undo left the target %s towards %q, want moved to a", m.State, m.To)
	}
	back, err := s.follow(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	if got, err := back.Get(ctx, "t-00"); err != nil || got.Source != "a" || !got.Held() {
		t.Fatalf("a process on b after the undo: %v %v, want t-00 as a holds it", got, err)
	}

	// b still holds the first copy: clear it by moving into a fresh c
	s["c"] = sqlite("c", filepath.Join(dir, "c.db"))
	if _, err := sources.Move(ctx, a, target(s, "c"), sources.MoveOptions{}); err != nil {
		t.Fatal(err)
	}
	f, _ := s.follow(ctx, "a")
	defer f.Close()
	if _, err := f.Claim(ctx, "t-01", sources.ClaimRequest{Agent: "y"}); err != nil {
		t.Fatalf("claim through the moved origin: %v", err)
	}
	cs, _ := s.open(ctx, "c", false)
	defer cs.Close()
	err = sources.Undo(ctx, a, cs)
	if model.CodeOf(err) != model.CodeConflict || !strings.Contains(err.Error(), "t-01") {
		t.Fatalf("undo after work in the target: %v, want CONFLICT naming t-01", err)
	}
	if m, _ := cs.(sources.Movable).MoveMark(ctx); m.State != sources.MoveNone {
		t.Fatalf("a refused undo left the target %s", m.State)
	}
}

// TestMovedOriginWithNothingToClaim: a claim-next on a moved origin that
// holds nothing claimable answers the move, not "no task": an agent
// asking there is sent to the target, where the task came free again.
func TestMovedOriginWithNothingToClaim(t *testing.T) {
	ctx := context.Background()
	for name, origin := range map[string]func(context.Context, bool) (sources.Source, error){
		"sqlite":  sqlite("a", filepath.Join(t.TempDir(), "a.db")),
		"lockdir": lockDir("a", filepath.Join(t.TempDir(), "a")),
	} {
		t.Run(name, func(t *testing.T) {
			s := stores{"a": origin, "b": sqlite("b", filepath.Join(t.TempDir(), "b.db"))}
			a, ts := opened(t, s, "a", 1)
			held, err := a.Claim(ctx, ts[0].ID, sources.ClaimRequest{Agent: "x"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sources.Move(ctx, a, target(s, "b"), sources.MoveOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := a.ClaimNext(ctx, sources.ClaimRequest{Agent: "y"}); err == nil {
				t.Fatal("claim-next on the moved origin answered no task")
			} else if to, ok := sources.MovedTo(err); !ok || to != "b" {
				t.Fatalf("claim-next on the moved origin: %v, want moved to b", err)
			}
			f, err := s.follow(ctx, "a")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.Finish(ctx, held.ID, held.Claim().Token, sources.Outcome{State: model.StateBlocked, Reason: "waits"}); err != nil {
				t.Fatalf("the carried claim ends through the moved origin: %v", err)
			}
			if _, err := f.Update(ctx, held.ID, sources.MoveEdit(model.MoveUnblock, sources.Human{Actor: "ops"})); err != nil {
				t.Fatalf("unblock through the moved origin: %v", err)
			}
			got, err := f.ClaimNext(ctx, sources.ClaimRequest{Agent: "y"})
			if err != nil || got == nil || got.ID != held.ID || got.Source != "b" {
				t.Fatalf("claim-next through the moved origin: %v %v, want %s from b", got, err, held.ID)
			}
		})
	}
}

// TestMoveRefusesAnOriginWithoutAMarker: a source whose store cannot hold
// a freeze (Notion, the in-memory queue) is refused, naming what to do
// instead, and Follow hands such a source back as it is.
func TestMoveRefusesAnOriginWithoutAMarker(t *testing.T) {
	ctx := context.Background()
	mem := memsource.NewMemory("board")
	if _, err := mem.Create(ctx, sources.NewTask{ID: "t-1", Title: "one"}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s := stores{"b": sqlite("b", filepath.Join(dir, "b.db"))}
	_, err := sources.Move(ctx, mem, target(s, "b"), sources.MoveOptions{})
	if model.CodeOf(err) != model.CodeMisconfigured || !strings.Contains(err.Error(), "cannot be frozen") || !strings.Contains(err.Error(), "claimdeck copy --from board --to b") {
		t.Fatalf("move of a source without a marker: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "b.db")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the refused move made the target: %v", err)
	}
	if f := sources.Follow(mem, s.follow); f != sources.Source(mem) {
		t.Fatalf("Follow wrapped a source that cannot move: %T", f)
	}
}

// TestBadMarkerRow: a marker row edited by hand is MISCONFIGURED naming
// the row, for the move and for every call, and changes nothing.
func TestBadMarkerRow(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a.db")
	s := stores{"a": sqlite("a", path), "b": sqlite("b", filepath.Join(t.TempDir(), "b.db"))}
	a, ts := opened(t, s, "a", 1)
	if err := a.(sources.Movable).Freeze(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, state := range []string{"melted", "none"} {
		if _, err := db.Exec("UPDATE claimdeck_moves SET state = ?", state); err != nil {
			t.Fatal(err)
		}
		badRow(t, ctx, s, a, ts[0].ID, state)
	}
}

func badRow(t *testing.T, ctx context.Context, s stores, a sources.Source, id, state string) {
	t.Helper()
	for what, call := range map[string]func() error{
		"move":  func() error { _, err := sources.Move(ctx, a, target(s, "b"), sources.MoveOptions{}); return err },
		"claim": func() error { _, err := a.Claim(ctx, id, sources.ClaimRequest{Agent: "x"}); return err },
		"mark":  func() error { _, err := a.(sources.Movable).MoveMark(ctx); return err },
	} {
		if err := call(); model.CodeOf(err) != model.CodeMisconfigured || !strings.Contains(err.Error(), "claimdeck_moves") || !strings.Contains(err.Error(), state) {
			t.Errorf("%s under a marker row of state %s: %v, want MISCONFIGURED naming the row", what, state, err)
		}
	}
	if now, err := a.Get(sources.PastMark(ctx), id); err != nil || now.Held() {
		t.Fatalf("the task changed under a bad marker row: %v %v", now, err)
	}
}

// TestMoveIntoATargetThatCannotImport: a target without conditional writes
// (Notion, memory) is refused before the origin is frozen.
func TestMoveIntoATargetThatCannotImport(t *testing.T) {
	ctx := context.Background()
	s := stores{"a": sqlite("a", filepath.Join(t.TempDir(), "a.db")), "board": func(context.Context, bool) (sources.Source, error) {
		return memsource.NewMemory("board"), nil
	}}
	a, _ := opened(t, s, "a", 1)
	_, err := sources.Move(ctx, a, target(s, "board"), sources.MoveOptions{})
	if model.CodeOf(err) != model.CodeMisconfigured || !strings.Contains(err.Error(), "cannot take a moved queue") {
		t.Fatalf("move into a source that cannot import: %v", err)
	}
	if m, err := a.(sources.Movable).MoveMark(ctx); err != nil || m.State != sources.MoveNone {
		t.Fatalf("the refused move left the origin %s (%v)", m.State, err)
	}
}

// TestMoveEveryOtherPair runs the lane on the pairs the tests above leave
// out: SQLite, PostgreSQL (two tables of one database) and lock
// directories into their own kind, and PostgreSQL with lock directories.
func TestMoveEveryOtherPair(t *testing.T) {
	dsn := pgDSN(t)
	kinds := map[string]func(name, dir string) func(context.Context, bool) (sources.Source, error){
		"sqlite": func(name, dir string) func(context.Context, bool) (sources.Source, error) {
			return sqlite(name, filepath.Join(dir, name+".db"))
		},
		"postgres": func(name, _ string) func(context.Context, bool) (sources.Source, error) {
			return postgres(name, dsn, pgTable())
		},
		"lockdir": func(name, dir string) func(context.Context, bool) (sources.Source, error) {
			return lockDir(name, filepath.Join(dir, name))
		},
	}
	for _, pair := range [][2]string{{"sqlite", "sqlite"}, {"postgres", "postgres"}, {"lockdir", "lockdir"}, {"postgres", "lockdir"}, {"lockdir", "postgres"}} {
		t.Run(pair[0]+"-"+pair[1], func(t *testing.T) {
			dir := t.TempDir()
			s := stores{"from": kinds[pair[0]]("from", dir), "to": kinds[pair[1]]("to", dir)}
			runLane(t, s, "from", "to")
		})
	}
}

// TestMoveNeverShortensALease: a lock directory keeps lease ends to the
// microsecond, SQLite to the millisecond. A claim moved from one to the
// other keeps its lease to its end or a little past it, never less — cut
// short, a rescue took a task in the target while its holder's lease
// still ran (the move lane's history was not linearizable, 2 runs in 24
// under load) — and an untouched move can still be undone.
func TestMoveNeverShortensALease(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	// a clock 0.834 ms past a millisecond, so that the lease end has digits
	// SQLite does not keep
	clock := func() time.Time { return time.Now().Truncate(time.Millisecond).Add(834 * time.Microsecond) }
	s := stores{
		"locks": func(ctx context.Context, prepare bool) (sources.Source, error) {
			return lockdir.Open(lockdir.Config{Name: "locks", Path: filepath.Join(dir, "locks"), MustExist: !prepare, Lease: lease, Grace: grace, Now: clock})
		},
		"local": sqlite("local", filepath.Join(dir, "queue.db")),
	}
	locks, _ := opened(t, s, "locks", 2)
	held, err := locks.Claim(ctx, "t-00", sources.ClaimRequest{Agent: "a1", Lease: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	until := held.Claim().Expires.Time()
	if until.Truncate(time.Millisecond).Equal(until) {
		t.Fatalf("the lease ends at %s, on a millisecond: the test proves nothing", until)
	}
	if _, err := sources.Move(ctx, locks, target(s, "local"), sources.MoveOptions{}); err != nil {
		t.Fatal(err)
	}
	local, _ := s.open(ctx, "local", false)
	defer local.Close()
	got, err := local.Get(ctx, "t-00")
	if err != nil {
		t.Fatal(err)
	}
	end := got.Claim().Expires.Time()
	if end.Before(until) || end.Sub(until) >= time.Millisecond {
		t.Fatalf("the moved lease ends at %s, want %s rounded up to the millisecond", end.Format(time.RFC3339Nano), until.Format(time.RFC3339Nano))
	}
	if err := sources.Undo(ctx, locks, local); err != nil {
		t.Fatalf("undo of an untouched move: %v", err)
	}
}
