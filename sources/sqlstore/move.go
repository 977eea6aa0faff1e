package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// A move's marker is a row of claimdeck_moves, keyed by the table's tag
// as the audit trail is. Freeze adds guard triggers that refuse every
// write of the table, and every audit entry for it, while the row exists:
// the refusal is part of the write's own statement, so no write can land
// after the freeze, whichever process sends it (claimdeck, ntask, the
// seed's own SQL). The triggers stay after a thaw: with no row they let
// everything through.

const (
	movesTable = "claimdeck_moves"
	// guardMessage is in the error every guard trigger raises.
	guardMessage = "claimdeck move guard"
	// guardState is the SQLSTATE PostgreSQL's guard raises.
	guardState = "CDMV1"
)

var _ sources.Movable = (*Store)(nil)

// moveDDL is what Freeze makes before it marks: the marker table, the
// guard function (PostgreSQL) and the triggers. On PostgreSQL each runs on
// its own, outside the freeze: each takes one table's lock and holds no
// other, so none can deadlock with a writer (a claim locks the audit
// table, then the task table; a person's action the other way round).
func (s *Store) moveDDL() []string {
	if s.d.name == postgres.name {
		return []string{
			fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (tbl TEXT PRIMARY KEY, state TEXT NOT NULL, target TEXT NOT NULL, at timestamptz NOT NULL)", movesTable),
			// Run as its owner, so that a role allowed to write the table but
			// not to read the marker is refused by the marker all the same.
			fmt.Sprintf(`CREATE OR REPLACE FUNCTION claimdeck_move_guard() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
	k text;
	m record;
BEGIN
	IF TG_LEVEL = 'ROW' THEN k := NEW.tbl; ELSE k := TG_ARGV[0]; END IF;
	SELECT state, target INTO m FROM %s WHERE tbl = k;
	IF FOUND THEN
		RAISE EXCEPTION USING ERRCODE = '%s', MESSAGE = '%s: ' || k || ' is ' || m.state || ' (' || m.target || ')';
	END IF;
	IF TG_LEVEL = 'ROW' THEN RETURN NEW; END IF;
	RETURN NULL;
END $$`, movesTable, guardState, guardMessage),
			fmt.Sprintf("CREATE OR REPLACE TRIGGER claimdeck_move_guard BEFORE INSERT OR UPDATE OR DELETE ON %s FOR EACH STATEMENT EXECUTE FUNCTION claimdeck_move_guard(%s)", s.table, pgString(s.tag)),
			"CREATE OR REPLACE TRIGGER claimdeck_move_guard BEFORE INSERT ON claimdeck_audit FOR EACH ROW EXECUTE FUNCTION claimdeck_move_guard()",
		}
	}
	guard := func(name, event, table, key string) string {
		return fmt.Sprintf(`CREATE TRIGGER IF NOT EXISTS "%s" BEFORE %s ON %s WHEN EXISTS (SELECT 1 FROM %s WHERE tbl = %s) BEGIN SELECT RAISE(ABORT, '%s'); END`,
			name, event, table, movesTable, key, guardMessage)
	}
	key := pgString(s.tag)
	return []string{
		fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (tbl TEXT PRIMARY KEY, state TEXT NOT NULL, target TEXT NOT NULL, at TEXT NOT NULL)", movesTable),
		guard(s.tag+"_move_guard_insert", "INSERT", s.table, key),
		guard(s.tag+"_move_guard_update", "UPDATE", s.table, key),
		guard(s.tag+"_move_guard_delete", "DELETE", s.table, key),
		guard("claimdeck_audit_move_guard", "INSERT", "claimdeck_audit", "NEW.tbl"),
	}
}

// guarded reports whether err is a guard trigger's refusal.
func guarded(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == guardState {
		return true
	}
	return err != nil && strings.Contains(err.Error(), guardMessage)
}

// guardAnswer is the answer to a write a guard trigger refused.
func (s *Store) guardAnswer(op, id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m, err := s.MoveMark(ctx)
	if model.CodeOf(err) == model.CodeMisconfigured {
		return err // a marker that does not read: someone must fix it
	}
	if err != nil || m.State == sources.MoveNone {
		// Thawed since, or unreadable: a retry will tell.
		return model.Errorf(model.CodeAPIError, op, id, "source %s refused the write for a move that is no longer marked: try again", s.cfg.Name)
	}
	return sources.MarkAnswer(op, id, s.cfg.Name, m)
}

// MoveMark reads the table's move marker.
func (s *Store) MoveMark(ctx context.Context) (sources.MoveMark, error) {
	m, err := s.readMark(ctx, s.db)
	if err != nil {
		return m, s.classify("move", "", err)
	}
	s.marks.Note(m)
	return m, nil
}

func (s *Store) readMark(ctx context.Context, q querier) (sources.MoveMark, error) {
	var m sources.MoveMark
	if s.d.name == postgres.name {
		// A role that may not read the marker table is one no move
		// concerns (the guard triggers run as their owner).
		var there bool
		if err := q.queryRow(ctx, "SELECT CASE WHEN to_regclass($1) IS NULL THEN false ELSE has_table_privilege($1::text, 'SELECT') END", movesTable).Scan(&there); err != nil || !there {
			return m, err
		}
	}
	var state string
	var at any
	err := q.queryRow(ctx, "SELECT state, target, at FROM "+movesTable+" WHERE tbl = $1", s.tag).Scan(&state, &m.To, &at)
	switch {
	case isNoRows(err):
		return m, nil
	case err != nil && s.d.name != postgres.name && strings.Contains(err.Error(), "no such table"):
		return m, nil
	case err != nil:
		return m, err
	}
	if m.State, err = sources.ParseMoveState(state); err != nil || m.State == sources.MoveNone || m.To == "" {
		return sources.MoveMark{}, model.Errorf(model.CodeMisconfigured, "move", "", "the row of %s for %s holds state %q towards %q, not a move marker (want frozen or moved, and a target): delete it only if no move is under way", movesTable, s.tag, state, m.To)
	}
	m.At, err = parseDBTime(at)
	return m, err
}

// readGuard sends a read of a moved table to its target.
func (s *Store) readGuard(ctx context.Context, op, id string, fresh bool) error {
	return s.marks.ReadGuard(ctx, op, id, s.cfg.Name, fresh, s.MoveMark)
}

// Freeze marks the table frozen for a move to to: see sources.Movable.
func (s *Store) Freeze(ctx context.Context, to string) error {
	const op = "freeze"
	if _, err := s.writable(op, ""); err != nil {
		return err
	}
	pg := s.d.name == postgres.name
	if pg {
		for _, stmt := range s.moveDDL() {
			if _, err := s.db.exec(ctx, stmt); err != nil {
				return s.classify(op, "", fmt.Errorf("freezing for the move (the database role must be allowed to create a table, a function and triggers): %w\nin: %s", err, firstLine(stmt)))
			}
		}
	}
	var answer error
	err := s.db.tx(ctx, func(q querier) error {
		if pg {
			// Writers under way finish first (a comment, which writes the
			// audit trail alone, takes this table's lock too); later ones
			// wait for the mark, and their trigger refuses them.
			if _, err := q.exec(ctx, fmt.Sprintf("LOCK TABLE %s IN SHARE ROW EXCLUSIVE MODE", s.table)); err != nil {
				return err
			}
		}
		if !pg {
			// SQLite has one writer: this transaction holds the write
			// lock from its start, so the guards are made in it.
			for _, stmt := range s.moveDDL() {
				if _, err := q.exec(ctx, stmt); err != nil {
					return fmt.Errorf("%w\nin: %s", err, firstLine(stmt))
				}
			}
		}
		m, err := s.readMark(ctx, q)
		if err != nil {
			return err
		}
		switch {
		case m.State == sources.MoveFrozen && m.To == to:
			return nil
		case m.State != sources.MoveNone:
			answer = model.Errorf(model.CodeConflict, op, "", "source %s is already %s (towards %s): nothing was done", s.cfg.Name, m.State, m.To)
			return answer
		}
		_, err = q.exec(ctx, "INSERT INTO "+movesTable+" (tbl, state, target, at) VALUES ($1, $2, $3, "+s.d.now+")", s.tag, sources.MoveFrozen.String(), to)
		return err
	})
	if answer != nil {
		return answer
	}
	if err != nil {
		return s.classify(op, "", fmt.Errorf("freezing for the move: %w", err))
	}
	_, err = s.MoveMark(ctx)
	return err
}

// MarkMoved turns the freeze towards to into the moved marker.
func (s *Store) MarkMoved(ctx context.Context, to string) error {
	n, err := s.db.exec(ctx, "UPDATE "+movesTable+" SET state = $1, at = "+s.d.now+" WHERE tbl = $2 AND target = $3", sources.MoveDone.String(), s.tag, to)
	if err != nil {
		return s.classify("move", "", err)
	}
	if n == 0 {
		return model.Errorf(model.CodeConflict, "move", "", "source %s is not frozen for a move to %s: nothing was marked", s.cfg.Name, to)
	}
	_, err = s.MoveMark(ctx)
	return err
}

// Thaw removes the marker.
func (s *Store) Thaw(ctx context.Context) error {
	m, err := s.MoveMark(ctx)
	if model.CodeOf(err) == model.CodeMisconfigured {
		return err // a marker that does not read: someone must fix it
	}
	if err != nil || m.State == sources.MoveNone {
		return err
	}
	if _, err := s.db.exec(ctx, "DELETE FROM "+movesTable+" WHERE tbl = $1", s.tag); err != nil {
		return s.classify("thaw", "", err)
	}
	_, err = s.MoveMark(ctx)
	return err
}
