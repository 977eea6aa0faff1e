package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// querier is what both drivers offer: pgx natively for PostgreSQL (for its
// speed and LISTEN/NOTIFY) and database/sql for SQLite.
type querier interface {
	exec(ctx context.Context, q string, args ...any) (int64, error)
	query(ctx context.Context, q string, args ...any) (rowsIter, error)
	queryRow(ctx context.Context, q string, args ...any) rowScanner
}

type conn interface {
	querier
	// tx runs fn in a transaction that holds the write lock from its start.
	tx(ctx context.Context, fn func(q querier) error) error
	close()
}

type rowScanner interface{ Scan(dest ...any) error }

type rowsIter interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

var errNoRows = errors.New("no rows")

func isNoRows(err error) bool {
	return errors.Is(err, errNoRows) || errors.Is(err, sql.ErrNoRows) || errors.Is(err, pgx.ErrNoRows)
}

// pgQ runs statements on a pool or inside a transaction.
type pgQ struct {
	db interface {
		Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
		Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
		QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	}
}

func (p pgQ) exec(ctx context.Context, q string, args ...any) (int64, error) {
	tag, err := p.db.Exec(ctx, q, args...)
	return tag.RowsAffected(), err
}

func (p pgQ) query(ctx context.Context, q string, args ...any) (rowsIter, error) {
	return p.db.Query(ctx, q, args...)
}

func (p pgQ) queryRow(ctx context.Context, q string, args ...any) rowScanner {
	return p.db.QueryRow(ctx, q, args...)
}

type pgConn struct {
	pgQ
	pool *pgxpool.Pool
}

func (c *pgConn) tx(ctx context.Context, fn func(q querier) error) error {
	return pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error { return fn(pgQ{db: tx}) })
}

func (c *pgConn) close() { c.pool.Close() }

// sqlQ runs statements through database/sql, rewriting PostgreSQL's $N
// placeholders to SQLite's ?N so that one text serves both dialects.
type sqlQ struct {
	db interface {
		ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
		QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
		QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	}
}

func (s sqlQ) exec(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := s.db.ExecContext(ctx, questionMarks(q), args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (s sqlQ) query(ctx context.Context, q string, args ...any) (rowsIter, error) {
	rows, err := s.db.QueryContext(ctx, questionMarks(q), args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

func (s sqlQ) queryRow(ctx context.Context, q string, args ...any) rowScanner {
	return s.db.QueryRowContext(ctx, questionMarks(q), args...)
}

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { _ = r.Rows.Close() }

type sqlConn struct {
	sqlQ
	db *sql.DB
}

func (c *sqlConn) tx(ctx context.Context, fn func(q querier) error) error {
	tx, err := c.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE, from the DSN's _txlock
	if err != nil {
		return err
	}
	if err := fn(sqlQ{db: tx}); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

func (c *sqlConn) close() { _ = c.db.Close() }

// questionMarks turns $1 into ?1 outside string literals.
func questionMarks(q string) string {
	if !strings.Contains(q, "$") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q))
	inString := false
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'':
			inString = !inString
		case c == '$' && !inString && i+1 < len(q) && q[i+1] >= '0' && q[i+1] <= '9':
			c = '?'
		}
		b.WriteByte(c)
	}
	return b.String()
}
